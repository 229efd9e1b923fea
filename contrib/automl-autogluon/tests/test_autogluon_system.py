"""The autogluon systems: the core's metrics by AutoGluon's names (and, in AutoGluon's
environment, scored as the core scores them), the folder format's round trip with its dtypes,
the search curve from AutoGluon's leaderboard, the worker's process group killed past its
limit, clear errors for a failing worker and a missing environment, the job the worker gets,
and one real fit on iris (skipped without AutoGluon's environment). The checks every system
passes are in ``contrib/system_checks.py``; the kit's in test_autogluon_conformance.py."""

from __future__ import annotations

import ast
import json
import math
import pickle
import re
import signal
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_iris
from sklearn.metrics import balanced_accuracy_score
from sklearn.model_selection import train_test_split
from system_checks import check_classes, check_curve, fit

from automl_autogluon import system as ag_system
from automl_autogluon import worker
from automl_autogluon.system import (
    AUTOGLUON_METRICS,
    AutoGluonError,
    AutoGluonModel,
    AutoGluonSystem,
    WorkerTimeout,
    autogluon_metric,
    find_python,
    problem_type,
    run_worker,
    search_curve,
)
from automl_core.errors import PluginError
from automl_engine.metrics import METRICS, Metric, get_metric

# ---------------------------------------------------------------------------------------------
# Metrics and problem types
# ---------------------------------------------------------------------------------------------


def test_every_core_metric_has_an_autogluon_name():
    assert set(AUTOGLUON_METRICS) == set(METRICS)
    expected = {
        ("accuracy", "multiclass"): "accuracy",
        ("balanced_accuracy", "binary"): "balanced_accuracy",
        ("roc_auc", "binary"): "roc_auc",
        ("roc_auc", "multiclass"): "roc_auc_ovr",
        ("log_loss", "multiclass"): "log_loss",
        ("f1_macro", "binary"): "f1_macro",
        ("r2", "regression"): "r2",
        ("rmse", "regression"): "root_mean_squared_error",
        ("mse", "regression"): "mean_squared_error",
        ("mae", "regression"): "mean_absolute_error",
    }
    for (name, problem), autogluon_name in expected.items():
        assert autogluon_metric(get_metric(name), problem) == autogluon_name


def test_a_metric_autogluon_cannot_compute_is_a_clear_error():
    custom = Metric("shifted", "classification", get_metric("accuracy").score, optimum=11.0)
    with pytest.raises(ValueError, match="no AutoGluon metric for the run's metric 'shifted'"):
        autogluon_metric(custom, "multiclass")
    # a metric that only borrows a core metric's name is not that metric
    impostor = Metric("accuracy", "classification", get_metric("balanced_accuracy").score)
    with pytest.raises(ValueError, match="'accuracy'"):
        autogluon_metric(impostor, "binary")


def test_the_problem_type_is_given_never_inferred():
    assert problem_type("classification", np.array([0, 2, 2, 0])) == "binary"
    assert problem_type("classification", np.array([0, 2, 3])) == "multiclass"
    assert problem_type("regression", np.array([1.0, 2.0, 1.0])) == "regression"


def _score_requests(rng):
    """Random targets and predictions for every core metric, per problem type."""
    requests, expected = [], {}
    for problem, k in (("binary", 2), ("multiclass", 3)):
        y = np.concatenate([np.arange(k), rng.integers(0, k, 37)])
        proba = rng.dirichlet(np.ones(k), len(y))
        for name in ("accuracy", "balanced_accuracy", "roc_auc", "log_loss", "f1_macro"):
            key = f"{name}-{problem}"
            metric = get_metric(name)
            requests.append(
                {
                    "key": key,
                    "metric": autogluon_metric(metric, problem),
                    "problem_type": problem,
                    "y_true": y.tolist(),
                    "y_pred": proba.tolist(),
                }
            )
            expected[key] = metric.score(y, proba)
    y = rng.normal(size=40)
    values = y + rng.normal(scale=0.5, size=40)
    for name in ("r2", "rmse", "mse", "mae"):
        metric = get_metric(name)
        requests.append(
            {
                "key": name,
                "metric": autogluon_metric(metric, "regression"),
                "problem_type": "regression",
                "y_true": y.tolist(),
                "y_pred": values.tolist(),
            }
        )
        expected[name] = metric.score(y, values)
    return requests, expected


def _probe(python: Path, folder: Path, job: dict) -> dict:
    worker.write_json(
        folder / worker.JOB_FILE, {"protocol": worker.PROTOCOL, "mode": "probe", **job}
    )
    return run_worker(python, folder, 180, "probe")


def test_autogluon_scores_the_mapped_metrics_as_the_core_does(autogluon_python, tmp_path):
    """In AutoGluon's environment: each name exists for its problem type, and AutoGluon's
    scorer gives the core metric's value on the same predictions (in the metric's own sign)."""
    requests, expected = _score_requests(np.random.default_rng(0))
    report = _probe(autogluon_python, tmp_path, {"score": requests})

    for request in requests:
        assert request["metric"] in report["metrics"][request["problem_type"]]
    assert report["scores"].keys() == expected.keys()
    for key, value in expected.items():
        assert report["scores"][key] == pytest.approx(value, rel=1e-6, abs=1e-9), key


# ---------------------------------------------------------------------------------------------
# The folder format
# ---------------------------------------------------------------------------------------------


def mixed_frame() -> pd.DataFrame:
    """Every kind of column an ablation hands a system, with gaps."""
    return pd.DataFrame(
        {
            "float": [0.1, np.nan, 1 / 3, -2.5e300, 7.0],
            "int": np.array([1, -2, 3, 2**40, 0], dtype=np.int64),
            "nullable_int": pd.array([1, None, 3, 4, 5], dtype="Int64"),
            "flag": [True, False, True, True, False],
            # categories in their own order, one unused, and a gap
            "colour": pd.Categorical(
                ["red", None, "blue", "red", "green"],
                categories=["red", "green", "blue", "violet"],
            ),
            "int_category": pd.Categorical([3, 1, 3, 2, 1]),
            "origin": pd.Series(["north", None, "south", "north", ""], dtype=object),
            "text": pd.Series(["a b", "c", None, "a, b", "é"], dtype="string"),
            "when": pd.to_datetime(
                [
                    "2024-01-01 00:00",
                    None,
                    "2024-03-01 12:00",
                    "1999-12-31 23:59",
                    "2024-01-02 00:00",
                ]
            ),
            7: [1.5, 2.5, 3.5, 4.5, 5.5],  # a column named by a number
        }
    )


def check_round_trip(X: pd.DataFrame, back: pd.DataFrame) -> None:
    """What the worker reads is what was written: numbers exact (ints stay int64, gaps in
    nullable ints become NaN), categories as strings in their order, text as object."""
    assert list(back.columns) == [str(c) for c in X.columns]
    np.testing.assert_array_equal(back["float"], X["float"])
    assert back["int"].dtype == np.int64 and back["int"].tolist() == X["int"].tolist()
    assert back["nullable_int"].dtype == np.float64
    assert back["nullable_int"].isna().tolist() == [False, True, False, False, False]
    assert back["flag"].dtype == bool and back["flag"].tolist() == X["flag"].tolist()
    assert isinstance(back["colour"].dtype, pd.CategoricalDtype)
    assert list(back["colour"].cat.categories) == ["red", "green", "blue", "violet"]
    assert back["colour"].astype(object).where(back["colour"].notna(), None).tolist() == [
        "red", None, "blue", "red", "green"
    ]  # fmt: skip
    assert list(back["int_category"].cat.categories) == ["1", "2", "3"]
    assert back["origin"].dtype == object
    assert back["origin"].where(back["origin"].notna(), None).tolist() == [
        "north", None, "south", "north", ""
    ]  # fmt: skip
    assert back["text"].dtype == object
    assert back["text"].where(back["text"].notna(), None).tolist() == [
        "a b",
        "c",
        None,
        "a, b",
        "é",
    ]
    assert pd.api.types.is_datetime64_any_dtype(back["when"])
    np.testing.assert_array_equal(back["when"].to_numpy(), X["when"].to_numpy("datetime64[ns]"))
    np.testing.assert_array_equal(back["7"], X[7])


def test_the_frame_format_keeps_values_and_dtypes(tmp_path):
    X = mixed_frame()
    y = np.array([0, 2, 3, 2, 0])
    worker.write_frame(tmp_path, "train", X, y)
    back, y_back = worker.read_frame(tmp_path, "train")

    check_round_trip(X, back)
    assert y_back.dtype == y.dtype and y_back.tolist() == y.tolist()
    worker.write_frame(tmp_path, "X", X)
    assert worker.read_frame(tmp_path, "X")[1] is None  # no target
    # no pickle inside: numpy's format only
    with np.load(tmp_path / "train.npz", allow_pickle=False) as arrays:
        assert all(arrays[name].dtype != object for name in arrays.files)


def test_the_frame_format_reads_back_in_autogluons_environment(autogluon_python, tmp_path):
    """The same round trip in AutoGluon's environment, with its pandas (< 3)."""
    X = mixed_frame()
    worker.write_frame(tmp_path, "X", X, np.array([0.5, 1.5, 2.5, 3.5, 4.5]))
    report = _probe(autogluon_python, tmp_path, {})

    assert report["pandas_version"].startswith("2.")
    assert report["dtypes"] == {
        "float": "float64",
        "int": "int64",
        "nullable_int": "float64",
        "flag": "bool",
        "colour": "category",
        "int_category": "category",
        "origin": "object",
        "text": "object",
        "when": "datetime64[ns]",
        "7": "float64",
    }
    assert report["categories"] == {
        "colour": ["red", "green", "blue", "violet"],
        "int_category": ["1", "2", "3"],
    }
    assert report["missing"] == {
        "float": 1, "int": 0, "nullable_int": 1, "flag": 0, "colour": 1, "int_category": 0,
        "origin": 1, "text": 1, "when": 1, "7": 0,
    }  # fmt: skip
    assert report["values"]["float"][:3] == [0.1, None, 1 / 3]  # exact
    assert report["values"]["origin"] == ["north", None, "south", "north", ""]
    assert report["target"] == [0.5, 1.5, 2.5, 3.5, 4.5]


def test_column_names_must_be_distinct_as_text(tmp_path):
    X = pd.DataFrame([[1, 2]], columns=[1, "1"])
    with pytest.raises(ValueError, match="distinct as text"):
        worker.write_frame(tmp_path, "X", X)


def test_probabilities_are_put_in_the_order_of_the_labels():
    proba = pd.DataFrame({3: [0.2, 0.5], 0: [0.7, 0.1], 2: [0.1, 0.4]})
    np.testing.assert_allclose(
        worker.ordered_probabilities(proba, [0, 2, 3]), [[0.7, 0.1, 0.2], [0.1, 0.4, 0.5]]
    )
    # a label AutoGluon dropped gets zeros, and the rows still sum to 1
    dropped = worker.ordered_probabilities(pd.DataFrame({0: [0.5], 3: [0.3]}), [0, 2, 3])
    np.testing.assert_allclose(dropped, [[0.625, 0.0, 0.375]])
    with pytest.raises(ValueError, match=r"classes \[9\]"):
        worker.ordered_probabilities(pd.DataFrame({0: [0.5], 9: [0.5]}), [0, 2])


@pytest.mark.parametrize("threshold", [0.2, 0.5, 0.73, 0.0, 1.0])
@pytest.mark.parametrize("positive", [0, 1])
def test_a_calibrated_threshold_becomes_the_most_probable_class(threshold, positive):
    """AutoGluon predicts the positive class where its probability exceeds the threshold;
    after the mapping the core's most probable class is that prediction, the rows keep
    their order, and each row is a distribution."""
    p = np.array([0.0, 0.1, 0.2, 0.21, 0.5, 0.72, 0.73, 0.74, 0.99, 1.0])
    proba = np.zeros((len(p), 2))
    proba[:, positive], proba[:, 1 - positive] = p, 1 - p
    mapped = worker.apply_decision_threshold(proba, positive, threshold)

    assert (mapped.argmax(axis=1) == positive).tolist() == (p > threshold).tolist()
    assert np.all(np.diff(mapped[:, positive]) >= 0)
    np.testing.assert_allclose(mapped.sum(axis=1), 1.0)
    assert mapped.min() >= 0 and mapped.max() <= 1


def test_the_worker_imports_only_autogluon_pandas_numpy_and_the_standard_library():
    """It runs in AutoGluon's environment, where automl-core is not installed."""
    tree = ast.parse(Path(worker.__file__).read_text())
    imported = {
        alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
        for alias in node.names
    } | {
        node.module.split(".")[0] for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0
    }  # fmt: skip
    import sys

    outside = {name for name in imported if name not in sys.stdlib_module_names}
    assert outside <= {"autogluon", "numpy", "pandas", "__future__"}, outside


# ---------------------------------------------------------------------------------------------
# The search curve
# ---------------------------------------------------------------------------------------------


def _result(models, best, fit_ended=110.0):
    return {"models": models, "model_best": best, "timings": {"fit_ended": fit_ended}}


def _model(name, score, finished):
    return {"model": name, "score": score, "finished_at": finished}


def test_the_curve_is_the_leaderboard_in_the_cores_convention():
    started = 100.0
    models = [
        _model("LightGBM", 0.8, 103.0),
        _model("NeuralNetFastAI", 0.9, 102.0),  # finished first: its point comes first
        _model("CatBoost", None, 104.0),  # no validation score: left out
        _model("XGBoost", 0.85, None),  # no moment recorded: the fit's end
        _model("WeightedEnsemble_L2", 0.95, 105.0),
    ]
    curve, loss = search_curve(
        _result(models, "WeightedEnsemble_L2"), get_metric("accuracy"), started
    )
    assert [s for s, _ in curve] == [2.0, 3.0, 5.0, 10.0]
    assert [loss for _, loss in curve] == pytest.approx([0.1, 0.2, 0.05, 0.15])
    assert loss == pytest.approx(0.05)

    # an error metric: AutoGluon's score in the metric's own sign is the loss
    models = [_model("LightGBM", 12.5, 101.0), _model("WeightedEnsemble_L2", 11.0, 102.0)]
    curve, loss = search_curve(_result(models, "WeightedEnsemble_L2"), get_metric("rmse"), started)
    assert curve == [(1.0, 12.5), (2.0, 11.0)] and loss == 11.0


def test_a_calibrated_threshold_is_the_curves_last_point():
    """AutoGluon's leaderboard scores the chosen model at the threshold 0.5; the model it
    returns applies the calibrated threshold, whose validation score ends the curve."""
    models = [_model("LightGBM", 0.6, 101.0), _model("WeightedEnsemble_L2", 0.65, 102.0)]
    result = {**_result(models, "WeightedEnsemble_L2", fit_ended=104.0), "calibrated_score": 0.72}
    curve, loss = search_curve(result, get_metric("balanced_accuracy"), 100.0)
    assert [s for s, _ in curve] == [1.0, 2.0, 4.0]
    assert [loss for _, loss in curve] == pytest.approx([0.4, 0.35, 0.28])
    assert loss == pytest.approx(0.28)


def test_a_chosen_refit_has_the_loss_of_the_model_it_refits():
    models = [
        _model("LightGBM_BAG_L1", 0.9, 101.0),
        _model("WeightedEnsemble_L2", 0.95, 102.0),
        _model("WeightedEnsemble_L2_FULL", None, 103.0),
    ]
    result = _result(models, "WeightedEnsemble_L2_FULL")
    curve, loss = search_curve(result, get_metric("balanced_accuracy"), 100.0)
    assert len(curve) == 2 and loss == pytest.approx(0.05)


# ---------------------------------------------------------------------------------------------
# The subprocess: limits, errors, the environment, the job
# ---------------------------------------------------------------------------------------------


def _iris():
    X, y = load_iris(return_X_y=True, as_frame=True)
    return tuple(train_test_split(X, y.to_numpy(), test_size=0.3, stratify=y, random_state=0))


def _alive(pid: int) -> bool:
    """Whether the process runs (a zombie, killed and not yet reaped by init, does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state not in ("Z", "X")


@pytest.mark.parametrize("ignore_term", [False, True], ids=["terminated", "killed"])
def test_a_worker_past_its_limit_is_stopped_with_its_children(
    fake_python, tmp_path, monkeypatch, ignore_term
):
    """A worker that never ends, and a child of its (as AutoGluon's Ray workers are): both are
    gone when the fit raises, one second past the budget (SIGTERM to the process group, then
    SIGKILL for a worker that ignores it)."""
    pid_file = tmp_path / "child.pid"
    monkeypatch.setenv("FAKE_MODE", "sleep")
    monkeypatch.setenv("FAKE_PID_FILE", str(pid_file))
    if ignore_term:
        monkeypatch.setenv("FAKE_IGNORE_TERM", "1")
    monkeypatch.setattr(ag_system, "TERMINATE_GRACE", 0.5)
    system = AutoGluonSystem(timeout_margin=1.0, python=str(fake_python))
    X_train, _, y_train, _ = _iris()
    workdir = tmp_path / "cell"
    workdir.mkdir()

    signals: list[int] = []  # sent to the worker's group, in order
    real_kill_group = ag_system.kill_group

    def recorded(pgid: int, sig: int = signal.SIGKILL) -> None:
        signals.append(sig)
        real_kill_group(pgid, sig)

    monkeypatch.setattr(ag_system, "kill_group", recorded)
    # The worker never ends by itself: the fit returning at all is the kill; the message
    # gives the limit it was waited for (the budget and the margin), the record the signals.
    with pytest.raises(
        WorkerTimeout, match=r"fit worker was still running after 2 s and was killed"
    ):
        fit(system, X_train, y_train, workdir, budget=1.0)
    assert signals == [signal.SIGTERM, signal.SIGKILL]

    child = int(pid_file.read_text())
    deadline = time.monotonic() + 30  # a grace for the kill, not a bound
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child), "the worker's child outlived it"
    assert (workdir / "autogluon.log").exists()


def test_a_failing_worker_is_a_clear_error_with_the_end_of_its_stderr(
    fake_python, tmp_path, monkeypatch
):
    monkeypatch.setenv("FAKE_MODE", "fail")
    monkeypatch.setenv("FAKE_MESSAGE", "ValueError: AutoGluon refused the data")
    system = AutoGluonSystem(python=str(fake_python))
    X_train, _, y_train, _ = _iris()
    with pytest.raises(AutoGluonError) as raised:
        fit(system, X_train, y_train, tmp_path)
    first, *rest = str(raised.value).splitlines()
    # the first line is what an ablation's results.csv keeps of a failed cell
    assert first == (
        "autogluon: the fit worker failed with exit code 1: ValueError: AutoGluon refused the data"
    )
    assert rest[0] == "Traceback (most recent call last):"
    assert "ValueError: AutoGluon refused the data" in (tmp_path / "autogluon.log").read_text()


def test_an_environment_without_autogluon_names_the_make_command(
    fake_python, tmp_path, monkeypatch
):
    monkeypatch.setenv("FAKE_MODE", "fail")
    monkeypatch.setenv("FAKE_MESSAGE", "ModuleNotFoundError: No module named 'autogluon'")
    system = AutoGluonSystem(python=str(fake_python))
    X_train, _, y_train, _ = _iris()
    with pytest.raises(AutoGluonError, match="has no AutoGluon: `make autogluon-env` installs it"):
        fit(system, X_train, y_train, tmp_path)


def test_a_worker_that_writes_no_result_is_an_error(fake_python, tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_MODE", "silent")
    system = AutoGluonSystem(python=str(fake_python))
    X_train, _, y_train, _ = _iris()
    with pytest.raises(AutoGluonError, match=r"ended without writing result\.json\ndone, but no"):
        fit(system, X_train, y_train, tmp_path)


def test_without_the_environment_a_system_is_refused_with_the_make_command(tmp_path, monkeypatch):
    import automl_bench.plugin

    import automl_autogluon.plugin
    from automl_core.plugins import load_plugins

    monkeypatch.delenv(ag_system.PYTHON_ENV, raising=False)
    monkeypatch.setattr(ag_system, "DEFAULT_PYTHON", tmp_path / ".venv-autogluon/bin/python")
    with pytest.raises(PluginError, match="AutoGluon's environment is missing") as raised:
        find_python()
    assert "`make autogluon-env`" in str(raised.value)
    assert ag_system.PYTHON_ENV in str(raised.value)

    # installing the adapter breaks nothing: registered, not broken; building one is refused
    loaded = load_plugins(extra=[automl_bench.plugin, automl_autogluon.plugin], entry_points=False)
    assert not loaded.broken
    assert {"autogluon", "autogluon-best"} <= set(loaded.registry.names("system"))
    with pytest.raises(PluginError, match="make autogluon-env"):
        loaded.create("system", "autogluon-best", {})
    with pytest.raises(ValueError, match="make autogluon-env"):
        AutoGluonSystem()

    # an interpreter named by the environment variable that does not exist
    monkeypatch.setenv(ag_system.PYTHON_ENV, str(tmp_path / "nowhere/python"))
    with pytest.raises(PluginError, match=r"nowhere/python \(from \$AUTOML_AUTOGLUON_PYTHON\)"):
        find_python()


def test_the_systems_are_registered_through_their_entry_point(fake_python, monkeypatch):
    """Registered where the environment exists: here an interpreter named by
    ``$AUTOML_AUTOGLUON_PYTHON`` (the fake one: nothing is run)."""
    from automl_core.plugins import load_plugins

    monkeypatch.setenv(ag_system.PYTHON_ENV, str(fake_python))
    monkeypatch.setenv("AUTOML_LOAD_PLUGINS", "bench,automl-autogluon")
    plugins = load_plugins()
    assert not plugins.broken, plugins.broken
    for name, presets in (("autogluon", None), ("autogluon-best", "best_quality")):
        registration = plugins.get("system", name)
        assert registration.origin.distribution == "automl-autogluon"
        system = plugins.create("system", name)
        assert isinstance(system, AutoGluonSystem) and system.presets == presets
        assert system.python == fake_python
    system = plugins.create("system", "autogluon", {"presets": ["high_quality", "ignore_text"]})
    assert system.presets == ["high_quality", "ignore_text"]


@pytest.mark.parametrize(
    ("params", "message"),
    [
        (
            {"presets": "extreme_quality"},
            r"unknown or unsupported preset\(s\) \['extreme_quality'\]",
        ),
        ({"presets": []}, "presets must be a preset's name or a list of them"),
        ({"presets": 3}, "presets must be a preset's name or a list of them"),
        ({"settings": {"time_limit": 5}}, r"settings may not set \['time_limit'\]"),
        (
            {"settings": {"num_cpus": 4, "path": "x"}},
            r"settings may not set \['num_cpus', 'path'\]",
        ),
        ({"settings": {"hyperparameters": {"GBM": object()}}}, "settings must be plain data"),
        ({"reserve": 0.5}, r"reserve must be in \[0, 0.5\)"),
        ({"timeout_margin": 0}, "timeout_margin must be a positive number"),
        ({"predict_timeout": -1}, "predict_timeout must be a positive number"),
        ({"verbosity": 5}, "verbosity must be 0 to 4"),
    ],
)
def test_a_bad_parameter_is_a_clear_error(fake_python, monkeypatch, params, message):
    from automl_core.plugins import load_plugins

    monkeypatch.setenv(ag_system.PYTHON_ENV, str(fake_python))
    monkeypatch.setenv("AUTOML_LOAD_PLUGINS", "bench,automl-autogluon")
    plugins = load_plugins()
    with pytest.raises(
        PluginError, match=f"cannot build system 'autogluon'.*: autogluon: {message}"
    ):
        plugins.create("system", "autogluon", params)


def test_the_worker_gets_the_cells_metric_budget_seed_and_cores(
    fake_python, tmp_path, monkeypatch, wine
):
    """The job ``autogluon-best`` hands its worker, kept by a fake worker: AutoGluon's name of
    the run's metric, the problem type, the preset, the deadline, the seed, the cores; the
    rows with their kinds of column."""
    record = tmp_path / "record"
    record.mkdir()
    monkeypatch.setenv("FAKE_MODE", "record")
    monkeypatch.setenv("FAKE_RECORD", str(record))
    X_train, _, y_train, _ = wine
    rows = y_train != 1
    system = ag_system.AutoGluonBestSystem(python=str(fake_python), settings={"num_bag_folds": 5})
    started = time.time()
    with pytest.raises(AutoGluonError, match="recorded"):
        system.fit(
            X_train[rows],
            y_train[rows],
            task="classification",
            metric=get_metric("roc_auc"),
            time_budget=60,
            seed=7,
            n_jobs=2,
            workdir=tmp_path,
        )
    job = json.loads((record / "job.json").read_text())
    assert job["mode"] == "fit" and job["presets"] == "best_quality"
    assert job["problem_type"] == "binary" and job["eval_metric"] == "roc_auc"
    assert job["seed"] == 7 and job["num_cpus"] == 2
    assert started + 60 <= job["deadline"] <= time.time() + 60
    assert job["reserve"] == 3.0  # 5 % of 60 s
    assert job["settings"] == {"num_bag_folds": 5}
    assert job["label"] not in X_train.columns
    schema = json.loads((record / "train.json").read_text())
    kinds = {column["name"]: column["kind"] for column in schema["columns"]}
    assert kinds["colour"] == "category" and kinds["origin"] == "string"
    assert kinds["alcohol"] == "number" and schema["rows"] == rows.sum()


def test_a_record_names_the_checkouts_interpreter_relative_to_it(tmp_path):
    """A peer record (committed with a grid's rows) names no machine's absolute path for the
    checkout's own environment; an interpreter elsewhere is named as given."""
    assert ag_system.shown_python(ag_system.DEFAULT_PYTHON) == ".venv-autogluon/bin/python"
    elsewhere = tmp_path / "env" / "bin" / "python"
    assert ag_system.shown_python(elsewhere) == str(elsewhere)


def test_the_checkouts_environment_reached_through_a_link_is_named_relative(tmp_path, monkeypatch):
    """A grid run from a worktree links the checkout's environment into it; the records
    still name it relative to the checkout, not by the linked machine path."""
    checkout, worktree = tmp_path / "checkout", tmp_path / "worktree"
    (checkout / ".venv-autogluon" / "bin").mkdir(parents=True)
    (checkout / ".venv-autogluon" / "bin" / "python").touch()
    worktree.mkdir()
    (worktree / ".venv-autogluon").symlink_to(checkout / ".venv-autogluon")
    monkeypatch.setattr(ag_system, "CHECKOUT", worktree)
    monkeypatch.setattr(ag_system, "DEFAULT_PYTHON", worktree / ".venv-autogluon/bin/python")
    linked = checkout / ".venv-autogluon" / "bin" / "python"
    assert ag_system.shown_python(linked) == ".venv-autogluon/bin/python"


def test_the_hard_limit_leaves_autogluon_room_to_overrun():
    system = AutoGluonSystem.__new__(AutoGluonSystem)
    system.timeout_margin = None
    assert system.hard_limit(60) == 60 + 30 + 15
    system.timeout_margin = 5.0
    assert system.hard_limit(60) == 65


# ---------------------------------------------------------------------------------------------
# The real thing (AutoGluon's environment)
# ---------------------------------------------------------------------------------------------

#: The budget of the real fit on iris.
IRIS_BUDGET = 20.0


def test_autogluon_on_iris(autogluon_python, system_plugins, tmp_path):
    """``--peer autogluon`` as the ablation runs it: a real AutoGluon fit on iris given a time
    limit within its budget, optimising the run's metric; a model that
    follows scikit-learn's class convention and predicts the same after pickling; a sound
    curve; JSON-safe info; AutoGluon's log and leaderboard in the cell's folder."""
    X_train, X_test, y_train, y_test = _iris()
    system = system_plugins.create("system", "autogluon")
    result, elapsed = fit(system, X_train, y_train, tmp_path, budget=IRIS_BUDGET)

    # within its budget by the mechanism, not a clock margin: the time limit handed to
    # AutoGluon is below the budget (asserted below), and the hard limit that kills an
    # overrunning worker is tested on its own (test_the_hard_limit_...)
    assert isinstance(result.model, AutoGluonModel)
    proba = check_classes(result.model, X_test, y_train)
    assert balanced_accuracy_score(y_test, proba.argmax(axis=1)) > 0.9
    check_curve(result, elapsed)
    assert len(result.curve) >= 2  # several models, and the weighted ensemble
    info = json.loads(json.dumps(result.info))
    assert info["autogluon_version"].startswith("1.6")
    assert info["python"] == ag_system.shown_python(find_python())
    assert info["eval_metric"] == "balanced_accuracy" and info["problem_type"] == "multiclass"
    assert info["presets"] is None and info["time_limit"] < IRIS_BUDGET
    assert "AutoGluon training complete" in (tmp_path / "autogluon.log").read_text()
    assert (tmp_path / "autogluon-leaderboard.csv").exists()

    restored = pickle.loads(pickle.dumps(result.model))
    assert restored.home != result.model.home
    np.testing.assert_allclose(restored.predict_proba(X_test), proba)
    home = result.model.home
    del result, restored
    import gc

    gc.collect()
    assert not home.exists()  # the model's temporary folder goes with it
    assert all(math.isfinite(v) for v in proba.ravel())


def test_autogluon_on_a_binary_task_scores_its_own_predictions(autogluon_python, tmp_path):
    """An imbalanced binary task and the balanced accuracy, for which AutoGluon calibrates
    the threshold of its ``predict``: the model's most probable class is AutoGluon's own
    prediction, and the validation loss is the chosen model's with that threshold (the
    curve's last point, better than the leaderboard's at 0.5)."""
    from sklearn.datasets import make_classification

    X, y = make_classification(
        600, n_features=8, n_informative=4, weights=[0.85], flip_y=0.05, random_state=3
    )
    X = pd.DataFrame(X, columns=[f"x{i}" for i in range(8)])
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=0.3, stratify=y, random_state=0
    )
    system = AutoGluonSystem(settings={"hyperparameters": {"GBM": {}, "RF": {}}})
    result, elapsed = fit(system, X_train, y_train, tmp_path, budget=15.0)

    assert result.info["problem_type"] == "binary"
    threshold = result.info["decision_threshold"]
    assert threshold is not None and 0 < threshold < 0.5  # the minority class needs less
    check_curve(result, elapsed)
    assert result.validation_loss == result.curve[-1][1]
    at_threshold_half = [1 - m["score"] for m in result.info["leaderboard"] if m["score"]]
    assert result.validation_loss < min(at_threshold_half)
    # the score AutoGluon logged for its calibration: "Best Threshold: 0.207 | val: 0.9357"
    log = (tmp_path / "autogluon.log").read_text()
    logged = re.search(r"Best Threshold: ([\d.]+)\s*\| val: ([\d.]+)", log)
    assert logged and float(logged[1]) == pytest.approx(threshold, abs=1e-3)
    assert result.validation_loss == pytest.approx(1 - float(logged[2]), abs=1e-4)
    proba = check_classes(result.model, X_test, y_train)
    assert balanced_accuracy_score(y_test, proba.argmax(axis=1)) > 0.7
    assert "Traceback" not in (tmp_path / "autogluon.log").read_text()

    worker.write_frame(tmp_path, "X", X_test)
    job = {"protocol": worker.PROTOCOL, "mode": "predict", "with_labels": True,
           "predictor": str(result.model.predictor_path), "labels": [0, 1]}  # fmt: skip
    worker.write_json(tmp_path / worker.JOB_FILE, job)
    run_worker(autogluon_python, tmp_path, 180, "predict")
    own = np.load(tmp_path / worker.LABELS_FILE)
    np.testing.assert_array_equal(result.model.predict(X_test), own)
    at_half = (np.load(tmp_path / worker.PREDICTIONS_FILE)[:, 1] > 0.5).astype(int)
    np.testing.assert_array_equal(at_half, own)
