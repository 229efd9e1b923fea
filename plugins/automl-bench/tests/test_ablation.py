"""``automl ablate`` and ``automl compare``: the grid, suites, peers, resuming and the report
checked against the results it came from. Real runs on real KEEL datasets, short budgets."""

from __future__ import annotations

import csv
import json
import os
import re
import signal
import subprocess
import sys
import time
from concurrent.futures import Future
from pathlib import Path
from typing import ClassVar

import numpy as np
import pytest
import yaml
from automl_bench.ablation import (
    CELL_FILE,
    Cell,
    Variant,
    _row_of,
    ablate,
    cell_recipe,
    make_variants,
    parse_variant,
    parse_vary,
    plan_cells,
)
from automl_bench.contracts import System, SystemResult
from automl_bench.suites import SuiteTask, parse_suite, read_suite, suite_tasks
from scipy.stats import rankdata

from automl_core import hookimpl
from automl_core.errors import AutoMLError, RecipeError
from automl_core.plugins import load_plugins
from automl_core.trial import Result, Status
from automl_engine.builtins.sources import load_keel
from automl_engine.cli import main
from automl_engine.history import RunHistory
from automl_engine.recipe import parse_recipe

#: A recipe whose runs take about a second: three fast classifiers, no feature preprocessing,
#: trials in the run's own process (a worker process would take seconds to start in each cell).
RECIPE = {
    "name": "tiny",
    "task": {
        "dataset": "keel:iris",
        "metric": "balanced_accuracy",
        "resampling": {"holdout": 0.33},
    },
    "space": {
        "name": "autosklearn-classification",
        "params": {
            "include": {
                "classifier": ["decision_tree", "gaussian_nb", "lda"],
                "feature_preprocessor": ["no_preprocessing"],
            }
        },
    },
    "search": {"strategy": "random", "surrogate": "rf"},
    "budget": {"trials": 4},
    "executor": "sequential",
}
#: A peer system is given the recipe's wall time (it has no trial budget).
PEER_RECIPE = {**RECIPE, "budget": {"trials": 4, "wall_time": 30}}
FIVE_KEEL = ["keel:iris", "keel:wine", "keel:heart", "keel:sonar", "keel:bupa"]


def write_files(folder: Path, tasks: list[str], **recipe_changes: object) -> tuple[Path, Path]:
    recipe = folder / "recipe.yaml"
    recipe.write_text(yaml.safe_dump({**RECIPE, **recipe_changes}))
    suite = folder / "suite.yaml"
    suite.write_text(yaml.safe_dump({"defaults": {"test_size": 0.3}, "tasks": tasks}))
    return recipe, suite


def read_rows(path: Path) -> list[dict[str, str]]:
    with path.open() as handle:
        return list(csv.DictReader(handle))


# --- the grid ------------------------------------------------------------------------------


def test_vary_values_make_every_combination_then_the_peers() -> None:
    varied = parse_vary(["search.strategy=smbo,mcts", "search.surrogate=rf,gp"])
    variants = make_variants(varied, ["flaml"])
    assert [v.label for v in variants] == [
        "search.strategy=smbo search.surrogate=rf",
        "search.strategy=smbo search.surrogate=gp",
        "search.strategy=mcts search.surrogate=rf",
        "search.strategy=mcts search.surrogate=gp",
        "flaml",
    ]
    assert variants[-1].peer == "flaml" and variants[-1].overrides == ()
    cells = plan_cells(variants, [SuiteTask("keel:a", {}), SuiteTask("keel:b", {})], [0, 1])
    assert len(cells) == 5 * 2 * 2
    assert len({cell.folder for cell in cells}) == len(cells)
    # task by task, seed by seed: the first cells compare every variant on one task and seed
    assert {(c.task.label, c.seed) for c in cells[:5]} == {("keel:a", 0)}


@pytest.mark.parametrize(
    "value", ["search.strategy", "=smbo", "search.strategy=smbo,", "search.strategy=a,a"]
)
def test_a_malformed_vary_says_what_is_expected(value: str) -> None:
    with pytest.raises(RecipeError, match="--vary"):
        parse_vary([value])


def test_a_key_varied_twice_is_refused() -> None:
    with pytest.raises(RecipeError, match="repeated"):
        parse_vary(["seed=1,2", "seed=3,4"])


def test_a_cell_recipe_takes_the_variant_the_suite_task_and_the_seed() -> None:
    variant = Variant("search.strategy=smbo", (("search.strategy", "smbo"),))
    suite = parse_suite(
        "s",
        {
            "defaults": {"max_rows": 500},
            "tasks": [{"dataset": "keel:wine", "test_size": 0.3, "split_seed": 7}],
        },
    )
    (task,) = suite_tasks(suite, load_plugins())
    raw = cell_recipe(RECIPE, Cell(variant, task, 3))
    assert parse_recipe(raw).task.max_rows == 500
    assert raw["search"] == {"name": "smbo", "surrogate": "rf"}
    assert raw["task"] == {
        "metric": "balanced_accuracy",
        "resampling": {"holdout": 0.33},
        "dataset": "keel:wine",
        "test_size": 0.3,
        "split_seed": 7,
        "max_rows": 500,
    }
    assert raw["seed"] == 3
    lookup = SuiteTask("pmf:1049", {"benchmark": "pmf", "dataset": "1049"})
    raw = cell_recipe(RECIPE, Cell(variant, lookup, 0))
    assert raw["task"] == {"benchmark": "pmf", "dataset": "1049"} and "space" not in raw


def test_named_variants_each_change_the_base_recipe_on_their_own() -> None:
    variants = make_variants(
        [],
        ["flaml"],
        [
            "+caruana {ensemble: {name: caruana, params: {size: 20}}}",
            "smbo {search.strategy: smbo}",
            "+auto {task.resampling: auto}",
        ],
    )
    assert [v.label for v in variants] == ["recipe", "+caruana", "smbo", "+auto", "flaml"]
    task = SuiteTask("keel:wine", {"dataset": "keel:wine"})
    recipes = {v.label: cell_recipe(RECIPE, Cell(v, task, 0)) for v in variants[:4]}
    assert "ensemble" not in recipes["recipe"] and "ensemble" not in recipes["smbo"]
    assert recipes["+caruana"]["ensemble"] == {"name": "caruana", "params": {"size": 20}}
    assert recipes["+caruana"]["search"] == recipes["recipe"]["search"]
    assert recipes["smbo"]["search"] == {"name": "smbo", "surrogate": "rf"}
    assert recipes["+auto"]["task"]["resampling"] == "auto"
    relabelled = make_variants([], [], ["gp {search.surrogate: gp}"], base_label="smbo:rf")
    assert [v.label for v in relabelled] == ["smbo:rf", "gp"]
    with pytest.raises(AutoMLError, match="same label"):
        make_variants([], [], ["recipe {search.surrogate: gp}"])
    for raw in recipes.values():
        parse_recipe(raw)


def test_a_variant_naming_the_dataset_leaves_each_cells_own_dataset_out() -> None:
    variant = parse_variant(
        "lodo {warmstart: {name: knd, params: {metadata: metabu, "
        "metadata_params: {metadata: keel-autosklearn, exclude: ['{dataset}']}}}}"
    )
    for dataset in ("keel:wine", "keel:pima"):
        raw = cell_recipe(RECIPE, Cell(variant, SuiteTask(dataset, {"dataset": dataset}), 0))
        params = raw["warmstart"]["params"]
        assert params["metadata_params"] == {"metadata": "keel-autosklearn", "exclude": [dataset]}
        assert params["metadata"] == "metabu"
    lookup = SuiteTask("pmf:1049", {"benchmark": "pmf", "dataset": "1049"})
    raw = cell_recipe(RECIPE, Cell(variant, lookup, 0))
    assert raw["warmstart"]["params"]["metadata_params"]["exclude"] == ["1049"]


@pytest.mark.parametrize(
    ("values", "message"),
    [
        (["+caruana"], r"--variant.*'LABEL \{key: value, \.\.\.\}'"),
        (["+caruana {ensemble"], r"--variant.*a YAML mapping after the label"),
        (["x [1, 2]"], r"--variant"),
        (["a {seed: 1}", "a {seed: 2}"], r"two variants have the same label"),
    ],
)
def test_a_malformed_named_variant_says_what_is_expected(values: list[str], message: str) -> None:
    with pytest.raises(AutoMLError, match=message):
        make_variants([], [], values)


# --- suites ----------------------------------------------------------------------------------


def test_keel_small_is_twenty_keel_datasets_under_5000_rows() -> None:
    plugins = load_plugins()
    tasks = suite_tasks(read_suite("keel-small", plugins), plugins)
    assert len(tasks) == 20
    for task in tasks:
        assert task.task["test_size"] == 0.25
        assert load_keel(task.label.removeprefix("keel:")).n_rows < 5000


def test_the_quality_suite_is_every_balanced_keel_dataset_twelve_imbalanced_and_digits() -> None:
    plugins = load_plugins()
    labels = [t.label for t in suite_tasks(read_suite("quality-classification", plugins), plugins)]
    balanced = {t.label for t in suite_tasks(read_suite("keel-all", plugins), plugins)}
    assert len(labels) == len(set(labels)) == 56 and balanced <= set(labels)
    imbalanced = set(labels) - balanced - {"sklearn:digits"}
    assert len(imbalanced) == 12
    for label in imbalanced:
        y = load_keel(label.removeprefix("keel:")).y
        _, counts = np.unique(y, return_counts=True)
        assert len(counts) == 2 and counts.min() >= 30 and counts.min() / counts.sum() < 0.3
    # any prefix mixes the collections: an imbalanced dataset among every five tasks
    assert all(set(labels[i : i + 5]) & imbalanced for i in range(0, 40, 5))


def test_registered_suites_include_the_keel_and_table_lookup_ones() -> None:
    names = load_plugins().registry.names("suite")
    assert {"keel-small", "keel-all", "pmf-test", "tensor-oboe-fold0", "oboe", "lcdb"} <= set(names)


def test_a_benchmark_split_expands_into_its_datasets() -> None:
    class Lookup:
        def datasets(self, split: str | None = None) -> list[str]:
            return {"test": ["3", "7"]}[split or "test"]

    class Plugins:
        def create(self, kind: str, name: str) -> Lookup:
            assert (kind, name) == ("benchmark", "pmf")
            return Lookup()

    suite = parse_suite("s", {"tasks": [{"benchmark": "pmf", "split": "test"}, "keel:iris"]})
    tasks = suite_tasks(suite, Plugins())  # type: ignore[arg-type]
    assert [t.label for t in tasks] == ["pmf:3", "pmf:7", "keel:iris"]
    assert tasks[0].task == {"benchmark": "pmf", "dataset": "3"} and tasks[0].is_benchmark


@pytest.mark.parametrize(
    ("document", "where"),
    [
        ({"tasks": []}, "tasks"),
        ({"tasks": ["keel:iris"], "colour": 1}, "colour"),
        ({"tasks": [{"dataset": "keel:iris", "metric": "accuracy"}]}, r"tasks\[0\]\.metric"),
        ({"tasks": ["keel:iris", 3]}, r"tasks\[1\]"),
        ({"tasks": [{"benchmark": "pmf", "split": "test", "dataset": "1"}]}, r"tasks\[0\]"),
        ({"tasks": ["keel:iris"], "defaults": {"dataset": "x"}}, "defaults.dataset"),
    ],
)
def test_a_broken_suite_names_the_entry(document: dict, where: str) -> None:
    with pytest.raises(RecipeError, match=where):
        parse_suite("broken", document)


def test_a_task_listed_twice_is_an_error() -> None:
    suite = parse_suite("twice", {"tasks": ["keel:iris", {"dataset": "keel:iris"}]})
    with pytest.raises(AutoMLError, match="more than once"):
        suite_tasks(suite, load_plugins())


def test_an_unknown_suite_lists_the_registered_ones() -> None:
    with pytest.raises(AutoMLError, match="keel-small"):
        read_suite("keel-smal", load_plugins())


def test_a_fixed_split_seed_gives_every_seed_the_same_test_rows(tmp_path: Path) -> None:
    from automl_engine.tasks import load_task_data

    plugins = load_plugins()

    def test_rows(seed: int, split_seed: int | None) -> list[str]:
        task = {**RECIPE["task"], "dataset": "keel:wine", "test_size": 0.3}
        if split_seed is not None:
            task["split_seed"] = split_seed
        recipe = parse_recipe({**RECIPE, "task": task, "seed": seed})
        _, _, test, _ = load_task_data(recipe, plugins)
        assert test is not None
        return test.X.astype(str).agg("|".join, axis=1).tolist()

    assert test_rows(0, 5) == test_rows(1, 5)
    assert test_rows(0, None) != test_rows(1, None)


# --- a real ablation and its report -----------------------------------------------------------


def test_ablate_then_compare_on_five_keel_datasets(tmp_path: Path, capsys) -> None:
    """The issue's check: 2 variants x 5 KEEL datasets x 2 seeds, then the report, whose
    numbers are recomputed here from the results.csv it came from."""
    recipe, suite = write_files(tmp_path, FIVE_KEEL)
    out = tmp_path / "ablation"
    argv = ["ablate", str(recipe), "--suite", str(suite), "--seeds", "2", "--out", str(out)]
    assert main([*argv, "--vary", "search.strategy=random,smbo"]) == 0
    rows = read_rows(out / "results.csv")
    assert len(rows) == 2 * 5 * 2
    assert {r["status"] for r in rows} == {"ok"}
    assert {r["search.strategy"] for r in rows} == {"random", "smbo"}
    for row in rows:
        assert 0 <= float(row["test_loss"]) <= 1
        assert float(row["test_score"]) == pytest.approx(1 - float(row["test_loss"]))
        assert row["n_trials"] == "4"
        summary = json.loads((out / row["run_dir"] / "summary.json").read_text())
        assert summary["best_loss"] == pytest.approx(float(row["validation_loss"]))
        curve = read_rows(out / row["curve"])
        assert len(curve) == 4
        assert min(float(c["loss"]) for c in curve) == pytest.approx(summary["best_loss"])
        seconds = [float(c["seconds"]) for c in curve]
        assert seconds == sorted(seconds)
    # the same split for both variants of a (task, seed)
    first = {r["variant"]: r for r in rows if r["task"] == "keel:sonar" and r["seed"] == "1"}
    recipes = [
        yaml.safe_load((out / r["run_dir"] / "recipe.yaml").read_text()) for r in first.values()
    ]
    assert recipes[0]["task"] == recipes[1]["task"] and recipes[0]["seed"] == recipes[1]["seed"]

    assert main(["compare", str(out)]) == 0
    report = (out / "report" / "report.md").read_text()
    for figure in ("critical_difference", "regret_vs_time", "regret_vs_trials", "rank_vs_time"):
        assert (out / "report" / f"{figure}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert f"({figure}.png)" in report

    variants = ["search.strategy=random", "search.strategy=smbo"]
    means = np.array(
        [
            [np.mean([float(r["test_loss"]) for r in rows if (r["task"], r["variant"]) == (t, v)])
             for v in variants]
            for t in FIVE_KEEL
        ]
    )  # fmt: skip
    ranks = np.mean([rankdata(row) for row in means], axis=0)
    table = dict(re.findall(r"^\| (search\.strategy=\w+) \| ([\d.]+) \|", report, re.M))
    assert {v: float(table[v]) for v in variants} == {
        v: pytest.approx(round(r, 2), abs=1e-9) for v, r in zip(variants, ranks, strict=True)
    }
    per_task = dict(re.findall(r"^\| (keel:\w+) \| (.+) \|$", report, re.M))
    for task, values in zip(FIVE_KEEL, means, strict=True):
        shown = [float(x.strip(" *")) for x in per_task[task].split("|")]
        assert shown == pytest.approx(np.round(values, 4), abs=1e-9)


def test_a_killed_ablation_resumes_without_rerunning_finished_cells(tmp_path: Path) -> None:
    recipe, suite = write_files(tmp_path, ["keel:iris", "keel:wine", "keel:heart"])
    out = tmp_path / "ablation"
    command = [
        sys.executable, "-m", "automl_engine.cli", "ablate", str(recipe), "--suite", str(suite),
        "--seeds", "2", "--out", str(out), "--vary", "search.strategy=random,smbo",
    ]  # fmt: skip
    process = subprocess.Popen(command, start_new_session=True, stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while len(list(out.glob(f"cells/*/*/*/{CELL_FILE}"))) < 3:
        assert process.poll() is None, "the ablation ended before it could be killed"
        assert time.monotonic() < deadline
        time.sleep(0.05)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    finished = {
        path.parent: (path.stat().st_mtime_ns, path.read_text())
        for path in out.glob(f"cells/*/*/*/{CELL_FILE}")
    }
    assert 3 <= len(finished) < 12
    result = subprocess.run(command, capture_output=True, text=True, check=True)
    assert f"({len(finished)} done before, 0 failed)" in result.stdout
    for folder, (mtime, text) in finished.items():
        assert (folder / CELL_FILE).stat().st_mtime_ns == mtime
        assert (folder / CELL_FILE).read_text() == text
    rows = read_rows(out / "results.csv")
    assert len(rows) == 12 and {r["status"] for r in rows} == {"ok"}
    for row in rows:  # no run lost or repeated a trial
        assert row["n_trials"] == "4"


def test_seed_runs_the_named_seeds_only_and_adds_them_to_a_grid(tmp_path: Path) -> None:
    """``--seed 1`` adds a second seed to a finished one-seed grid: seed 0's cell is reused,
    seed 1's is run, and no other seed is."""
    recipe, suite = write_files(tmp_path, ["keel:iris"])
    out = tmp_path / "ablation"
    argv = ["ablate", str(recipe), "--suite", str(suite), "--out", str(out)]
    assert main([*argv, "--seed", "1"]) == 0
    assert [r["seed"] for r in read_rows(out / "results.csv")] == ["1"]
    assert [p.parent.name for p in out.glob(f"cells/*/*/*/{CELL_FILE}")] == ["seed-1"]
    assert main([*argv, "--seeds", "1"]) == 0
    seeds = sorted(p.parent.name for p in out.glob(f"cells/*/*/*/{CELL_FILE}"))
    assert seeds == ["seed-0", "seed-1"]
    assert main([*argv, "--seed", "-1"]) == 2


def test_an_ablation_folder_of_another_recipe_is_refused(tmp_path: Path) -> None:
    recipe, suite = write_files(tmp_path, ["keel:iris"])
    out = tmp_path / "ablation"
    argv = ["ablate", str(recipe), "--suite", str(suite), "--seeds", "1", "--out", str(out)]
    assert main(argv) == 0
    assert main([*argv, "--set", "budget.trials=5"]) == 2
    assert len(read_rows(out / "results.csv")) == 1


def test_a_label_that_stood_for_other_overrides_is_refused(tmp_path: Path, capsys) -> None:
    """A finished cell is reused by its variant's label: the same label for other overrides
    would reuse results that are not this variant's."""
    recipe, suite = write_files(tmp_path, ["keel:iris"])
    out = tmp_path / "ablation"
    argv = ["ablate", str(recipe), "--suite", str(suite), "--seeds", "1", "--out", str(out)]
    assert main([*argv, "--variant", "big {budget.trials: 3}"]) == 0
    cells = {p: p.stat().st_mtime_ns for p in out.glob(f"cells/*/*/*/{CELL_FILE}")}
    assert len(cells) == 2
    assert main([*argv, "--variant", "big {budget.trials: 3}"]) == 0  # the same: reused
    assert {p: p.stat().st_mtime_ns for p in cells} == cells  # not run again
    capsys.readouterr()
    assert main([*argv, "--variant", "big {budget.trials: 5}"]) == 2
    error = capsys.readouterr().err
    assert "variant 'big' stood for" in error and "another label" in error
    assert main([*argv, "--variant", "bigger {budget.trials: 5}"]) == 0  # a new label runs
    rows = read_rows(out / "results.csv")  # the rows of this command's cells
    assert [(r["variant"], r["n_trials"]) for r in rows] == [("recipe", "4"), ("bigger", "5")]


def test_a_variant_of_what_the_suite_sets_is_refused(tmp_path: Path, capsys) -> None:
    recipe, suite = write_files(tmp_path, ["keel:iris"])
    argv = ["ablate", str(recipe), "--suite", str(suite), "--out", str(tmp_path / "a")]
    assert main([*argv, "--variant", "more-test {task.test_size: 0.4}"]) == 2
    assert "sets task.test_size, which every cell takes from its suite task" in (
        capsys.readouterr().err
    )


def test_a_misspelt_variant_fails_before_any_cell_runs(tmp_path: Path, capsys) -> None:
    recipe, suite = write_files(tmp_path, ["keel:iris"])
    out = tmp_path / "ablation"
    argv = ["ablate", str(recipe), "--suite", str(suite), "--out", str(out)]
    assert main([*argv, "--vary", "search.strategy=random,smbbo"]) == 2
    error = capsys.readouterr().err
    assert "search.strategy=smbbo" in error and "smbo" in error
    assert not out.exists()


# --- peers and failures -------------------------------------------------------------------------


class MajoritySystem(System):
    """A peer that predicts the training class frequencies, and records what it was given.
    ``dropped`` leaves the rows of that class out of its training, so that its model lacks
    the class, as a system's model may."""

    seen: ClassVar[list[dict]] = []

    def __init__(self, dropped: int | None = None) -> None:
        if dropped is not None and dropped < 0:
            raise ValueError(f"majority: dropped must be a class label, got {dropped}")
        self.dropped = dropped

    def fit(self, X, y, *, task, metric, time_budget, seed, n_jobs, workdir) -> SystemResult:
        MajoritySystem.seen.append(
            {"rows": len(X), "labels": sorted(set(y.tolist())), "metric": metric.name,
             "time_budget": time_budget, "seed": seed, "n_jobs": n_jobs,
             "dropped": self.dropped}
        )  # fmt: skip
        y = y[y != self.dropped]
        classes, counts = np.unique(y, return_counts=True)

        class Model:  # scikit-learn's convention: classes_ and a column per class
            classes_ = classes

            def predict_proba(self, X):
                return np.tile(counts / counts.sum(), (len(X), 1))

        return SystemResult(Model(), validation_loss=0.5, curve=[(0.1, 0.7), (0.2, 0.5)])


class FailingSystem(System):
    def fit(self, X, y, **kwargs) -> SystemResult:
        raise RuntimeError("the peer broke")


class PeersPlugin:
    @hookimpl
    def register_systems(self, register) -> None:
        register("majority", MajoritySystem)
        register("failing", FailingSystem)


def test_a_peer_gets_the_runs_training_rows_and_is_scored_by_the_core(tmp_path: Path) -> None:
    MajoritySystem.seen.clear()
    plugins = load_plugins(extra=[PeersPlugin()])
    task = SuiteTask("keel:wine", {"dataset": "keel:wine", "test_size": 0.3})
    summary = ablate(
        PEER_RECIPE, tmp_path, varied=[], peers=["majority", "failing"], tasks=[task], seeds=[0],
        plugins=plugins,
    )  # fmt: skip
    assert (summary.cells, summary.failed) == (3, 1)
    rows = {r["variant"]: r for r in read_rows(tmp_path / "results.csv")}
    run_meta = json.loads((tmp_path / rows["recipe"]["run_dir"] / "summary.json").read_text())
    assert run_meta["n_trials"] == 4
    seen = MajoritySystem.seen[0]
    with RunHistory(tmp_path / rows["recipe"]["run_dir"] / "history.sqlite") as history:
        assert seen["rows"] == history.get_meta("dataset")["train_rows"] < load_keel("wine").n_rows
    assert seen["labels"] == [0, 1, 2]
    assert (seen["metric"], seen["time_budget"], seen["seed"]) == ("balanced_accuracy", 30, 0)
    assert seen["n_jobs"] == 1  # the recipe's sequential executor runs one trial at a time
    # predicting class frequencies gives every row the majority class: balanced accuracy 1/3
    assert float(rows["majority"]["test_loss"]) == pytest.approx(2 / 3)
    assert rows["majority"]["n_trials"] == "2"
    assert [r["loss"] for r in read_rows(tmp_path / rows["majority"]["curve"])] == ["0.7", "0.5"]
    assert rows["failing"]["status"] == "error"
    assert "RuntimeError: the peer broke" in rows["failing"]["error"]
    assert "the peer broke" in (tmp_path / rows["failing"]["run_dir"] / "error.txt").read_text()
    # a failed cell is tried again by the next run of the ablation; the others are not
    again = ablate(
        PEER_RECIPE, tmp_path, varied=[], peers=["majority", "failing"], tasks=[task], seeds=[0],
        plugins=plugins,
    )  # fmt: skip
    assert (again.skipped, again.failed) == (2, 1)
    assert len(MajoritySystem.seen) == 1


def test_a_peer_on_a_table_lookup_task_is_refused_before_running(tmp_path: Path) -> None:
    plugins = load_plugins(extra=[PeersPlugin()])
    task = SuiteTask("pmf:1", {"benchmark": "pmf", "dataset": "1"})
    with pytest.raises(AutoMLError, match="not on table-lookup"):
        ablate(PEER_RECIPE, tmp_path, varied=[], peers=["majority"], tasks=[task], seeds=[0],
               plugins=plugins)  # fmt: skip


def test_a_cell_stopped_by_its_executor_is_recorded_as_failed(tmp_path: Path) -> None:
    cell = Cell(Variant("recipe"), SuiteTask("keel:iris", {}), 0)
    future: Future[Result] = Future()
    future.set_result(Result.failure(Status.TIMEOUT, "trial 0 exceeded its time limit of 9s"))
    row = _row_of(future, cell, tmp_path)
    assert row["status"] == "error" and "exceeded its time limit" in row["error"]
    stored = json.loads((tmp_path / cell.folder / CELL_FILE).read_text())
    assert stored == row


def test_a_run_killed_before_it_stored_its_recipe_starts_afresh(tmp_path: Path) -> None:
    """Killed between opening its history and writing the run's metadata, a run leaves a
    history that cannot be resumed: the next ablation runs that cell again from scratch."""
    task = SuiteTask("keel:iris", {"dataset": "keel:iris", "test_size": 0.3})
    cell = Cell(Variant("recipe"), task, 0)
    folder = tmp_path / cell.folder
    folder.mkdir(parents=True)
    RunHistory(folder / "history.sqlite").close()  # the schema, no metadata, no trials
    summary = ablate(RECIPE, tmp_path, varied=[], tasks=[task], seeds=[0])
    assert (summary.cells, summary.failed) == (1, 0)
    assert read_rows(tmp_path / "results.csv")[0]["n_trials"] == "4"


def test_cells_run_in_worker_processes_and_a_cell_past_its_time_is_stopped(
    tmp_path: Path,
) -> None:
    """``--jobs 2``: the cells go to the processes executor (the evaluator pickled to its
    workers, the plugins loaded there); ``cell_time`` stops a cell that runs too long, its
    row says so, and the next run of the ablation runs it again."""
    tasks = [SuiteTask(t, {"dataset": t, "test_size": 0.3}) for t in ("keel:iris", "keel:wine")]
    # No trial budget: each cell searches until its 5 s wall time is spent, so a 2 s cell_time
    # stops it by construction, on a fast machine as on a loaded one.
    slow = {**RECIPE, "budget": {"wall_time": 5}}
    stopped = ablate(slow, tmp_path, varied=[], tasks=tasks, seeds=[0], jobs=2, cell_time=2)
    assert (stopped.cells, stopped.failed) == (2, 2)
    for row in read_rows(tmp_path / "results.csv"):
        assert row["status"] == "error" and "exceeded its time limit of 2s" in row["error"]
    again = ablate(slow, tmp_path, varied=[], tasks=tasks, seeds=[0], jobs=2, cell_time=600)
    assert (again.skipped, again.failed) == (0, 0)
    rows = read_rows(tmp_path / "results.csv")
    assert [r["task"] for r in rows] == ["keel:iris", "keel:wine"]
    assert {r["status"] for r in rows} == {"ok"}
    assert all(int(r["n_trials"]) >= 1 for r in rows)


def test_a_suite_file_that_is_not_a_mapping_says_so(tmp_path: Path) -> None:
    path = tmp_path / "list.yaml"
    path.write_text("- keel:iris\n")
    with pytest.raises(RecipeError, match="expected a mapping of suite keys"):
        read_suite(str(path), load_plugins())


def test_a_peers_parameters_reach_it_and_its_classes_are_placed_by_the_core(
    tmp_path: Path,
) -> None:
    """``--peer 'majority {dropped: 0}'``: the parameters build the system, the label says
    them, and a model that never saw class 0 is scored with a zero column for it."""
    MajoritySystem.seen.clear()
    plugins = load_plugins(extra=[PeersPlugin()])
    task = SuiteTask("keel:wine", {"dataset": "keel:wine", "test_size": 0.3})
    summary = ablate(
        PEER_RECIPE, tmp_path, varied=[], peers=["majority {dropped: 0}"], tasks=[task], seeds=[0],
        plugins=plugins,
    )  # fmt: skip
    assert (summary.cells, summary.failed) == (2, 0)
    row = {r["variant"]: r for r in read_rows(tmp_path / "results.csv")}["majority(dropped=0)"]
    assert MajoritySystem.seen[0]["dropped"] == 0
    peer = json.loads((tmp_path / row["run_dir"] / "peer.json").read_text())
    assert peer["params"] == {"dropped": 0}
    # wine's class 1 is the largest: predicted for every row, balanced accuracy 1/3 again
    assert float(row["test_loss"]) == pytest.approx(2 / 3)


@pytest.mark.parametrize(
    ("peer", "message"),
    [("majority {colour: 1}", "colour"), ("majority {dropped: -1}", "dropped must be"),
     ("majority [1]", "--peer")],
)  # fmt: skip
def test_a_peer_with_a_bad_parameter_fails_before_any_cell_runs(
    tmp_path: Path, peer: str, message: str
) -> None:
    plugins = load_plugins(extra=[PeersPlugin()])
    task = SuiteTask("keel:wine", {"dataset": "keel:wine", "test_size": 0.3})
    with pytest.raises(AutoMLError, match=message):
        ablate(PEER_RECIPE, tmp_path, varied=[], peers=[peer], tasks=[task], seeds=[0],
               plugins=plugins)  # fmt: skip
    assert not (tmp_path / "results.csv").exists()


def test_a_multi_fidelity_cells_curve_keeps_only_its_full_budget_trials(tmp_path: Path) -> None:
    """Losses at a smaller budget are not comparable with full-budget ones (rank_key's rule):
    the anytime curve of a successive-halving cell holds the full-budget trials alone."""
    recipe = {
        **RECIPE,
        "search": {"strategy": "successive_halving", "fidelity": {"kind": "subsample"}},
        "budget": {"trials": 13, "wall_time": 60},
    }
    task = SuiteTask("keel:wine", {"dataset": "keel:wine", "test_size": 0.3})
    ablate(recipe, tmp_path, varied=[], tasks=[task], seeds=[0])
    row = read_rows(tmp_path / "results.csv")[0]
    with RunHistory(tmp_path / row["run_dir"] / "history.sqlite") as history:
        trials = history.trials(finished_only=True)
    budgets = [stored.trial.budget for stored in trials]
    assert len(set(budgets)) > 1  # the search did use several budgets
    full = [stored.loss for stored in trials if stored.trial.budget == max(budgets)]
    curve = read_rows(tmp_path / row["curve"])
    assert sorted(float(point["loss"]) for point in curve) == sorted(full)


def test_cells_run_on_a_dask_cluster(tmp_path: Path) -> None:
    """``--cell-executor dask``: the cells are Dask tasks on real scheduler and worker
    processes, their rows the same as in-process ones."""
    pytest.importorskip("automl_executor_dask")
    tasks = [SuiteTask("keel:wine", {"dataset": "keel:wine", "test_size": 0.3})]
    varied = parse_vary(["search.strategy=random,smbo"])
    on_dask = ablate(
        RECIPE, tmp_path / "dask", varied=varied, tasks=tasks, seeds=[0], jobs=2,
        cell_executor="dask",
    )  # fmt: skip
    here = ablate(RECIPE, tmp_path / "here", varied=varied, tasks=tasks, seeds=[0])
    assert (on_dask.cells, on_dask.failed, here.failed) == (2, 0, 0)
    columns = ("variant", "task", "seed", "status", "validation_loss", "test_loss", "n_trials")
    rows = [
        [{key: row[key] for key in columns} for row in read_rows(folder / "results.csv")]
        for folder in (tmp_path / "dask", tmp_path / "here")
    ]
    assert rows[0] == rows[1]  # seeded runs: the same results wherever they ran


def test_the_twenty_task_quality_suite_is_the_quality_suites_first_twenty() -> None:
    plugins = load_plugins()
    full = [t.label for t in suite_tasks(read_suite("quality-classification", plugins), plugins)]
    twenty = suite_tasks(read_suite("quality-classification-20", plugins), plugins)
    assert [t.label for t in twenty] == full[:20]
    assert all(t.task.get("test_size") == 0.25 for t in twenty)
