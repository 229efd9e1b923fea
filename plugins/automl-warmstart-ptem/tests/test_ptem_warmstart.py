"""The warm-starter ``ptem``: it ranks the sources, hands the pick to the latent surrogate,
trains its ranker once, and never ranks a target by what it learned on it."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from ptem_synthetic import kinds_metadata
from test_ptem_labels import SMALL

from automl_core.contracts import MetaData, TaskDescription
from automl_core.errors import AutoMLError
from automl_engine.history import RunHistory
from automl_engine.metastore import save_metadata
from automl_engine.recipe import parse_recipe
from automl_engine.run_folder import HISTORY_FILE
from automl_engine.runner import run
from automl_engine.testing import Component, parametrize_with_checks
from automl_engine.testing.spaces import loss_of, pipeline_space
from automl_warmstart_ptem import labels
from automl_warmstart_ptem.warmstart import RankedPTEM, with_pool

SOURCES = ["d0", "d1", "d2", "d3"]
LABELS = {
    "label_trials": SMALL.trials,
    "label_runs": SMALL.runs,
    "label_checkpoints": SMALL.checkpoints,
    "label_search": dict(SMALL.search),
}


def kind_scores(benchmark, reference, target, source, settings, plugins=None):
    """Labels as BO runs on the kinds family give them in the large (a source of the
    target's kind leaves less regret), without the runs: fast, for the tests of what the
    warm-starter does with labels."""
    return abs(int(target[1:]) % 2 - int(source[1:]) % 2) + int(source[1:]) / 100


@pytest.fixture
def quick_labels(monkeypatch):
    calls = []

    def measured(*args, **kwargs):
        calls.append(args[2:4])
        return kind_scores(*args, **kwargs)

    monkeypatch.setattr(labels, "pair_score", measured)
    return calls


def task_on(dataset: str, **given) -> TaskDescription:
    return TaskDescription(
        dataset=dataset, task="classification", n_rows=100, n_features=4, metric="error", **given
    )


def test_the_pick_is_a_source_of_the_targets_kind_handed_to_the_surrogate(quick_labels):
    metadata = kinds_metadata(n=12)
    starter = RankedPTEM(metadata=metadata, sources=[f"d{i}" for i in range(10)], **LABELS)
    suggested = starter.suggest(task_on("d11"), metadata.pool, None)
    state = suggested.surrogate_state
    assert suggested.configs == []
    assert state["metadata"] is metadata and state["source"] in {"d1", "d3", "d5", "d7", "d9"}
    assert len(quick_labels) == 90
    assert suggested.info["source"] == state["source"]
    assert suggested.info["ranked"][0]["dataset"] == state["source"]


def test_the_ranker_is_trained_once_and_a_target_among_the_sources_is_left_out(quick_labels):
    metadata = kinds_metadata()
    calls = quick_labels
    first = RankedPTEM(metadata=metadata, sources=SOURCES, **LABELS).suggest(
        task_on("d7"), metadata.pool, None
    )
    assert len(calls) == 12  # 4 sources: each the pseudo-target of the 3 others
    calls.clear()
    again = RankedPTEM(metadata=metadata, sources=SOURCES, **LABELS)
    cached = again.suggest(task_on("d7"), metadata.pool, None)
    assert calls == []  # the cached ranker
    assert cached.surrogate_state["source"] == first.surrogate_state["source"]
    assert cached.info == first.info
    # d1 is a source: its ranker learns from the 3 others only, already labelled
    suggested = again.suggest(task_on("d1"), metadata.pool, None)
    assert calls == [] and suggested.surrogate_state["source"] != "d1"
    assert suggested.info["excluded"] == ["d1"] and suggested.info["sources"] == 3


def test_a_run_with_warmstart_ptem_and_the_latent_surrogate(tmp_path, quick_labels):
    folder = tmp_path / "meta"
    save_metadata(kinds_metadata(), folder)
    sources = [f"d{i}" for i in range(6)]  # a leaf takes 5 rows: 4 sources make 12 rows
    params = {"metadata": str(folder), "sources": sources, **LABELS}
    recipe = parse_recipe(
        {
            "name": "ptem",
            "task": {
                "benchmark": {"name": "table", "params": {"path": str(folder)}},
                "dataset": "d7",
            },
            "search": {
                "strategy": "smbo",
                "params": {"initial_per_component": 1},
                "surrogate": {"name": "latent", "params": {"steps": 30, "pretrain_epochs": 200}},
            },
            "warmstart": {"starter": "ptem", "params": params},
            "budget": {"trials": 8},
            "seed": 0,
        }
    )
    summary = run(recipe, tmp_path / "run")
    with RunHistory(tmp_path / "run" / HISTORY_FILE) as history:
        record = history.get_meta("warmstart")
        trials = history.trials()
    assert record["info"]["source"] in {"d1", "d3", "d5"}
    # the surrogate pre-trained the pick's PTEM (the labels were faked: no other was)
    pretrained = list((tmp_path / "cache" / "latent").rglob("*.npz"))
    assert [p.name.split("-")[0] for p in pretrained] == [record["info"]["source"]]
    assert len(trials) == 8 and any(t.trial.origin == "acquisition" for t in trials)
    assert 0 <= summary.benchmark["normalised_regret"] <= 1


def test_a_random_pick_trains_no_ranker_and_is_the_same_for_a_target(monkeypatch):
    metadata = kinds_metadata()
    monkeypatch.setattr(labels, "pair_score", None)  # no label run may happen
    starter = RankedPTEM(metadata=metadata, sources=SOURCES, pick="random", seed=4)
    picks = [starter.suggest(task_on(t), metadata.pool, None) for t in ("d6", "d7", "d6")]
    assert picks[0].surrogate_state == picks[2].surrogate_state
    assert picks[0].info["pick"] == "random"
    drawn = {
        RankedPTEM(metadata=metadata, sources=SOURCES, pick="random", seed=seed)
        .suggest(task_on("d7"), metadata.pool, None)
        .surrogate_state["source"]
        for seed in range(8)
    }
    assert len(drawn) > 1 and drawn <= set(SOURCES)


def test_what_the_warm_starter_cannot_work_with_is_said():
    metadata = kinds_metadata()
    with pytest.raises(ValueError, match="at least 3 datasets"):
        RankedPTEM(metadata=metadata, sources=["d0", "d1"])
    with pytest.raises(ValueError, match="pick: got 'best'"):
        RankedPTEM(metadata=metadata, pick="best")
    with pytest.raises(ValueError, match="max_sources"):
        RankedPTEM(metadata=metadata, max_sources=2)
    with pytest.raises(AutoMLError, match="name the meta-data"):
        RankedPTEM().suggest(task_on("mine"), metadata.pool, None)
    with pytest.raises(AutoMLError, match="not datasets of the meta-data"):
        RankedPTEM(metadata=metadata, sources=["d0", "d1", "x9"]).suggest(
            task_on("d7"), metadata.pool, None
        )
    starter = RankedPTEM(metadata=metadata, sources=["d0", "d1", "d7"], **LABELS)
    with pytest.raises(AutoMLError, match="2 source datasets"):
        starter.suggest(task_on("d7"), metadata.pool, None)
    with pytest.raises(AutoMLError, match="share no column"):
        starter = RankedPTEM(metadata=metadata, sources=SOURCES, **LABELS)
        starter.suggest(task_on("mine", metafeatures={"other": 1.0}), metadata.pool, None)
    bare = kinds_metadata()
    bare.metafeatures = None
    with pytest.raises(AutoMLError, match="no meta-features"):
        RankedPTEM(metadata=bare, sources=SOURCES).suggest(task_on("d7"), bare.pool, None)


@parametrize_with_checks([Component("warmstarter", "ptem", params={"max_sources": 3})])
def test_conformance(component, check, monkeypatch):
    monkeypatch.setattr(labels, "pair_score", lambda *args, **kwargs: float(len(args[2])))
    check(component)


def pipeline_metadata(n: int = 5) -> MetaData:
    """Meta-data with no pool whose configurations are of the kit's pipeline space, as
    oboe-autosklearn's are of autosklearn-classification."""
    space = pipeline_space()
    configs = space.sample(np.random.default_rng(0), 30)
    rng = np.random.default_rng(1)
    datasets = [f"p{i}" for i in range(n)]
    losses = np.array([loss_of(space, c) for c in configs])
    return MetaData(
        datasets=datasets,
        configs=configs,
        performance=np.vstack([losses + rng.normal(0, 0.05, len(configs)) for _ in datasets]),
        metafeatures=pd.DataFrame({"size": np.arange(n, dtype=float)}, index=datasets),
        space=space.name,
    )


def test_meta_data_of_a_pipeline_space_is_given_a_pool_of_its_configurations():
    metadata, space = pipeline_metadata(), pipeline_space()
    tabled = with_pool(metadata, space, "mine")
    assert np.array_equal(tabled.performance, metadata.performance)
    assert np.array_equal(tabled.pool.encodings, space.encode(metadata.configs))
    for j, config in enumerate(metadata.configs):
        assert tabled.configs[j] == {"candidate": j}
        assert tabled.pool.active_components(tabled.configs[j]) == space.active_components(config)
    with pytest.raises(AutoMLError, match="not of the run's space"):
        with_pool(metadata, kinds_metadata().pool, "mine")


def test_the_ranker_of_meta_data_without_a_pool_labels_on_the_pool_it_is_given(quick_labels):
    metadata = pipeline_metadata()
    starter = RankedPTEM(metadata=metadata, sources=["p0", "p1", "p2", "p3"], **LABELS)
    suggested = starter.suggest(task_on("p4"), pipeline_space(), None)
    assert len(quick_labels) == 12
    assert suggested.surrogate_state["metadata"] is metadata  # the surrogate's, pool-less
    assert suggested.surrogate_state["source"] in {"p0", "p1", "p2", "p3"}


def test_the_label_runs_are_built_from_the_registry_that_built_the_warm_starter(monkeypatch):
    """Built by a run's registry, the warm-starter's label runs (BO runs of their own) use
    that registry, not the installed plugins loaded again."""
    from automl_core.plugins import load_plugins

    given = []

    def recorded(*args, **kwargs):
        given.append(args[5] if len(args) > 5 else kwargs.get("plugins"))
        return kind_scores(*args, **kwargs)

    monkeypatch.setattr(labels, "pair_score", recorded)
    plugins = load_plugins()
    metadata = kinds_metadata(n=6)
    starter = plugins.create(
        "warmstarter", "ptem", {"metadata": metadata, "sources": SOURCES, **LABELS}
    )
    starter.suggest(task_on("d5"), metadata.pool, None)
    assert given and all(registry is plugins for registry in given)
