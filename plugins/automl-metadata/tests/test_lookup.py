"""Meta-data folders, table-lookup benchmarks, benchmark tasks and suites in the run loop.

The meta-data here is small but real: decision trees of six depths scored by 3-fold
cross-validation on four scikit-learn datasets, with learning curves over train sizes, made
by the test itself (one cell is left "not run" on purpose).
"""

from __future__ import annotations

import json
import threading
import warnings
from dataclasses import replace
from pathlib import Path
from typing import Any, NoReturn

import numpy as np
import pandas as pd
import pytest
import yaml
from sklearn.datasets import load_breast_cancer, load_digits, load_iris, load_wine
from sklearn.model_selection import cross_val_score
from sklearn.tree import DecisionTreeClassifier

from automl_core import hookimpl
from automl_core.contracts import LocalMetaDataLoader, MetaData
from automl_core.errors import AutoMLError, DatasetError, RecipeError
from automl_core.hookspecs import RegisterFactory
from automl_core.plugins import LOAD_PLUGINS_ENV, Plugins, load_plugins
from automl_core.trial import Status, Trial
from automl_engine.cli import main
from automl_engine.history import RunHistory
from automl_engine.metastore import is_metadata_folder, load_metadata, save_metadata
from automl_engine.metrics import normalised_regret
from automl_engine.recipe import parse_recipe
from automl_engine.run_folder import HISTORY_FILE, SUMMARY_FILE
from automl_engine.runner import run
from automl_engine.suites import SUITE_FILE, run_suite
from automl_engine.testing.data_checks import kit_metadata
from automl_metadata import plugin as metadata_plugin
from automl_metadata.lookup import TableBenchmark
from automl_metadata.store import FolderMetaData, MetaDataSource, Package, converted
from automl_spaces.pool_space import PoolSpace


def _never_built() -> NoReturn:
    raise AssertionError("a benchmark run built a component that it refuses")


class NamesOnly:
    """An ensembler and a meta-feature provider that a benchmark run must refuse by name,
    before building them."""

    @hookimpl
    def register_ensemblers(self, register: RegisterFactory[Any]) -> None:
        register("best-two", _never_built)

    @hookimpl
    def register_metafeature_providers(self, register: RegisterFactory[Any]) -> None:
        register("row-count", _never_built)


@pytest.fixture
def plugins() -> Plugins:
    """The core's defaults, automl-metadata, and the two names a benchmark run refuses."""
    return load_plugins(extra=[metadata_plugin, NamesOnly()], entry_points=False)


DEPTHS = [1, 2, 3, 4, 6, None]
SIZES = [32.0, 64.0, 128.0]
LOADERS = {"iris": load_iris, "wine": load_wine, "breast_cancer": load_breast_cancer}
LOADERS["digits"] = load_digits


def _error(X: np.ndarray, y: np.ndarray, depth: int | None, rows: int | None = None) -> float:
    if rows is not None:
        picked = np.random.default_rng(0).permutation(len(y))[:rows]
        X, y = X[picked], y[picked]
    model = DecisionTreeClassifier(max_depth=depth, random_state=0)
    with warnings.catch_warnings():  # 32 rows of digits leave some class with < 3 members
        warnings.simplefilter("ignore", UserWarning)
        return float(1 - cross_val_score(model, X, y, cv=3).mean())


@pytest.fixture(scope="module")
def trees() -> MetaData:
    """Real losses of six decision trees on four datasets, with curves; one cell not run."""
    names = list(LOADERS)
    performance = np.empty((len(names), len(DEPTHS)))
    curves = np.empty((len(names), len(DEPTHS), len(SIZES)))
    for i, name in enumerate(names):
        X, y = LOADERS[name](return_X_y=True)
        for j, depth in enumerate(DEPTHS):
            performance[i, j] = _error(X, y, depth)
            curves[i, j] = [_error(X, y, depth, int(size)) for size in SIZES]
    performance[0, 5] = np.nan  # iris x unlimited depth: "not run"
    curves[0, 5] = np.nan
    curves[1, 0, 2] = np.nan  # wine x depth 1 at 128 rows: not measured
    pool = PoolSpace(
        name="trees",
        encodings=np.array([[d if d is not None else 20] for d in DEPTHS], dtype=float),
        stage_names=("classifier",),
        stage_choices=np.zeros((len(DEPTHS), 1), dtype=int),
        descriptions=[{"classifier": "decision_tree", "max_depth": d} for d in DEPTHS],
    )
    metafeatures = pd.DataFrame(
        {"rows": [len(LOADERS[n](return_X_y=True)[1]) for n in names]}, index=names
    )
    return MetaData(
        datasets=names,
        configs=[{"candidate": j} for j in range(len(DEPTHS))],
        performance=performance,
        metafeatures=metafeatures,
        runtimes=np.ones_like(performance),
        splits={"train": names[:2], "test": names[2:]},
        space="trees",
        pool=pool,
        budgets=np.array(SIZES),
        curves=curves,
        info={
            "metric": "error rate",
            "fidelity": "train_size",
            "licence": "BSD-3-Clause (scikit-learn datasets)",
        },
    )


@pytest.fixture(scope="module")
def trees_folder(trees: MetaData, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("meta") / "trees"
    save_metadata(trees, folder)
    return folder


# --- MetaData ------------------------------------------------------------------------------


def test_metadata_checks_shapes_and_split_members(trees):
    with pytest.raises(ValueError, match="runtimes has shape"):
        MetaData(["a"], [{}], [[0.1]], runtimes=np.ones((2, 1)))
    with pytest.raises(ValueError, match="budgets and curves come together"):
        MetaData(["a"], [{}], [[0.1]], budgets=np.array([1.0]))
    with pytest.raises(ValueError, match="curves has shape"):
        MetaData(["a"], [{}], [[0.1]], budgets=np.array([1.0, 2.0]), curves=np.ones((1, 1, 3)))
    with pytest.raises(ValueError, match="split 'test' names unknown datasets"):
        MetaData(["a"], [{}], [[0.1]], splits={"test": ["b"]})
    assert trees.shape == (4, 6)
    assert trees.observed_fraction() == pytest.approx(23 / 24)


def test_conversions_at_once_all_end_with_a_whole_folder(trees, tmp_path):
    """Several writers saving the same folder at once (processes converting the same data):
    none fails, and the folder left is a whole one (replacing by delete-then-rename used to
    fail with 'Directory not empty' when another writer renamed in between)."""
    folder = tmp_path / "trees"
    small = replace(trees, metafeatures=None)
    errors: list[BaseException] = []

    def writer() -> None:
        try:
            for _ in range(25):
                save_metadata(small, folder)
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=writer) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert load_metadata(folder).datasets == trees.datasets
    assert [p.name for p in tmp_path.iterdir()] == ["trees"]  # no temporary folder left


def test_folder_round_trip_keeps_every_field(trees, trees_folder):
    assert is_metadata_folder(trees_folder)
    back = load_metadata(trees_folder)
    assert back.datasets == trees.datasets and back.configs == trees.configs
    np.testing.assert_array_equal(back.performance, trees.performance)
    np.testing.assert_array_equal(back.curves, trees.curves)
    np.testing.assert_array_equal(back.budgets, trees.budgets)
    pd.testing.assert_frame_equal(back.metafeatures, trees.metafeatures, check_names=False)
    assert back.splits == trees.splits and back.info == trees.info
    assert back.pool.descriptions == trees.pool.descriptions
    assert back.pool.stage_names == ("classifier",)
    np.testing.assert_array_equal(back.pool.encodings, trees.pool.encodings)


def test_converted_builds_once_then_reads_the_cache(trees, tmp_path, monkeypatch):
    monkeypatch.setenv("AUTOML_CACHE_DIR", str(tmp_path))
    calls = []

    def build() -> MetaData:
        calls.append(1)
        return trees

    first = converted("trees-1", build)
    second = converted("trees-1", build)
    assert calls == [1]
    assert (tmp_path / "metadata" / "trees-1" / "metadata.json").is_file()
    np.testing.assert_array_equal(first.performance, second.performance)


def test_broken_folders_say_what_is_wrong(trees_folder, tmp_path):
    with pytest.raises(DatasetError, match=r"metadata\.json is missing"):
        load_metadata(tmp_path)
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "metadata.json").write_text("{not json")
    with pytest.raises(DatasetError, match="not valid JSON"):
        load_metadata(broken)
    header = json.loads((trees_folder / "metadata.json").read_text())
    header["datasets"] = header["datasets"][:2]
    (broken / "metadata.json").write_text(json.dumps(header))
    with pytest.raises(DatasetError, match=r"arrays\.npz is missing"):
        load_metadata(broken)
    (broken / "arrays.npz").write_bytes((trees_folder / "arrays.npz").read_bytes())
    with pytest.raises(DatasetError, match="inconsistent: performance has shape"):
        load_metadata(broken)


# --- TableBenchmark ------------------------------------------------------------------------


def test_a_not_run_cell_is_never_offered(trees):
    benchmark = TableBenchmark(trees)
    space = benchmark.space("iris")
    assert space.size == 5 and {"candidate": 5} not in space.candidates()
    assert all(c["candidate"] != 5 for c in space.sample(np.random.default_rng(0), 10))
    assert benchmark.space("wine").size == 6


def test_lookup_returns_the_stored_loss_and_runtime(trees):
    evaluator = TableBenchmark(trees).evaluator("breast_cancer")
    result = evaluator.evaluate(Trial(0, {"candidate": 3}))
    assert result.status is Status.OK
    assert result.loss == trees.performance[2, 3] and result.fit_time == 1.0
    missing = TableBenchmark(trees).evaluator("iris").evaluate(Trial(1, {"candidate": 5}))
    assert missing.status is Status.CRASHED and "not run" in missing.error


def test_budget_selects_the_curve_point_at_or_below_it(trees):
    benchmark = TableBenchmark(trees)
    evaluator = benchmark.evaluator("wine")
    at_64 = evaluator.evaluate(Trial(0, {"candidate": 1}, budget=100.0))
    assert at_64.loss == trees.curves[1, 1, 1] and at_64.info["budget_used"] == 64.0
    # depth 1 has no point at 128 rows: the one at 64 answers
    fallback = evaluator.evaluate(Trial(1, {"candidate": 0}, budget=500.0))
    assert fallback.loss == trees.curves[1, 0, 1]
    too_small = evaluator.evaluate(Trial(2, {"candidate": 0}, budget=10.0))
    assert too_small.status is Status.CRASHED
    assert too_small.error == "candidate 0 was not run at budget 10.0"
    fidelity = benchmark.fidelity("wine")
    assert (fidelity.kind, fidelity.min, fidelity.max) == ("train_size", 32.0, 128.0)
    # a source that does not say what its budgets count gets a neutral name, not LCDB's
    unnamed = replace(trees, info={})
    assert TableBenchmark(unnamed).fidelity("wine").kind == "budget"


def test_benchmark_ranges_splits_and_unknown_names(trees):
    benchmark = TableBenchmark(trees, "trees")
    best, worst = benchmark.loss_range("digits")
    assert best == np.nanmin(trees.performance[3]) and worst == np.nanmax(trees.performance[3])
    assert benchmark.datasets("test") == ["breast_cancer", "digits"]
    assert benchmark.splits() == ["all", "test", "train"]
    assert benchmark.datasets("all") == trees.datasets
    with pytest.raises(AutoMLError, match="no split 'valid'; splits: all, test, train"):
        benchmark.datasets("valid")
    with pytest.raises(AutoMLError, match="no dataset 'mnist'"):
        benchmark.space("mnist")
    assert normalised_regret(0.3, 0.1, 0.5) == pytest.approx(0.5)
    assert normalised_regret(0.2, 0.2, 0.2) == 0.0


def test_a_benchmark_can_drop_or_keep_components():
    """DeepPipe's Experiment 4 searches a pool without one estimator: the candidates that use
    it are never offered, and the loss range is that of the candidates offered."""
    metadata = kit_metadata()
    uses_model_2 = np.arange(len(metadata.configs)) % 3 == 2
    dropped = TableBenchmark(metadata, exclude={"model": ["2"]})
    offered = {c["candidate"] for c in dropped.space("d1").candidates()}
    assert offered and not any(uses_model_2[i] for i in offered)
    row = metadata.performance[metadata.row("d1")]
    keep = ~uses_model_2 & metadata.pool.available
    assert dropped.loss_range("d1") == (row[keep].min(), row[keep].max())
    only_2 = TableBenchmark(metadata, include={"model": ["2"]})
    assert all(uses_model_2[c["candidate"]] for c in only_2.space("d1").candidates())
    with pytest.raises(AutoMLError, match="exclude names stage 'estimator'; its stages are model"):
        TableBenchmark(metadata, exclude={"estimator": ["RF"]})
    with pytest.raises(AutoMLError, match=r"include names \['RF'\] in stage 'model'"):
        TableBenchmark(metadata, include={"model": ["RF"]})
    with pytest.raises(AutoMLError, match="would have no candidates left"):
        TableBenchmark(metadata, exclude={"model": ["0", "1", "2"]})


def test_a_recipe_drops_a_component_through_the_benchmark_s_params(trees_folder, tmp_path):
    recipe = parse_recipe(
        {
            "name": "dropped",
            "task": {
                "benchmark": {
                    "name": "table",
                    "params": {"path": str(trees_folder), "include": {"classifier": []}},
                },
                "dataset": "wine",
            },
            "search": "random",
            "budget": {"trials": 3},
        }
    )
    with pytest.raises(AutoMLError, match="would have no candidates left"):
        run(recipe, tmp_path / "run")


def test_metadata_without_a_pool_is_not_a_benchmark():
    with pytest.raises(AutoMLError, match="no pool of candidates"):
        TableBenchmark(MetaData(["a"], [{"x": 1}], [[0.1]], space="s"))


# --- benchmark tasks in recipes and runs --------------------------------------------------


def benchmark_recipe(folder: Path, **task: object) -> dict:
    return {
        "name": "lookup",
        "task": {"benchmark": {"name": "table", "params": {"path": str(folder)}}, **task},
        "search": "random",
        "budget": {"trials": 4},
        "seed": 2,
    }


@pytest.mark.parametrize(
    ("change", "path"),
    [
        ({"space": "toy-classification"}, "space"),
        ({"task": {"benchmark": "pmf"}}, "task"),
        ({"task": {"benchmark": "pmf", "dataset": "1", "suite": "test"}}, "task"),
        ({"task": {"benchmark": "pmf", "dataset": "1", "target": "y"}}, "task.target"),
        ({"task": {"benchmark": "pmf", "dataset": "1", "metric": "accuracy"}}, "task.metric"),
    ],
)
def test_benchmark_task_shape_errors(tmp_path, change, path):
    data = {**benchmark_recipe(tmp_path, dataset="x"), **change}
    with pytest.raises(RecipeError) as caught:
        parse_recipe(data)
    assert caught.value.path == path


def test_numeric_dataset_ids_are_read_as_strings(tmp_path):
    recipe = parse_recipe(benchmark_recipe(tmp_path, dataset=1049))
    assert recipe.task.dataset == "1049" and recipe.space is None


def test_run_on_a_benchmark_dataset(trees_folder, plugins, tmp_path, capsys):
    recipe = parse_recipe(benchmark_recipe(trees_folder, dataset="digits"))
    summary = run(recipe, tmp_path / "run", plugins=plugins)
    assert summary.n_trials == 4 and summary.model_path is None
    trees = load_metadata(trees_folder)
    found = summary.benchmark
    assert found["name"] == "table" and found["dataset"] == "digits"
    assert summary.best_loss in trees.performance[3]
    expected = normalised_regret(summary.best_loss, *TableBenchmark(trees).loss_range("digits"))
    assert found["normalised_regret"] == pytest.approx(expected)
    assert json.loads((tmp_path / "run" / "summary.json").read_text())["benchmark"] == found
    assert main(["show", str(tmp_path / "run")]) == 0
    assert "4 trials on table:digits, metric error rate" in capsys.readouterr().out


def test_the_whole_pool_is_searched_then_the_space_is_exhausted(trees_folder, plugins, tmp_path):
    data = benchmark_recipe(trees_folder, dataset="iris")
    data["budget"] = {"trials": 50}
    summary = run(parse_recipe(data), tmp_path / "run", plugins=plugins)
    assert summary.n_trials == 5 and summary.stopped_because == "search space exhausted"
    assert summary.benchmark["normalised_regret"] == 0.0


@pytest.mark.parametrize(
    ("change", "path"),
    [
        ({"task": {"benchmark": "table", "dataset": "digit"}}, "task.dataset"),
        ({"ensemble": "best-two"}, "ensemble"),
        ({"metafeatures": "row-count"}, "metafeatures"),
    ],
)
def test_benchmark_run_errors_name_the_recipe_path(trees_folder, plugins, tmp_path, change, path):
    data = benchmark_recipe(trees_folder, dataset="digits")
    if "task" in change:
        change = {"task": {**data["task"], "dataset": change["task"]["dataset"]}}
    with pytest.raises(RecipeError) as caught:
        run(parse_recipe({**data, **change}), tmp_path / "run", plugins=plugins)
    assert caught.value.path == path
    if path == "task.dataset":
        assert "Did you mean 'digits'" in str(caught.value)


def untouched(run_dir: Path) -> tuple:
    """The run's trials (id, status, finish time) and when its summary was written: what
    running or resuming it again would change."""
    with RunHistory(run_dir / HISTORY_FILE) as history:
        trials = [(t.trial.id, t.status, t.finished_at) for t in history.trials()]
    return trials, (run_dir / SUMMARY_FILE).stat().st_mtime_ns


def test_suite_runs_each_dataset_of_the_split_once(trees_folder, plugins, tmp_path):
    recipe = parse_recipe(benchmark_recipe(trees_folder, suite="test"))
    suite = run_suite(recipe, tmp_path / "suite", plugins=plugins)
    assert sorted(suite.runs) == ["breast_cancer", "digits"]
    regrets = [r.benchmark["normalised_regret"] for r in suite.runs.values()]
    assert suite.mean_normalised_regret == pytest.approx(np.mean(regrets))
    stored = json.loads((tmp_path / "suite" / SUITE_FILE).read_text())
    assert stored["mean_normalised_regret"] == pytest.approx(suite.mean_normalised_regret)
    assert stored["runs"]["digits"] == suite.runs["digits"].to_record()  # as its summary.json
    assert "model" not in stored["runs"]["digits"]
    saved = yaml.safe_load((tmp_path / "suite" / "digits" / "recipe.yaml").read_text())
    assert saved["task"]["dataset"] == "digits" and "suite" not in saved["task"]
    before = {d: untouched(tmp_path / "suite" / d) for d in suite.runs}
    again = run_suite(recipe, tmp_path / "suite", plugins=plugins)  # finished runs are kept
    assert again.mean_normalised_regret == pytest.approx(suite.mean_normalised_regret)
    assert {d: untouched(tmp_path / "suite" / d) for d in again.runs} == before
    with pytest.raises(RecipeError, match="no split 'tset'"):
        bad = parse_recipe(benchmark_recipe(trees_folder, suite="tset"))
        run_suite(bad, tmp_path / "bad", plugins=plugins)


# --- automl data ----------------------------------------------------------------------------


def test_data_list_and_show_a_users_folder(trees_folder, capsys):
    assert main(["data", "list", "--json"]) == 0
    rows = {row["name"]: row for row in json.loads(capsys.readouterr().out)}
    assert rows["folder"]["package"] is None and rows["folder"]["plugin"] == "automl-metadata"
    assert main(["data", "show", "folder", "-p", f"path={trees_folder}"]) == 0
    out = capsys.readouterr().out
    assert "datasets x configurations: 4 x 6" in out
    assert "observed: 95.8% of the cells" in out
    assert "split test: 2 datasets" in out and "budgets: 3 from 32 to 128" in out


def test_data_errors_are_user_errors(tmp_path, capsys):
    with pytest.raises(SystemExit) as exited:  # argparse, as for any unknown command
        main(["data", "frobnicate"])
    assert exited.value.code == 2
    assert "invalid choice: 'frobnicate' (choose from" in capsys.readouterr().err
    assert main(["data", "show", "nope"]) == 2
    assert "no meta-data source 'nope'" in capsys.readouterr().err
    assert main(["data", "show", "folder", "-p", f"path={tmp_path}"]) == 2
    assert "metadata.json is missing" in capsys.readouterr().err


def test_folder_source_reads_in_place(trees_folder):
    source = FolderMetaData(str(trees_folder))
    assert source.is_converted() and source.fetch() is None
    assert source.load().shape == (4, 6)


def test_a_sources_conversion_version_names_its_cache_folder(trees, tmp_path, monkeypatch):
    monkeypatch.setenv("AUTOML_CACHE_DIR", str(tmp_path))

    class Trees(MetaDataSource):
        package = Package("trees-data", "1.0")

        def build(self) -> MetaData:
            return trees

    class TreesV2(Trees):
        conversion = 2

    assert Trees().cache_name() == "trees-1.0" and TreesV2().cache_name() == "treesv2-1.0-c2"
    assert Trees().packages() == (Package("trees-data", "1.0"),)
    assert not Trees().is_converted()
    assert isinstance(Trees(), LocalMetaDataLoader)  # what `automl validate` asks it
    assert Trees().load().shape == (4, 6) and Trees().is_converted()
    assert not TreesV2().is_converted()


def test_the_data_commands_come_with_this_distribution(monkeypatch, capsys):
    """`automl data list/fetch/show` are automl-metadata's: without it (and without any other
    plugin's data action) there is no `data` group, and the error says how to get it."""
    monkeypatch.setenv(LOAD_PLUGINS_ENV, "sklearn")
    assert main(["data", "list"]) == 2
    error = capsys.readouterr().err
    assert "'automl data' is not a command here" in error and "plugins/automl" in error
    monkeypatch.setenv(LOAD_PLUGINS_ENV, "openml")  # a data action of another plugin only
    with pytest.raises(SystemExit):
        main(["data", "list"])
    assert "invalid choice: 'list' (choose from 'import-openml')" in capsys.readouterr().err


def test_a_suite_restarts_a_run_killed_before_it_stored_its_recipe(trees_folder, plugins, tmp_path):
    """A history with no recipe (the process died while the run was being set up) holds
    nothing to resume: the suite starts that run afresh instead of refusing it."""
    with RunHistory(tmp_path / "suite" / "digits" / HISTORY_FILE):
        pass  # created, nothing recorded
    recipe = parse_recipe(benchmark_recipe(trees_folder, suite="test"))
    suite = run_suite(recipe, tmp_path / "suite", plugins=plugins)
    assert suite.runs["digits"].n_trials == 4
