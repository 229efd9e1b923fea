"""The ``portfolio`` warm-starter: what it suggests, what it leaves out, and its cache."""

from __future__ import annotations

import json
import logging
from importlib import metadata as importlib_metadata
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import automl_warmstart_portfolio.plugin
from automl_core.contracts import MetaData, TaskDescription, WarmStarter
from automl_core.errors import AutoMLError, PluginError
from automl_core.plugins import ENTRY_POINT_GROUP, load_plugins
from automl_engine.metastore import metadata_resolver, save_metadata
from automl_spaces.pool_space import PoolSpace
from automl_warmstart_portfolio import PortfolioWarmStarter, greedy, greedy_portfolio, starter


def toy_metadata(seed: int = 0) -> MetaData:
    """Twelve datasets x ten candidates of a pool, a fifth not run; train and test splits."""
    rng = np.random.default_rng(seed)
    performance = rng.random((12, 10))
    performance[rng.random(performance.shape) < 0.2] = np.nan
    datasets = [f"D{i}" for i in range(12)]
    return MetaData(
        datasets,
        [{"candidate": j} for j in range(10)],
        performance,
        splits={"train": datasets[:8], "test": datasets[8:]},
        space="toy",
    )


def toy_space(offered: int = 10) -> PoolSpace:
    available = np.arange(10) < offered
    return PoolSpace("toy", np.eye(10), available=available)


def task(
    dataset: str = "new", aliases: tuple[str, ...] = (), resolve: Any = None
) -> TaskDescription:
    """A table-lookup task; ``<benchmark>:<id>`` names its benchmark, as the runner's do;
    ``resolve`` is its meta-data resolver (a run binds one to its registry)."""
    benchmark = dataset.split(":", 1)[0] if ":" in dataset else "toy"
    return TaskDescription(dataset, "benchmark", 0, 0, "loss", {}, aliases, benchmark, resolve)


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the greedy constructions (their sizes), i.e. every build not served by a cache."""
    calls: list[int] = []
    original = greedy.greedy_portfolio

    def counting(losses: np.ndarray, size: int) -> list[int]:
        calls.append(size)
        return original(losses, size)

    monkeypatch.setattr(greedy, "greedy_portfolio", counting)
    return calls


# -- what it suggests ---------------------------------------------------------------------------


def test_it_suggests_the_greedy_portfolio_in_order_with_its_training_curve():
    metadata = toy_metadata()
    start = PortfolioWarmStarter(metadata=metadata, size=6).suggest(task(), toy_space(), None)
    expected = greedy_portfolio(metadata.performance, 6)
    assert [c["candidate"] for c in start.configs] == expected
    assert start.info["portfolio"] == expected and start.info["size"] == 6
    assert start.info["datasets"] == metadata.datasets and start.info["excluded"] == []
    curve = start.info["loss_curve"]
    assert len(curve) == 6 and curve == sorted(curve, reverse=True)
    first = PortfolioWarmStarter(metadata=metadata, size=6).suggest(task(), toy_space(), 2)
    assert first.configs == start.configs[:2]


def test_members_the_space_does_not_offer_are_skipped_not_replaced():
    metadata = toy_metadata()
    members = greedy_portfolio(metadata.performance, 8)
    start = PortfolioWarmStarter(metadata=metadata, size=8).suggest(task(), toy_space(5), 3)
    assert [c["candidate"] for c in start.configs] == [m for m in members if m < 5][:3]
    assert start.info["invalid"] == sum(
        m >= 5 for m in members[: members.index(start.info["suggested"][-1])]
    )


def test_exclude_and_exclude_self_leave_datasets_out_of_the_build():
    metadata = toy_metadata()
    own = task("openml:d3", aliases=("d3",))
    start = PortfolioWarmStarter(metadata=metadata, size=4, exclude=["D5"]).suggest(
        own, toy_space(), None
    )
    kept = [d for d in metadata.datasets if d not in ("D3", "D5")]
    assert start.info["excluded"] == ["D3", "D5"] and start.info["datasets"] == kept
    rows = [metadata.row(d) for d in kept]
    assert start.info["portfolio"] == greedy_portfolio(metadata.performance[rows], 4)
    everything = PortfolioWarmStarter(metadata=metadata, size=4, exclude_self=False)
    assert everything.suggest(own, toy_space(), None).info["excluded"] == []


def test_a_split_restricts_the_build_to_its_datasets():
    metadata = toy_metadata()
    start = PortfolioWarmStarter(metadata=metadata, size=3, split="train").suggest(
        task("D9"), toy_space(), None
    )
    assert start.info["datasets"] == metadata.splits["train"]
    assert start.info["portfolio"] == greedy_portfolio(metadata.performance[:8], 3)
    with pytest.raises(AutoMLError, match=r"split 'valid' is not a split.*test, train"):
        PortfolioWarmStarter(metadata=metadata, split="valid").suggest(task(), toy_space(), 1)


def test_nothing_left_to_build_on_is_an_error():
    metadata = toy_metadata()
    with pytest.raises(AutoMLError, match="no dataset"):
        PortfolioWarmStarter(metadata=metadata, exclude=metadata.datasets).suggest(
            task(), toy_space(), 1
        )


def test_a_meta_data_folder_is_accepted(tmp_path: Path):
    metadata = toy_metadata()
    save_metadata(metadata, tmp_path / "toy")
    # a run hands its resolver (bound to its registry); folders need no registered source
    resolve = metadata_resolver(load_plugins(entry_points=False))
    start = PortfolioWarmStarter(metadata=str(tmp_path / "toy"), size=3).suggest(
        task(resolve=resolve), toy_space(), None
    )
    assert start.info["portfolio"] == greedy_portfolio(metadata.performance, 3)
    with pytest.raises(PluginError, match="not made by a run; pass a MetaData"):
        PortfolioWarmStarter(metadata=str(tmp_path / "toy"), size=3).suggest(
            task(), toy_space(), None
        )


@pytest.mark.parametrize(
    ("params", "name"),
    [
        ({"metadata": 5}, "metadata"),
        ({"metadata": "oboe", "size": 0}, "size"),
        ({"metadata": "oboe", "size": 2.5}, "size"),
        ({"metadata": "oboe", "split": ""}, "split"),
        ({"metadata": "oboe", "exclude": "D1"}, "exclude"),
        ({"metadata": "oboe", "exclude_self": 1}, "exclude_self"),
        ({"metadata": "oboe", "cache": "no"}, "cache"),
        ({"metadata": "oboe", "metadata_params": "x"}, "metadata_params"),
    ],
)
def test_bad_parameters_are_refused_naming_them(params, name):
    with pytest.raises(ValueError, match=f"^{name}: "):
        PortfolioWarmStarter(**params)


def test_registered_as_portfolio_through_the_entry_point():
    points = {p.name: p.value for p in importlib_metadata.entry_points(group=ENTRY_POINT_GROUP)}
    assert points.get("warmstart-portfolio") == "automl_warmstart_portfolio.plugin"
    plugins = load_plugins(extra=[automl_warmstart_portfolio.plugin], entry_points=False)
    built = plugins.create("warmstarter", "portfolio", {"metadata": "oboe", "size": 8})
    assert isinstance(built, WarmStarter) and built.size == 8
    assert plugins.get("warmstarter", "portfolio").parameters()["size"] == 32


# -- the cache ----------------------------------------------------------------------------------


def suggest(metadata: MetaData, **params: object) -> dict:
    return PortfolioWarmStarter(metadata=metadata, **params).suggest(task(), toy_space(), None).info


def test_a_second_build_comes_from_memory_then_from_disk(builds, own_portfolio_cache):
    metadata = toy_metadata()
    first = suggest(metadata, size=5)
    assert builds == [5] and first["cache"] == "built"
    (path,) = (own_portfolio_cache / "portfolios").glob("*.json")
    stored = json.loads(path.read_text())
    assert stored["members"] == first["portfolio"] and stored["key"] == first["key"]
    assert stored["configs"] == [{"candidate": m} for m in first["portfolio"]]
    assert stored["built_from"]["datasets"] == metadata.datasets
    assert stored["built_from"]["size"] == 5

    again = suggest(metadata, size=5)
    assert builds == [5] and again["cache"] == "memory" and again["portfolio"] == first["portfolio"]
    starter._MEMORY.clear()  # a new process
    from_disk = suggest(toy_metadata(), size=5)  # an equal MetaData: the same fingerprint
    assert builds == [5] and from_disk["cache"] == "disk"
    assert from_disk["portfolio"] == first["portfolio"]
    assert from_disk["loss_curve"] == pytest.approx(first["loss_curve"])


def test_what_determines_the_portfolio_determines_the_cache_entry(builds, own_portfolio_cache):
    metadata = toy_metadata()
    keys = {
        suggest(metadata, size=5)["key"],
        suggest(metadata, size=6)["key"],
        suggest(metadata, size=5, exclude=["D0"])["key"],
        suggest(metadata, size=5, split="train")["key"],
        suggest(toy_metadata(seed=1), size=5)["key"],
    }
    assert len(keys) == 5 and len(builds) == 5
    assert len(list((own_portfolio_cache / "portfolios").glob("*.json"))) == 5


@pytest.mark.parametrize("damage", ["{not json", '{"format": 1}', "members"])
def test_a_corrupt_cache_file_is_rebuilt_with_a_warning(
    builds, own_portfolio_cache, caplog, damage
):
    metadata = toy_metadata()
    first = suggest(metadata, size=5)
    (path,) = (own_portfolio_cache / "portfolios").glob("*.json")
    if damage == "members":  # valid JSON, but members that are not of this meta-data
        document = json.loads(path.read_text())
        document["members"] = [99, 100, 101, 102, 103]
        damage = json.dumps(document)
    path.write_text(damage)
    starter._MEMORY.clear()
    with caplog.at_level(logging.WARNING):
        rebuilt = suggest(metadata, size=5)
    assert "rebuilding the corrupt cache file" in caplog.text
    assert builds == [5, 5] and rebuilt["cache"] == "built"
    assert rebuilt["portfolio"] == first["portfolio"]
    assert json.loads(path.read_text())["members"] == first["portfolio"]


def test_without_the_cache_every_suggestion_builds(builds, own_portfolio_cache):
    metadata = toy_metadata()
    suggest(metadata, size=4, cache=False)
    suggest(metadata, size=4, cache=False)
    assert builds == [4, 4] and not (own_portfolio_cache / "portfolios").exists()


def test_an_unwritable_cache_only_costs_a_warning(builds, own_portfolio_cache, caplog):
    (own_portfolio_cache / "portfolios").write_text("a file where the folder should be")
    with caplog.at_level(logging.WARNING):
        info = suggest(toy_metadata(), size=4)
    assert info["cache"] == "built" and "could not cache" in caplog.text


def test_without_metadata_a_benchmark_task_uses_its_own_and_the_sklearn_space_oboes():
    from types import SimpleNamespace

    from automl_core.contracts import TaskDescription
    from automl_warmstart_portfolio.starter import default_metadata

    lookup = TaskDescription("oboe:3", "benchmark", 0, 0, "balanced_error", benchmark="oboe")
    assert default_metadata(lookup, SimpleNamespace(name="oboe")) == "oboe"
    data = TaskDescription("keel:pima", "classification", 500, 8, "balanced_accuracy")
    space = SimpleNamespace(name="autosklearn-classification")
    assert default_metadata(data, space) == "oboe-autosklearn"
    with pytest.raises(ValueError, match="no default meta-data for the space 'toy'"):
        default_metadata(data, SimpleNamespace(name="toy"))


def test_a_starter_without_metadata_takes_each_tasks_own_default():
    loaded: list[str] = []

    def resolve(reference, params=None):
        loaded.append(str(reference))
        return toy_metadata(seed=len(loaded))

    portfolio = PortfolioWarmStarter(size=3, cache=False)
    first = portfolio.suggest(task("bench1:D1", resolve=resolve), toy_space(), None)
    second = portfolio.suggest(task("bench2:D1", resolve=resolve), toy_space(), None)
    portfolio.suggest(task("bench1:D2", resolve=resolve), toy_space(), None)
    assert loaded == ["bench1", "bench2"]  # each task's own benchmark, each loaded once
    assert first.info["metadata"] == "bench1" and second.info["metadata"] == "bench2"
    assert portfolio.metadata is None
