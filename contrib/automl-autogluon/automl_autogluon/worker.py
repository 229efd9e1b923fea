"""AutoGluon-Tabular's side of automl-autogluon: the program that runs in AutoGluon's own
virtual environment (``make autogluon-env``), where automl-core is not installed.

    <autogluon python> -I path/to/worker.py FOLDER

``-I`` (isolated mode) keeps the script's own folder and ``PYTHONPATH`` off ``sys.path``, so
nothing of the calling environment is imported. This module imports only the standard
library, numpy and pandas at its top, and autogluon inside the functions that need it, so
that the calling side (:mod:`automl_autogluon.system`, in the project's environment) imports
it too and shares one definition of the folder format.

The folder holds ``job.json`` (what to do) and the frames; the worker writes ``result.json``
last, atomically, so a result that exists is whole. Modes:

* ``fit``: fit ``TabularPredictor`` on ``train`` (features and the target ``y``) into
  ``job["predictor"]``; write ``leaderboard.csv`` and ``result.json`` (each model's
  validation score, its fit time and when it finished; timings; the best model).
* ``predict``: load the predictor, predict the rows of ``X``; write ``predictions.npy``:
  class probabilities with a column per label of ``job["labels"]``, in that order (binary:
  with AutoGluon's decision threshold at 0.5, see :func:`apply_decision_threshold`), or one
  value per row for regression; and, with ``job["with_labels"]``, AutoGluon's own
  ``predict`` in ``labels.npy``.
* ``probe``: read ``X`` back (the frame format's round trip in this environment's pandas),
  list AutoGluon's metrics and score given predictions with them (tests, and a check that
  the environment works).

The frame format (:func:`write_frame`, :func:`read_frame`): ``NAME.npz`` holds one numeric
array per column (``c0``, ``c1``... and ``y``, the target), ``NAME.json`` the columns' names
and kinds: ``number`` (int64 or float64 values, NaN for a gap), ``bool``, ``category``
(integer codes, -1 for a gap, and the categories as strings, in the column's order),
``string`` (the same for text and object columns: AutoGluon then infers category or text
itself, as for a frame handed to it directly) and ``datetime`` (int64 nanoseconds). No pickle
and no pyarrow: numpy's own format, exact floats, the same on pandas 2 and 3.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import time
import traceback
from pathlib import Path
from typing import Any

_STARTED = time.time()  # before numpy and pandas: the worker's whole start-up is timed

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

#: Changes when the folder format or the job's keys change; both sides check it.
PROTOCOL = 1
JOB_FILE = "job.json"
RESULT_FILE = "result.json"
PREDICTIONS_FILE = "predictions.npy"
LABELS_FILE = "labels.npy"
LEADERBOARD_FILE = "leaderboard.csv"
TARGET = "y"
#: A gap in a category or string column's codes.
MISSING_CODE = -1


# ---------------------------------------------------------------------------------------------
# The frame format
# ---------------------------------------------------------------------------------------------


def write_frame(folder: Path, name: str, X: pd.DataFrame, y: Any = None) -> None:
    """``X`` (and the target ``y``) as ``folder/NAME.npz`` and ``folder/NAME.json``."""
    names = [str(column) for column in X.columns]
    if len(set(names)) != len(names):
        raise ValueError(f"column names must be distinct as text: {names}")
    arrays: dict[str, np.ndarray] = {}
    columns = []
    for index, column in enumerate(X.columns):
        array, spec = _encode_column(X[column])
        arrays[f"c{index}"] = array
        columns.append({"name": str(column), **spec})
    if y is not None:
        arrays[TARGET] = np.asarray(y)
    np.savez(folder / f"{name}.npz", **arrays)
    schema = {"protocol": PROTOCOL, "rows": len(X), "columns": columns}
    (folder / f"{name}.json").write_text(json.dumps(schema), encoding="utf-8")


def read_frame(folder: Path, name: str) -> tuple[pd.DataFrame, np.ndarray | None]:
    """The frame :func:`write_frame` wrote, with its kinds of column, and its target (None
    when it has none)."""
    schema = json.loads((folder / f"{name}.json").read_text(encoding="utf-8"))
    _check_protocol(schema, f"{name}.json")
    with np.load(folder / f"{name}.npz", allow_pickle=False) as arrays:
        data = {
            spec["name"]: _decode_column(arrays[f"c{index}"], spec)
            for index, spec in enumerate(schema["columns"])
        }
        y = arrays[TARGET] if TARGET in arrays.files else None
    frame = pd.DataFrame(data, index=pd.RangeIndex(schema["rows"]))
    return frame, y


def _encode_column(values: pd.Series) -> tuple[np.ndarray, dict[str, Any]]:
    dtype = values.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        categories = [str(category) for category in dtype.categories]
        if len(set(categories)) != len(categories):  # e.g. 1 and "1": merged as text
            return _encode_strings(values, "category")
        codes = np.asarray(values.cat.codes, dtype=np.int64)
        return codes, {"kind": "category", "categories": categories}
    if pd.api.types.is_bool_dtype(dtype) and not values.isna().any():
        return values.to_numpy(dtype=bool), {"kind": "bool"}
    if pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_complex_dtype(dtype):
        if pd.api.types.is_integer_dtype(dtype) and not values.isna().any():
            return values.to_numpy(dtype=np.int64), {"kind": "number"}
        # floats, and integers or booleans with gaps (pandas' nullable dtypes): NaN for a gap
        return values.to_numpy(dtype=np.float64, na_value=np.nan), {"kind": "number"}
    if pd.api.types.is_datetime64_any_dtype(dtype):
        stamps = pd.to_datetime(values)
        if stamps.dt.tz is not None:
            stamps = stamps.dt.tz_convert("UTC").dt.tz_localize(None)
        nanoseconds = stamps.to_numpy(dtype="datetime64[ns]").view(np.int64)
        return nanoseconds, {"kind": "datetime"}
    return _encode_strings(values, "string")


def _encode_strings(values: pd.Series, kind: str) -> tuple[np.ndarray, dict[str, Any]]:
    """Text (and anything else: each value as ``str``) as codes into its sorted values."""
    present = values.notna().to_numpy()
    text = np.array([str(value) for value in values[present]], dtype=object)
    uniques = sorted(set(text))
    lookup = {value: code for code, value in enumerate(uniques)}
    codes = np.full(len(values), MISSING_CODE, dtype=np.int64)
    codes[present] = [lookup[value] for value in text]
    return codes, {"kind": kind, "categories": uniques}


def _decode_column(array: np.ndarray, spec: dict[str, Any]) -> Any:
    kind = spec["kind"]
    if kind in ("number", "bool"):
        return array
    if kind == "datetime":
        return array.view("datetime64[ns]")
    if kind == "category":
        return pd.Categorical.from_codes(array, categories=spec["categories"])
    if kind == "string":
        values = np.empty(len(array), dtype=object)
        missing = array == MISSING_CODE
        values[missing] = np.nan
        values[~missing] = np.asarray(spec["categories"], dtype=object)[array[~missing]]
        return pd.Series(values, dtype=object)
    raise ValueError(f"unknown kind of column {kind!r} in {spec}")


def _check_protocol(document: dict[str, Any], what: str) -> None:
    if document.get("protocol") != PROTOCOL:
        raise ValueError(
            f"{what}: protocol {document.get('protocol')!r}, this worker speaks {PROTOCOL}: "
            "the adapter and its worker come from different versions of automl-autogluon"
        )


def write_json(path: Path, value: Any) -> None:
    """Written whole or not at all (renamed into place): the caller reads a result only
    after the process ended, but a killed worker must not leave half a file."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(value, indent=1, default=_plain), encoding="utf-8")
    os.replace(tmp, path)


def _plain(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    return str(value)


def _json_value(value: Any) -> Any:
    """A cell as JSON: None for a gap, numbers and text as they are, anything else as text."""
    if pd.isna(value):
        return None
    if isinstance(value, np.generic):
        return value.item()
    return value if isinstance(value, (bool, int, float, str)) else str(value)


def _finite(value: Any) -> float | None:
    """A float, or None for NaN, inf or nothing (JSON has no NaN)."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if np.isfinite(number) else None


# ---------------------------------------------------------------------------------------------
# The modes
# ---------------------------------------------------------------------------------------------


def fit(folder: Path, job: dict[str, Any]) -> dict[str, Any]:
    """Fit a ``TabularPredictor`` as ``job`` says; see the module docstring."""
    read_started = time.time()
    train, y = read_frame(folder, "train")
    if y is None:
        raise ValueError("train.npz has no target")
    label = job["label"]
    train[label] = y
    import_started = time.time()
    import autogluon.tabular
    from autogluon.tabular import TabularPredictor

    imported = time.time()
    # The clock the adapter gave: what is left of the budget after start-up, less what the
    # steps after AutoGluon's fit take (the leaderboard, writing, the process's exit).
    left = job["deadline"] - imported - job["reserve"]
    time_limit = max(left, job["min_time_limit"])
    recorder = _finish_recorder()
    predictor = TabularPredictor(
        label=label,
        problem_type=job["problem_type"],
        eval_metric=job["eval_metric"],
        path=job["predictor"],
        verbosity=job["verbosity"],
        learner_kwargs={"random_state": job["seed"]},
    )
    fit_started = time.time()
    predictor.fit(
        train,
        presets=job["presets"],
        time_limit=time_limit,
        num_cpus=job["num_cpus"],
        num_gpus=0,
        callbacks=[*_preset_callbacks(job["presets"]), recorder],
        ag_args_ensemble={"model_random_seed": job["seed"]},
        **job["settings"],
    )
    fit_ended = time.time()
    threshold = _decision_threshold(predictor)
    calibrated = None if threshold is None else _calibrated_score(predictor, threshold)
    board = predictor.leaderboard(silent=True)
    board.to_csv(folder / LEADERBOARD_FILE, index=False)
    scorer = predictor.eval_metric
    finished = recorder.finished
    models = []
    for row in board.sort_values("fit_order", kind="stable").to_dict("records"):
        score_val = _finite(row.get("score_val"))
        original = None if score_val is None else scorer.convert_score_to_original(score_val)
        models.append(
            {
                "model": row["model"],
                "score_val": score_val,
                "score": _finite(original),
                "fit_time": _finite(row.get("fit_time_marginal", row.get("fit_time"))),
                "stack_level": int(row["stack_level"]) if "stack_level" in row else None,
                "fit_order": int(row["fit_order"]) if "fit_order" in row else None,
                "can_infer": bool(row.get("can_infer", True)),
                "finished_at": finished.get(row["model"]),
            }
        )
    return {
        "protocol": PROTOCOL,
        "autogluon_version": str(autogluon.tabular.__version__),
        "pandas_version": pd.__version__,
        "python": sys.version.split()[0],
        "eval_metric": scorer.name,
        "greater_is_better": bool(scorer.greater_is_better),
        "problem_type": predictor.problem_type,
        "model_best": predictor.model_best,
        "decision_threshold": threshold,
        "calibrated_score": calibrated,
        "models": models,
        "time_limit": time_limit,
        "timings": {
            "started": _STARTED,
            "read_started": read_started,
            "import_started": import_started,
            "imported": imported,
            "fit_started": fit_started,
            "fit_ended": fit_ended,
            "ended": time.time(),
        },
    }


def _finish_recorder() -> Any:
    """An AutoGluon callback that notes when each model finished fitting (the leaderboard
    has fit times, not the moments): the anytime curve's seconds.

    AutoGluon saves its trainer, callbacks included, while it fits, and the predictor is
    loaded again to predict: the recorder pickles as AutoGluon's own no-op
    ``AbstractCallback``, so the saved predictor never names this module's class."""
    from autogluon.core.callbacks import AbstractCallback

    class FinishRecorder(AbstractCallback):
        def __init__(self) -> None:
            super().__init__()
            self.finished: dict[str, float] = {}

        def _after_model_fit(self, trainer: Any, model_names: list[str], **kwargs: Any) -> bool:
            now = time.time()
            for name in model_names:
                self.finished.setdefault(name, now)
            return False

        def __reduce__(self) -> tuple[Any, ...]:
            return (AbstractCallback, ())

        def __copy__(self) -> FinishRecorder:
            return self

        def __deepcopy__(self, memo: dict[int, Any]) -> FinishRecorder:
            return self

    return FinishRecorder()


def _preset_callbacks(presets: Any) -> list[Any]:
    """The callbacks the presets set themselves (the ``*_v150`` presets' early stopping):
    passing ``callbacks`` to ``fit`` replaces theirs, so they are passed on with ours."""
    from autogluon.tabular.configs.presets_configs import (
        tabular_presets_alias,
        tabular_presets_dict,
    )

    names = [presets] if isinstance(presets, str) else list(presets or [])
    callbacks: list[Any] = []
    for name in names:
        preset = tabular_presets_dict.get(tabular_presets_alias.get(name, name), {})
        callbacks += list(preset.get("callbacks") or [])
    return callbacks


def predict(folder: Path, job: dict[str, Any]) -> dict[str, Any]:
    """Predict ``X`` with the saved predictor; see the module docstring."""
    X, _ = read_frame(folder, "X")
    from autogluon.tabular import TabularPredictor

    predictor = TabularPredictor.load(job["predictor"], verbosity=0)
    if job["labels"] is None:
        values = np.asarray(predictor.predict(X), dtype=float)
    else:
        proba = predictor.predict_proba(X, as_multiclass=True)
        values = ordered_probabilities(proba, job["labels"])
        threshold = _decision_threshold(predictor)
        if threshold is not None:
            positive = _label_index(job["labels"], predictor.positive_class)
            values = apply_decision_threshold(values, positive, threshold)
        if job.get("with_labels"):  # AutoGluon's own predictions, for a check
            np.save(folder / LABELS_FILE, np.asarray(predictor.predict(X)), allow_pickle=False)
    np.save(folder / PREDICTIONS_FILE, values, allow_pickle=False)
    return {"protocol": PROTOCOL, "rows": len(X), "model": predictor.model_best}


def _decision_threshold(predictor: Any) -> float | None:
    """The threshold AutoGluon calibrated for a binary problem (it does for label metrics
    such as the balanced accuracy), or None for 0.5 and other problems."""
    if predictor.problem_type != "binary":
        return None
    threshold = float(predictor.decision_threshold)
    return None if threshold == 0.5 else threshold


def _calibrated_score(predictor: Any, threshold: float) -> float | None:
    """The chosen model's validation score (in the metric's own sign) with AutoGluon's
    calibrated ``threshold`` applied: what the returned model scores by AutoGluon's own
    validation, where the leaderboard has its score at 0.5. Computed on the rows AutoGluon
    calibrated on (its holdout, or the bagged models' out-of-fold predictions), as its
    trainer's ``calibrate_decision_threshold`` does. None where AutoGluon's internals are
    not those of 1.6."""
    try:
        from autogluon.core.utils import get_pred_from_proba

        trainer = predictor._learner.load_trainer()
        model = trainer.get_refit_full_parent(model=predictor.model_best)
        if trainer.has_val:
            y = trainer.load_y_val()
            proba = trainer.predict_proba(X=trainer.load_X_val(), model=model)
        else:
            y = trainer.load_y()
            proba = trainer.get_model_oof(model=model)
        y_pred = get_pred_from_proba(proba, "binary", decision_threshold=threshold)
        score = trainer.score_with_y_pred(y=y, y_pred=y_pred, metric=predictor.eval_metric)
        return _finite(predictor.eval_metric.convert_score_to_original(score))
    except Exception:  # an AutoGluon other than 1.6: the leaderboard's score stands
        traceback.print_exc()
        return None


def _label_index(labels: list[Any], label: Any) -> int:
    for index, candidate in enumerate(labels):
        if candidate == label or str(candidate) == str(label):
            return index
    raise ValueError(f"AutoGluon's positive class {label!r} is not among {labels}")


def apply_decision_threshold(proba: np.ndarray, positive: int, threshold: float) -> np.ndarray:
    """Binary probabilities with the positive class's (column ``positive``) mapped, piecewise
    linearly and increasingly, so that ``threshold`` becomes 0.5: the most probable class is
    then AutoGluon's prediction (``1 if p > threshold else 0``), which is what the core scores,
    and the ranking of the rows (ROC AUC) is unchanged."""
    p = proba[:, positive]
    t = min(max(float(threshold), 0.0), 1.0)
    below = 0.5 * p / t if t > 0 else np.zeros_like(p)
    above = 0.5 + 0.5 * (p - t) / (1 - t) if t < 1 else np.ones_like(p)
    # Never exactly 0.5: a tie would go to the first column, whichever class it is.
    mapped = np.where(
        p > t, np.maximum(above, np.nextafter(0.5, 1)), np.minimum(below, np.nextafter(0.5, 0))
    )
    result = np.empty_like(proba)
    result[:, positive] = mapped
    result[:, 1 - positive] = 1 - mapped
    return result


def ordered_probabilities(proba: pd.DataFrame, labels: list[Any]) -> np.ndarray:
    """AutoGluon's ``predict_proba`` frame (a column per class it knows) as a matrix with a
    column per label of ``labels``, in that order: a label AutoGluon dropped (too rare to
    learn) gets zeros, and each row is renormalised to sum to 1."""
    by_label = {label: label for label in proba.columns}
    by_label.update({str(label): label for label in proba.columns})
    unknown = [c for c in proba.columns if c not in labels and str(c) not in map(str, labels)]
    if unknown:
        raise ValueError(f"AutoGluon predicted classes {unknown} that are not among {labels}")
    matrix = np.zeros((len(proba), len(labels)))
    for index, label in enumerate(labels):
        column = by_label.get(label, by_label.get(str(label)))
        if column is not None:
            matrix[:, index] = proba[column].to_numpy(dtype=float)
    total = matrix.sum(axis=1, keepdims=True)
    return np.divide(matrix, total, out=np.full_like(matrix, 1 / len(labels)), where=total > 0)


def probe(folder: Path, job: dict[str, Any]) -> dict[str, Any]:
    """What this environment makes of the frame ``X`` and of the metrics; see the module
    docstring."""
    report: dict[str, Any] = {"protocol": PROTOCOL, "pandas_version": pd.__version__}
    if (folder / "X.json").exists():
        X, y = read_frame(folder, "X")
        report["dtypes"] = {str(c): str(t) for c, t in X.dtypes.items()}
        report["categories"] = {
            str(c): [str(v) for v in X[c].cat.categories]
            for c in X.columns
            if isinstance(X[c].dtype, pd.CategoricalDtype)
        }
        report["missing"] = {str(c): int(n) for c, n in X.isna().sum().items()}
        report["values"] = {str(c): [_json_value(v) for v in X[c]] for c in X.columns}
        report["target"] = None if y is None else y.tolist()
    import autogluon.tabular
    from autogluon.core.metrics import METRICS, get_metric

    report["autogluon_version"] = str(autogluon.tabular.__version__)
    report["metrics"] = {problem: sorted(names) for problem, names in METRICS.items()}
    scores = {}
    for request in job.get("score", []):
        # What AutoGluon's trainer hands the scorer: labels to a label metric, the positive
        # class's probability to a binary one, the probability matrix or values otherwise.
        scorer = get_metric(request["metric"], request["problem_type"], "eval_metric")
        y_true = np.asarray(request["y_true"])
        y_pred = np.asarray(request["y_pred"], dtype=float)
        if scorer.needs_class and y_pred.ndim == 2:
            y_pred = y_pred.argmax(axis=1)
        elif request["problem_type"] == "binary":
            y_pred = y_pred[:, 1]
        score = scorer(y_true, y_pred)  # higher is better: error metrics negated
        scores[request["key"]] = float(scorer.convert_score_to_original(score))
    report["scores"] = scores
    return report


MODES = {"fit": fit, "predict": predict, "probe": probe}


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(f"usage: {Path(argv[0]).name} FOLDER", file=sys.stderr)
        return 2
    folder = Path(argv[1])
    try:
        job = json.loads((folder / JOB_FILE).read_text(encoding="utf-8"))
        _check_protocol(job, JOB_FILE)
        result = MODES[job["mode"]](folder, job)
    except Exception:
        traceback.print_exc()
        return 1
    write_json(folder / RESULT_FILE, result)
    return 0


def exit_now(code: int) -> None:
    """End the process without the interpreter's teardown: after a fit, Ray's shutdown at
    exit and unloading torch take 1.5 to 4 s of the budget, and everything is saved by
    then. The adapter kills whatever is left of the worker's process group (Ray's daemons)."""
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    exit_now(main(sys.argv))
