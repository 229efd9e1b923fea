"""What a run leaves in its folder: the file names, the summary, and reading them back.

Every part of a run (the set-up, the loop, the finishing, the suites and the CLI) reads and
writes these, so they live apart from all of them.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

import joblib

from automl_core.contracts import Policy
from automl_core.errors import AutoMLError
from automl_core.final_model import FinalChoice
from automl_core.history import RunHistory
from automl_core.model import TrainedModel

if TYPE_CHECKING:
    from automl_core.recipe import Recipe

HISTORY_FILE = "history.sqlite"
MODEL_FILE = "model.joblib"
RECIPE_FILE = "recipe.yaml"
SUMMARY_FILE = "summary.json"
#: History meta key: seconds the run has searched so far (a resumed run starts from there).
ELAPSED = "elapsed"


class RunError(AutoMLError):
    """A run stopped on an error after saving what it had; ``summary`` says what was saved."""

    def __init__(self, message: str, summary: RunSummary) -> None:
        super().__init__(message)
        self.summary = summary


@dataclass
class RunInfo:
    """What observers are told about a run when it starts."""

    run_dir: Path
    recipe: Recipe
    dataset: str
    task: str
    metric: str
    started_at: float
    budget_trials: int | None
    budget_seconds: float | None


@dataclass
class RunSummary:
    """What a run produced."""

    run_dir: str
    n_trials: int
    best_trial: int | None
    best_loss: float | None
    best_config: dict[str, Any] | None
    metric: str
    elapsed: float
    stopped_because: str
    test_scores: dict[str, float] | None = None
    model_path: str | None = None
    ensemble: dict[int, float] = field(default_factory=dict)
    #: For a benchmark task: its name, the dataset, the best and worst stored losses, and
    #: the normalised regret of the best trial.
    benchmark: dict[str, Any] | None = None
    #: Seconds spent refitting the final model on all training rows.
    refit_seconds: float | None = None
    #: Ensemble members left out of the final model because their refit would have crossed
    #: the run's deadline: ``{"trial", "weight" (in the choice first made),
    #: "estimated_seconds"}``. ``ensemble`` then holds the weights of the choice made again
    #: over the members refitted (never the first weights renormalised).
    dropped_members: list[dict[str, Any]] = field(default_factory=list)
    #: How the final model was chosen (:meth:`automl_core.final_model.FinalChoice.record`):
    #: ensemble or single best, both validation losses, and why.
    final_model: dict[str, Any] = field(default_factory=dict)

    def record_choice(self, choice: FinalChoice) -> None:
        """The final model's members, their weights and why they were chosen."""
        self.ensemble = {
            t.trial.id: float(w) for t, w in zip(choice.members, choice.weights, strict=True)
        }
        self.final_model = choice.record()

    def save(self, run_dir: Path, history: RunHistory) -> None:
        """Write ``summary.json`` and keep the same record in the history."""
        (run_dir / SUMMARY_FILE).write_text(json.dumps(asdict(self), indent=2, default=str))
        history.set_meta("summary", json.loads(json.dumps(asdict(self), default=str)))


def finished_summary(folder: Path) -> RunSummary | None:
    """The summary a finished run left in ``folder``; None when it did not finish."""
    path = folder / SUMMARY_FILE
    if not path.is_file():
        return None
    try:
        return RunSummary(**json.loads(path.read_text()))
    except (ValueError, TypeError):
        return None


def load_saved_model(run_dir: Path) -> dict[str, Any]:
    """The dict a run saved in ``model.joblib``; the error says why there is none."""
    path = run_dir / MODEL_FILE
    if not path.is_file():
        if not run_dir.is_dir():
            why = "no such folder"
        elif (run_dir / HISTORY_FILE).is_file():
            why = "the run saved no model: no trial succeeded, or it was a benchmark task"
        else:
            why = f"not a run folder (no {HISTORY_FILE} either)"
        raise AutoMLError(f"{run_dir} holds no model ({MODEL_FILE} is missing): {why}")
    stored = joblib.load(path)
    if not isinstance(stored, dict) or not isinstance(stored.get("model"), TrainedModel):
        raise AutoMLError(f"{path} was not written by an automl run (no TrainedModel in it)")
    return stored


def stored_policy(run_dir: Path) -> Policy | None:
    """The policy recorded in the history of the run in ``run_dir``, if any."""
    path = run_dir / HISTORY_FILE
    if not path.is_file():
        return None
    with RunHistory(path) as history:
        record = history.get_meta("policy")
    if not record:
        return None
    return Policy(**{f.name: record[f.name] for f in fields(Policy)})


def stored_elapsed(run_dir: Path) -> float:
    """The seconds the run in ``run_dir`` has searched so far (0 without a history), so
    that a resumed strategy is told the time left before the loop counts it."""
    path = run_dir / HISTORY_FILE
    if not path.is_file():
        return 0.0
    with RunHistory(path) as history:
        return float(history.get_meta(ELAPSED, 0.0))


def resumable(folder: Path) -> bool:
    """Whether ``folder`` holds an interrupted run to resume. A run killed before it stored
    its recipe left a history with nothing to resume (and that the runner would refuse as
    another search): it is removed, and the run starts afresh."""
    path = folder / HISTORY_FILE
    if not path.exists():
        return False
    with RunHistory(path) as history:
        started = history.get_meta("recipe") is not None
    if not started:
        for leftover in folder.glob(f"{HISTORY_FILE}*"):
            leftover.unlink()
    return started


def safe_folder_name(name: str) -> str:
    """``name`` with every character but letters, digits, ``-``, ``_`` and ``.`` as ``_``."""
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name) or "_"
