"""AutoGluon-Tabular as a whole-system peer (``automl ablate --peer autogluon``,
``--peer autogluon-best``), run in AutoGluon's own virtual environment.

AutoGluon 1.6 pins pandas < 3 and brings torch, Ray, CatBoost, spaCy and more, so it cannot
live in the project's environment. It lives in ``.venv-autogluon`` (``make autogluon-env``),
and this adapter runs it in a subprocess: :func:`find_python` finds the interpreter
(``$AUTOML_AUTOGLUON_PYTHON``, else ``<checkout>/.venv-autogluon/bin/python``), and
:func:`run_worker` runs :mod:`automl_autogluon.worker` there by its file path on a temporary
folder that holds the rows (see the worker's folder format) and ``job.json``.

AutoGluon gets what a run of the same ablation cell gets:

* **Metric.** The run's metric by AutoGluon's name for it (:func:`autogluon_metric`): its
  model selection, its weighted ensemble and its validation scores follow it. A metric
  AutoGluon has no equivalent of is a clear error.
* **Budget.** The worker computes AutoGluon's ``time_limit`` from the fit's deadline
  (``time_budget`` seconds after ``fit`` began) once AutoGluon is imported, less a reserve for
  what follows AutoGluon's fit; so starting the process, importing AutoGluon (1 to 4 s) and
  writing the rows count against the budget. AutoGluon's ``time_limit`` is approximate: a
  process still running ``timeout_margin`` seconds after the budget is killed, with its whole
  process group (Ray's daemons; Ray's workers, in sessions of their own, end with them).
* **Cores and seed.** ``num_cpus=n_jobs``, ``num_gpus=0``; ``seed`` is AutoGluon's learner
  ``random_state`` (its holdout split and bagging folds) and bagged models'
  ``model_random_seed``. AutoGluon has no seed for the models of a non-bagged fit (the default
  preset): they keep AutoGluon's fixed model seed 0.
* **Labels.** The training labels go to AutoGluon as they are (integers); the model's
  ``classes_`` are those labels, sorted, and ``predict_proba`` has a column per label in
  that order (the worker reorders AutoGluon's columns by label). The core places the columns
  among all the dataset's classes.
* **Decision threshold.** For a binary problem and a label metric (the balanced accuracy,
  F1) AutoGluon calibrates the threshold its ``predict`` applies to the positive class's
  probability; the core scores the most probable class. Where the threshold is not 0.5 the
  probabilities are mapped so that it becomes 0.5 (:func:`worker.apply_decision_threshold`,
  increasing: rankings are unchanged), so the core scores AutoGluon's own predictions.

The returned model predicts through the same worker (``predict`` mode) from the predictor
AutoGluon saved into a temporary folder that the model owns and removes when it is garbage
collected; a pickled model carries the predictor folder with it.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import math
import numbers
import os
import shutil
import signal
import subprocess
import tarfile
import tempfile
import time
import weakref
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from automl_bench.contracts import System, SystemResult

from automl_autogluon import worker
from automl_core.errors import PluginError
from automl_engine.metrics import METRICS, Metric

#: The environment variable naming AutoGluon's interpreter.
PYTHON_ENV = "AUTOML_AUTOGLUON_PYTHON"
#: The checkout this package lies in (installed editable, as ``make install`` does).
CHECKOUT = Path(__file__).resolve().parents[3]
#: Where ``make autogluon-env`` builds AutoGluon's environment.
DEFAULT_PYTHON = CHECKOUT / ".venv-autogluon" / "bin" / "python"
MAKE_COMMAND = "make autogluon-env"
WORKER_FILE = Path(worker.__file__).resolve()
LOG_FILE = "autogluon.log"
LEADERBOARD_FILE = "autogluon-leaderboard.csv"

#: The core's metrics by AutoGluon's names: one name, or one per problem type. Each is
#: checked against AutoGluon's scorer on the same predictions (tests/test_autogluon_system.py).
AUTOGLUON_METRICS: dict[str, str | dict[str, str]] = {
    "accuracy": "accuracy",
    "balanced_accuracy": "balanced_accuracy",
    # the core's multiclass ROC AUC: one-vs-rest, macro-averaged
    "roc_auc": {"binary": "roc_auc", "multiclass": "roc_auc_ovr"},
    "log_loss": "log_loss",
    "f1_macro": "f1_macro",
    "r2": "r2",
    "rmse": "root_mean_squared_error",
    "mse": "mean_squared_error",
    "mae": "mean_absolute_error",
}

#: AutoGluon 1.6's presets (and aliases) that run here: the quality presets for CPUs and
#: those that change one aspect of a fit. ``extreme_quality``, ``noncommercial`` and
#: ``tabarena`` load pre-trained tabular foundation models from a model hub and want a GPU.
PRESETS = (
    "best_quality",
    "best_quality_v150",
    "high_quality",
    "high_quality_v150",
    "good_quality",
    "medium_quality",
    "optimize_for_deployment",
    "interpretable",
    "ignore_text",
    "ignore_text_ngrams",
    "best",
    "high",
    "good",
    "medium",
    "bq",
    "hq",
    "gq",
    "mq",
)
#: ``TabularPredictor.fit`` keywords this system sets from the ablation's cell, or that have
#: their own parameter: never passed in ``settings``.
OWNED_SETTINGS = frozenset(
    {
        "train_data",
        "tuning_data",
        "time_limit",
        "presets",
        "num_cpus",
        "num_gpus",
        "callbacks",
        "label",
        "eval_metric",
        "problem_type",
        "path",
        "verbosity",
    }
)
#: AutoGluon gets at least this many seconds, even when start-up used up the budget.
MIN_TIME_LIMIT = 1.0
#: Seconds between asking a timed-out worker's process group to stop and killing it.
TERMINATE_GRACE = 5.0
#: How much of a failed worker's stderr an error quotes.
TAIL_LINES = 25
TAIL_CHARS = 4000


class AutoGluonError(RuntimeError):
    """The AutoGluon worker failed, or gave no result. The first line says what happened;
    the rest is the end of the worker's stderr."""


class WorkerTimeout(AutoGluonError):
    """The worker ran past its hard limit and was killed, with its process group."""


# ---------------------------------------------------------------------------------------------
# The environment
# ---------------------------------------------------------------------------------------------


def find_python(explicit: str | os.PathLike[str] | None = None) -> Path:
    """AutoGluon's interpreter: ``explicit``, else ``$AUTOML_AUTOGLUON_PYTHON``, else
    ``<checkout>/.venv-autogluon/bin/python``. A :class:`~automl_core.errors.PluginError` that
    says how to build the environment when it does not exist."""
    if explicit is not None:
        where, origin = Path(explicit), "the system's python parameter"
    elif os.environ.get(PYTHON_ENV):
        where, origin = Path(os.environ[PYTHON_ENV]), f"${PYTHON_ENV}"
    else:
        where, origin = DEFAULT_PYTHON, None
    if where.is_file() and os.access(where, os.X_OK):
        return where
    if origin is None:
        raise PluginError(
            f"AutoGluon's environment is missing: {where} does not exist. AutoGluon 1.6 needs "
            f"pandas < 3, so it runs in an environment of its own: build it with "
            f"`{MAKE_COMMAND}` in {CHECKOUT} (a few minutes, ~2.7 GB), or set {PYTHON_ENV} to "
            "the python of an environment with autogluon.tabular 1.6 installed"
        )
    raise PluginError(
        f"AutoGluon's interpreter {where} (from {origin}) is not an executable file: build "
        f"the environment with `{MAKE_COMMAND}` in {CHECKOUT}, or point {PYTHON_ENV} at the "
        "python of an environment with autogluon.tabular 1.6 installed"
    )


def shown_python(python: Path) -> str:
    """The interpreter as a record may name it: relative to the checkout when it is the
    checkout's own environment (a record committed from one machine names no other
    machine's paths), also when that environment is reached through a link (a grid run from
    a worktree, benchmarks/frozen_grid.sh, links the checkout's); else as given."""
    python = Path(python)
    try:
        return str(python.relative_to(CHECKOUT))
    except ValueError:
        pass
    environment = DEFAULT_PYTHON.parent.parent  # compared as folders: a venv's python
    if python.parent.parent.resolve() == environment.resolve():  # links to its base one
        return str((environment / "bin" / python.name).relative_to(CHECKOUT))
    return str(python)


def run_worker(python: Path, folder: Path, timeout: float, what: str) -> dict[str, Any]:
    """Run the worker on ``folder`` (its ``job.json`` and frames) with ``python`` and return
    its ``result.json``. The worker gets its own session, so that past ``timeout`` seconds
    its whole process group is stopped (Ray's daemons with it; Ray's workers, in sessions of
    their own, end with their raylet): SIGTERM, then SIGKILL after :data:`TERMINATE_GRACE`
    seconds. A worker that ended is followed by SIGKILL to what is left of its group (it
    ends with ``os._exit``, leaving Ray's shutdown to this). Its output is in
    ``folder/worker.out`` and ``folder/worker.err``. ``what`` names the job in errors."""
    command = [str(python), "-I", str(WORKER_FILE), str(folder)]
    # -I ignores PYTHONPATH and the like; VIRTUAL_ENV would name the calling environment.
    env = {key: value for key, value in os.environ.items() if key != "VIRTUAL_ENV"}
    out_path, err_path = folder / "worker.out", folder / "worker.err"
    with out_path.open("wb") as out, err_path.open("wb") as err:
        try:
            process = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                env=env,
                start_new_session=True,
            )
        except OSError as error:
            raise AutoGluonError(f"autogluon: cannot start {python}: {error}") from None
        try:
            returncode = process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            stop_process_group(process)
            raise WorkerTimeout(
                f"autogluon: the {what} worker was still running after {timeout:.0f} s and was "
                f"killed with its process group\n{tail(err_path)}"
            ) from None
        except BaseException:  # interrupted: leave no AutoGluon running behind
            stop_process_group(process)
            raise
        kill_group(process.pid)  # anything the worker left behind (a Ray daemon)
    if returncode != 0:
        text = tail(err_path)
        last = next((line for line in reversed(text.splitlines()) if line.strip()), "")
        hint = ""
        if "No module named 'autogluon" in text:
            hint = f" ({python} has no AutoGluon: `{MAKE_COMMAND}` installs it)"
        raise AutoGluonError(
            f"autogluon: the {what} worker failed with exit code {returncode}{hint}: "
            f"{last.strip()}\n{text}"
        )
    result_path = folder / worker.RESULT_FILE
    if not result_path.is_file():
        raise AutoGluonError(
            f"autogluon: the {what} worker ended without writing {worker.RESULT_FILE}\n"
            f"{tail(err_path)}"
        )
    result: dict[str, Any] = json.loads(result_path.read_text(encoding="utf-8"))
    if result.get("protocol") != worker.PROTOCOL:
        raise AutoGluonError(
            f"autogluon: the {what} worker speaks protocol {result.get('protocol')!r}, this "
            f"adapter {worker.PROTOCOL}"
        )
    return result


def stop_process_group(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the process's group, SIGKILL after :data:`TERMINATE_GRACE` seconds (to the
    group again: children outlive their leader), then reap the process."""
    kill_group(process.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=TERMINATE_GRACE)
    kill_group(process.pid, signal.SIGKILL)
    process.wait()


def kill_group(pgid: int, sig: int = signal.SIGKILL) -> None:
    """``sig`` to the process group ``pgid`` (the leader's pid: it was started with its own
    session), if any process of it is left."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def tail(path: Path) -> str:
    """The last :data:`TAIL_LINES` lines (at most :data:`TAIL_CHARS` characters) of a log."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "(no stderr)"
    lines = text.rstrip().splitlines()[-TAIL_LINES:]
    return "\n".join(lines)[-TAIL_CHARS:] or "(stderr is empty)"


# ---------------------------------------------------------------------------------------------
# Metrics, problem types and the search curve
# ---------------------------------------------------------------------------------------------


def problem_type(task: str, y: np.ndarray) -> str:
    """AutoGluon's problem type: ``binary`` or ``multiclass`` by the labels of ``y``, or
    ``regression`` (given, never inferred: integer-valued targets stay regression)."""
    if task == "regression":
        return "regression"
    return "binary" if len(np.unique(y)) == 2 else "multiclass"


def autogluon_metric(metric: Metric, problem: str) -> str:
    """AutoGluon's name for the core's ``metric`` on a ``problem`` (:func:`problem_type`); a
    ``ValueError`` for a metric AutoGluon has no equivalent of (one that is not the core's)."""
    name = AUTOGLUON_METRICS.get(metric.name)
    if name is None or METRICS.get(metric.name) != metric:
        raise ValueError(
            f"autogluon: no AutoGluon metric for the run's metric {metric.name!r}: AutoGluon "
            f"runs in another process and optimises only the core's metrics "
            f"{sorted(AUTOGLUON_METRICS)}"
        )
    return name if isinstance(name, str) else name[problem]


def search_curve(
    result: dict[str, Any], metric: Metric, started: float
) -> tuple[list[tuple[float, float]], float | None]:
    """The anytime curve and the validation loss of a fit's ``result``: one ``(seconds since
    the fit began, loss)`` per model AutoGluon trained and validated (the weighted ensembles
    included), at the moment it finished, in the core's convention (``metric.loss`` of
    AutoGluon's score in the metric's own sign); and the loss of the model AutoGluon chose.
    Refits on all rows (``*_FULL``) have no validation score: not in the curve, and a chosen
    refit has the loss of the model it refits. Where AutoGluon calibrated a binary decision
    threshold (a step after its models' fits), the chosen model with that threshold is the
    curve's last point, at the fit's end, and its loss is the validation loss."""
    fallback = result["timings"]["fit_ended"]
    losses: dict[str, float] = {}
    curve = []
    for model in result["models"]:
        if model["score"] is None:
            continue
        loss = float(metric.loss_of_score(model["score"]))
        losses[model["model"]] = loss
        finished = model["finished_at"] or fallback
        curve.append((max(0.0, finished - started), loss))
    curve.sort(key=lambda point: point[0])
    best = result["model_best"]
    validation_loss = losses.get(best, losses.get(best.removesuffix("_FULL")))
    if result.get("calibrated_score") is not None:
        validation_loss = float(metric.loss_of_score(result["calibrated_score"]))
        seconds = max([fallback - started, *(point[0] for point in curve)])
        curve.append((seconds, validation_loss))
    return curve, validation_loss


# ---------------------------------------------------------------------------------------------
# The model
# ---------------------------------------------------------------------------------------------


class AutoGluonModel:
    """A fitted ``TabularPredictor`` as a scikit-learn estimator; it predicts through the
    worker in AutoGluon's environment (a subprocess per new frame; the last frame's
    predictions are kept, so ``predict`` after ``predict_proba`` of the same rows costs
    nothing). For classification ``classes_`` are the training labels, sorted, and
    ``predict_proba`` has a column per label in that order.

    The predictor lies in ``home``, a temporary folder the model owns: removed when the model
    is garbage collected. A pickled model carries the folder (as a tar archive) with it.
    """

    def __init__(
        self,
        home: Path,
        task: str,
        classes: np.ndarray | None,
        python: Path,
        predict_timeout: float,
        model_best: str = "",
    ) -> None:
        self.task = task
        self.python = python
        self.predict_timeout = predict_timeout
        self.model_best = model_best
        if task == "classification":
            assert classes is not None
            self.classes_ = np.asarray(classes)
        self._own(home)

    def _own(self, home: Path) -> None:
        self.home = home
        self._cleanup = weakref.finalize(self, shutil.rmtree, str(home), True)
        self._last: tuple[str, np.ndarray] | None = None

    @property
    def predictor_path(self) -> Path:
        return self.home / "predictor"

    def predict_proba(self, X: pd.DataFrame) -> np.ndarray:
        if self.task != "classification":
            raise AttributeError("a regression model has no predict_proba")
        return self._predict(X)

    def predict(self, X: pd.DataFrame) -> np.ndarray:
        if self.task == "classification":
            return self.classes_[np.argmax(self.predict_proba(X), axis=1)]
        return self._predict(X)

    def _predict(self, X: pd.DataFrame) -> np.ndarray:
        labels = self.classes_.tolist() if self.task == "classification" else None
        if len(X) == 0:
            return np.zeros((0, len(labels))) if labels is not None else np.zeros(0)
        key = _fingerprint(X)
        if key is not None and self._last is not None and self._last[0] == key:
            return self._last[1].copy()
        with tempfile.TemporaryDirectory(prefix="automl-autogluon-predict-") as tmp:
            folder = Path(tmp)
            worker.write_frame(folder, "X", X)
            job = {
                "protocol": worker.PROTOCOL,
                "mode": "predict",
                "predictor": str(self.predictor_path),
                "labels": labels,
            }
            worker.write_json(folder / worker.JOB_FILE, job)
            run_worker(self.python, folder, self.predict_timeout, "predict")
            values = np.load(folder / worker.PREDICTIONS_FILE, allow_pickle=False)
        if key is not None:
            self._last = (key, values.copy())
        return values

    def __getstate__(self) -> dict[str, Any]:
        state = {k: v for k, v in self.__dict__.items() if k not in ("_cleanup", "_last")}
        archive = io.BytesIO()
        with tarfile.open(fileobj=archive, mode="w:gz") as tar:
            tar.add(str(self.home), arcname=".")
        state["home"] = archive.getvalue()
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        archive = state.pop("home")
        self.__dict__.update(state)
        home = Path(tempfile.mkdtemp(prefix="automl-autogluon-"))
        with tarfile.open(fileobj=io.BytesIO(archive), mode="r:gz") as tar:
            if hasattr(tarfile, "data_filter"):
                tar.extractall(home, filter="data")
            else:  # Python < 3.11.4
                tar.extractall(home)
        self._own(home)

    def __repr__(self) -> str:
        return f"AutoGluonModel({self.model_best or '?'} in {self.predictor_path})"


def _fingerprint(X: pd.DataFrame) -> str | None:
    """A digest of a frame's values, columns and dtypes; None when its values cannot be
    hashed (then nothing is kept)."""
    try:
        hashed = pd.util.hash_pandas_object(X, index=False).to_numpy()
    except TypeError:
        return None
    digest = hashlib.sha256(hashed.tobytes())
    digest.update(repr([(str(c), str(t)) for c, t in X.dtypes.items()]).encode())
    return digest.hexdigest()


# ---------------------------------------------------------------------------------------------
# The system
# ---------------------------------------------------------------------------------------------


class AutoGluonSystem(System):
    """AutoGluon-Tabular's ``TabularPredictor`` optimising the run's metric within the run's
    budget, in AutoGluon's own environment; see the module docstring.

    ``presets`` are AutoGluon's (none: its default, ``medium_quality``); ``settings`` passes
    any other ``TabularPredictor.fit`` keyword as plain data (e.g. ``{"num_bag_folds": 5}``),
    except those this system sets from the cell. ``reserve`` is the share of the budget (at
    least a second) kept for what follows AutoGluon's fit; ``timeout_margin`` the seconds past
    the budget after which the worker is killed (default 30 s plus a quarter of the budget:
    AutoGluon's ``time_limit`` is approximate); ``predict_timeout`` the limit of one
    prediction. ``verbosity`` is AutoGluon's (its log is ``autogluon.log`` in the cell's
    folder). ``python`` is AutoGluon's interpreter (default: :func:`find_python`).
    """

    def __init__(
        self,
        presets: str | Sequence[str] | None = None,
        settings: Mapping[str, Any] | None = None,
        reserve: float = 0.05,
        timeout_margin: float | None = None,
        predict_timeout: float = 600.0,
        verbosity: int = 2,
        python: str | None = None,
    ) -> None:
        names = [presets] if isinstance(presets, str) else presets
        if names is not None and (
            not isinstance(names, Sequence)
            or not names
            or not all(isinstance(n, str) for n in names)
        ):
            raise ValueError(
                f"autogluon: presets must be a preset's name or a list of them, got {presets!r}"
            )
        unknown = [name for name in names or () if name not in PRESETS]
        if unknown:
            raise ValueError(
                f"autogluon: unknown or unsupported preset(s) {unknown}; choose from "
                f"{list(PRESETS)}"
            )
        settings = dict(settings or {})
        owned = sorted(set(settings) & OWNED_SETTINGS)
        if owned:
            raise ValueError(
                f"autogluon: settings may not set {owned}: this system sets them from the "
                "ablation's cell, or they have their own parameter"
            )
        try:
            json.dumps(settings, allow_nan=False)
        except (TypeError, ValueError) as error:
            raise ValueError(f"autogluon: settings must be plain data (JSON): {error}") from None
        if not _is_number(reserve) or not 0 <= reserve < 0.5:
            raise ValueError(f"autogluon: reserve must be in [0, 0.5), got {reserve!r}")
        if timeout_margin is not None and (not _is_number(timeout_margin) or timeout_margin <= 0):
            raise ValueError(
                f"autogluon: timeout_margin must be a positive number of seconds, got "
                f"{timeout_margin!r}"
            )
        if not _is_number(predict_timeout) or predict_timeout <= 0:
            raise ValueError(
                f"autogluon: predict_timeout must be a positive number of seconds, got "
                f"{predict_timeout!r}"
            )
        if verbosity not in (0, 1, 2, 3, 4):
            raise ValueError(f"autogluon: verbosity must be 0 to 4, got {verbosity!r}")
        self.presets = (
            None if names is None else (presets if isinstance(presets, str) else list(names))
        )
        self.settings = settings
        self.reserve = float(reserve)
        self.timeout_margin = None if timeout_margin is None else float(timeout_margin)
        self.predict_timeout = float(predict_timeout)
        self.verbosity = verbosity
        try:
            self.python = find_python(python)
        except PluginError as error:
            raise ValueError(str(error)) from None

    def hard_limit(self, time_budget: float) -> float:
        """Seconds after which a fit's worker is killed."""
        margin = self.timeout_margin if self.timeout_margin is not None else 30 + time_budget / 4
        return time_budget + margin

    def fit(
        self,
        X: pd.DataFrame,
        y: np.ndarray,
        *,
        task: str,
        metric: Metric,
        time_budget: float,
        seed: int,
        n_jobs: int,
        workdir: Path,
    ) -> SystemResult:
        started = time.time()
        problem = problem_type(task, y)
        eval_metric = autogluon_metric(metric, problem)
        classes = np.unique(y) if task == "classification" else None
        target = np.asarray(y, dtype=np.int64 if classes is not None else np.float64)
        label = _label_name(X.columns)
        home = Path(tempfile.mkdtemp(prefix="automl-autogluon-"))
        try:
            with tempfile.TemporaryDirectory(prefix="automl-autogluon-fit-") as tmp:
                folder = Path(tmp)
                worker.write_frame(folder, "train", X, target)
                job = {
                    "protocol": worker.PROTOCOL,
                    "mode": "fit",
                    "label": label,
                    "problem_type": problem,
                    "eval_metric": eval_metric,
                    "presets": self.presets,
                    "deadline": started + time_budget,
                    "reserve": max(1.0, self.reserve * time_budget),
                    "min_time_limit": MIN_TIME_LIMIT,
                    "seed": int(seed),
                    "num_cpus": int(n_jobs),
                    "predictor": str(home / "predictor"),
                    "verbosity": self.verbosity,
                    "settings": self.settings,
                }
                worker.write_json(folder / worker.JOB_FILE, job)
                try:
                    result = run_worker(self.python, folder, self.hard_limit(time_budget), "fit")
                finally:
                    _keep_logs(folder, workdir)
        except BaseException:
            shutil.rmtree(home, ignore_errors=True)
            raise
        model = AutoGluonModel(
            home, task, classes, self.python, self.predict_timeout, result["model_best"]
        )
        curve, validation_loss = search_curve(result, metric, started)
        return SystemResult(
            model=model,
            validation_loss=validation_loss,
            curve=curve,
            info=self._info(result, started),
        )

    def _info(self, result: dict[str, Any], started: float) -> dict[str, Any]:
        timings = result["timings"]
        return {
            "autogluon_version": result["autogluon_version"],
            "presets": self.presets,
            "eval_metric": result["eval_metric"],
            "problem_type": result["problem_type"],
            "model_best": result["model_best"],
            "decision_threshold": result["decision_threshold"],
            "time_limit": result["time_limit"],
            "seconds": {
                "start_up": timings["imported"] - started,
                "autogluon_fit": timings["fit_ended"] - timings["fit_started"],
                "worker": timings["ended"] - timings["started"],
            },
            "leaderboard": [
                {key: model[key] for key in ("model", "score", "fit_time", "stack_level")}
                for model in result["models"]
            ],
            "python": shown_python(self.python),
            "worker_python": result["python"],
            "worker_pandas": result["pandas_version"],
        }


class AutoGluonBestSystem(AutoGluonSystem):
    """:class:`AutoGluonSystem` with AutoGluon's ``best_quality`` preset (bagging, stacking,
    its zero-shot portfolio of configurations): ``--peer autogluon-best``."""

    def __init__(
        self,
        presets: str | Sequence[str] | None = "best_quality",
        settings: Mapping[str, Any] | None = None,
        reserve: float = 0.05,
        timeout_margin: float | None = None,
        predict_timeout: float = 600.0,
        verbosity: int = 2,
        python: str | None = None,
    ) -> None:
        super().__init__(
            presets, settings, reserve, timeout_margin, predict_timeout, verbosity, python
        )


def _label_name(columns: pd.Index) -> str:
    """A name for the target column that no feature has."""
    taken = {str(column) for column in columns}
    label = "__automl_target__"
    while label in taken:
        label += "_"
    return label


def _keep_logs(folder: Path, workdir: Path) -> None:
    """The worker's output (AutoGluon's log) and the leaderboard into the cell's folder."""
    with contextlib.suppress(OSError):
        with (workdir / LOG_FILE).open("wb") as log:
            for name in ("worker.out", "worker.err"):
                path = folder / name
                if path.is_file():
                    log.write(path.read_bytes())
        board = folder / worker.LEADERBOARD_FILE
        if board.is_file():
            shutil.copyfile(board, workdir / LEADERBOARD_FILE)


def _is_number(value: Any) -> bool:
    return (
        isinstance(value, numbers.Real)
        and not isinstance(value, bool)
        and math.isfinite(float(value))
    )
