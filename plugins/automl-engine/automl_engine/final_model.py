"""Which trials the final model is made of: an ensemble only when it beats the best single
pipeline on the validation rows, and only of members that can be refitted in time.

Ensemble selection optimises the blend's loss on the validation rows, greedily, and with a
loss that reads hard predictions (balanced accuracy, accuracy, F1) many additions tie: a
member whose probabilities are nearly constant never changes the blend's argmax, so it can
win every tie and end up with most of the weight. Then only the refit on all rows decides
what is saved. Three rules keep the final model from being worse than the best trial:

1. **Only members that beat a constant predictor** are offered to the ensembler (as
   auto-sklearn's ensemble builder keeps only models better than its dummy model): a
   pipeline that does no better than predicting the class frequencies (or the mean) carries
   no signal, only a way to tie.
2. **The blend is re-scored** on the stored out-of-sample predictions and kept only if its
   loss is strictly lower than the best single trial's on the same rows; otherwise the best
   trial alone is the final model. The comparison needs no new fit: every trial's
   validation predictions are in the history.
3. **Members too slow to refit** before the deadline are not dropped from a chosen ensemble
   with the others' weights renormalised (a renormalised remainder was never evaluated);
   the selection is run again over the members that can be refitted, and rule 2 applies
   again.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from automl_core.contracts import Ensembler
from automl_core.errors import AutoMLError
from automl_engine.history import StoredTrial
from automl_engine.metrics import Metric

#: At most this many selections when members are too slow to refit: each costs a full run of
#: the ensembler (seconds on large validation sets), and the time is the refit's.
MAX_SELECTIONS = 3


class EnsemblerError(AutoMLError):
    """The ensembler plugin raised, or returned weights that are not weights; the message
    holds its traceback."""


@dataclass(eq=False)
class Scored:
    """A trial offered to the final model, with its stored validation predictions."""

    trial: StoredTrial
    predictions: np.ndarray


@dataclass
class FinalChoice:
    """The members and weights of the final model, and why they were chosen."""

    members: list[StoredTrial]
    weights: np.ndarray
    #: The chosen model's loss on the validation rows (from the stored predictions).
    validation_loss: float | None = None
    #: The best single trial's loss on the same rows.
    single_best_loss: float | None = None
    #: One sentence: ensemble or single best, and why.
    reason: str = "the best trial"
    #: Trials left out of the ensembler's pool: no better than a constant predictor.
    no_better_than_constant: list[int] = field(default_factory=list)
    #: Trials that could not be refitted before the deadline: left out of the pool because
    #: their refit alone would outlast the time left, or chosen by an earlier selection that
    #: then ran again without them.
    too_slow_to_refit: list[int] = field(default_factory=list)

    @property
    def is_ensemble(self) -> bool:
        return len(self.members) > 1

    def record(self) -> dict[str, object]:
        """What the run summary keeps of the choice."""
        return {
            "kind": "ensemble" if self.is_ensemble else "single best",
            "validation_loss": self.validation_loss,
            "single_best_validation_loss": self.single_best_loss,
            "reason": self.reason,
            "no_better_than_constant": list(self.no_better_than_constant),
            "too_slow_to_refit": list(self.too_slow_to_refit),
        }


def constant_loss(metric: Metric, y: np.ndarray, predictions: np.ndarray) -> float:
    """The loss of the best-known constant predictor on ``y``: the class frequencies (a
    probability row; its argmax is the majority class) for classification; for regression
    the better of the mean and the median (the median is the best constant under absolute
    errors, the mean under squared ones). ``predictions`` gives the shape the metric
    expects."""
    y = np.asarray(y)
    if predictions.ndim == 2:
        frequencies = np.bincount(y.astype(int), minlength=predictions.shape[1]) / len(y)
        return float(metric.loss(y, np.tile(frequencies, (len(y), 1))))
    centres = (float(np.mean(y)), float(np.median(y)))
    return min(float(metric.loss(y, np.full(len(y), centre))) for centre in centres)


def blend(predictions: Sequence[np.ndarray], weights: np.ndarray) -> np.ndarray:
    """The weighted average of the members' predictions."""
    total = np.zeros(np.shape(predictions[0]), dtype=float)
    for weight, member in zip(weights, predictions, strict=True):
        total += float(weight) * np.asarray(member, dtype=float)
    return total


def choose_final_model(
    scored: list[Scored],
    ensembler: Ensembler | None,
    y: np.ndarray,
    metric: Metric,
    too_slow: Callable[[list[StoredTrial], np.ndarray], list[StoredTrial]] | None = None,
    left_out_for_time: Sequence[int] = (),
) -> FinalChoice:
    """The final model's members and weights.

    ``scored`` holds the best trials, best first, each with its validation predictions; the
    first is the best trial, the fallback. Without an ``ensembler`` it is the final model.
    ``too_slow(members, weights)`` names the members of a chosen ensemble that could not be
    refitted before the deadline: they leave the pool and the selection runs again over the
    rest, until every member fits or fewer than two are left. ``left_out_for_time`` are the
    ids of trials the caller kept out of ``scored`` because their refit alone would outlast
    the time left: recorded, and named in the reason.

    Raises :class:`EnsemblerError` when the ensembler raises or returns no weights.
    """
    if not scored:
        return FinalChoice([], np.ones(0), reason="no finished trial")
    best = scored[0]
    best_loss = float(metric.loss(y, np.asarray(best.predictions, dtype=float)))
    single = FinalChoice([best.trial], np.ones(1), best_loss, best_loss)
    if ensembler is None:
        return single
    floor = constant_loss(metric, y, np.asarray(best.predictions))
    pool = [s for s in scored if metric.loss(y, np.asarray(s.predictions, float)) < floor]
    single.no_better_than_constant = [s.trial.trial.id for s in scored if s not in pool]
    single.too_slow_to_refit = list(left_out_for_time)
    single.reason = "the best trial: fewer than two trials beat a constant predictor" + (
        " and could be refitted in the time left" if left_out_for_time else ""
    )
    for _ in range(MAX_SELECTIONS):
        if len(pool) < 2:
            break
        choice = _select(pool, ensembler, y, metric, best_loss)
        choice.no_better_than_constant = single.no_better_than_constant
        choice.too_slow_to_refit = single.too_slow_to_refit
        if not choice.is_ensemble:
            single.reason = choice.reason
            return single
        late = too_slow(choice.members, choice.weights) if too_slow is not None else []
        if not late:
            return choice
        single.too_slow_to_refit += [t.trial.id for t in late]
        late_ids = set(single.too_slow_to_refit)
        pool = [s for s in pool if s.trial.trial.id not in late_ids]
        single.reason = "the best trial: no ensemble of two or more could be refitted in time"
    return single


def _select(
    pool: list[Scored], ensembler: Ensembler, y: np.ndarray, metric: Metric, best_loss: float
) -> FinalChoice:
    """The ensembler's blend over ``pool``, re-scored on the validation rows: its members
    (positive weights) if it beats ``best_loss``, else no member."""
    predictions = [np.asarray(s.predictions, dtype=float) for s in pool]
    try:
        weights = np.asarray(ensembler.fit(predictions, y, metric.loss), dtype=float)
    except Exception as error:
        trace = "".join(traceback.format_exception(type(error), error, error.__traceback__))
        raise EnsemblerError(f"{type(error).__name__}: {error}\n{trace}") from error
    valid = weights.shape == (len(pool),) and np.all(np.isfinite(weights))
    if not (valid and np.all(weights >= 0) and weights.sum() > 0):
        raise EnsemblerError(
            f"it returned weights {weights.tolist()} for {len(pool)} models: expected one "
            "finite, non-negative weight each, with a positive sum"
        )
    weights = weights / weights.sum()
    keep = weights > 0
    members = [s for s, k in zip(pool, keep, strict=True) if k]
    loss = float(metric.loss(y, blend([m.predictions for m in members], weights[keep])))
    if len(members) > 1 and loss < best_loss:
        reason = (
            f"an ensemble of {len(members)}: validation loss {loss:.6g}, below the best "
            f"trial's {best_loss:.6g}"
        )
        return FinalChoice([m.trial for m in members], weights[keep], loss, best_loss, reason)
    if len(members) == 1:
        reason = "the best trial: the ensembler chose a single model"
    else:
        reason = (
            f"the best trial: the ensemble's validation loss {loss:.6g} is not below the "
            f"best trial's {best_loss:.6g}"
        )
    return FinalChoice([], np.ones(0), loss, best_loss, reason)
