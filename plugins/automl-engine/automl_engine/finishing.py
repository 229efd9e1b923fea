"""After the search on data: choose the final model, refit it, score it on the test rows,
save it.

The final model is the best trial, or the recipe's ensemble when it beats the best trial on
the validation rows (:mod:`automl_engine.final_model`) and its members can be refitted before
the run's deadline. Under a deadline the best trial is refitted first: it is the model a run
must always be able to save.
"""

from __future__ import annotations

import contextlib
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.base import clone
from threadpoolctl import threadpool_limits

from automl_core.contracts import Ensembler
from automl_core.plugins import Plugins
from automl_core.space import BuildContext
from automl_engine.dataset import Dataset
from automl_engine.evaluator import PipelineEvaluator, score_all
from automl_engine.final_model import EnsemblerError, FinalChoice, Scored, choose_final_model
from automl_engine.history import RunHistory, StoredTrial, rank_key
from automl_engine.model import BaggedPipeline, TrainedModel
from automl_engine.recipe import Recipe
from automl_engine.run_folder import RunSummary, save_model

#: How many of the best trials an ensembler may choose from.
ENSEMBLE_POOL = 50
#: A member's refit time is estimated as its trial's fit time scaled to all the training rows,
#: times this margin. Measured on the default space (benchmarks/refit_estimate.py, 20,000
#: rows): the refit took 0.6-1.12 times the linear estimate; a larger margin ends runs early.
REFIT_SAFETY = 1.15
#: Seconds a run on data needs after its search besides the refits: shutting the workers
#: down, choosing the ensemble, scoring the test rows, saving the model.
FINISH_OVERHEAD_S = 1.0
#: A bagged search's member joins the final model by its fold models being read back and
#: saved with skops (besides predicting the test rows): a fixed cost, seconds per MB of its
#: fold-model file, per numpy array (skops writes each as a file of its own: three per tree
#: of a HistGradientBoosting model) and per scikit-learn estimator (skops takes each apart
#: on its own: one per tree of a forest) in it (:class:`~automl_engine.fold_models.Parts`).
#: Non-negative least squares over the five-fold default pipelines of the default space's 19
#: classifiers on three datasets (benchmarks/skops_save_rate.py, 57 members, the 2-core AMD
#: EPYC VM running two grid cells beside it): 0.01 s + 0.0004 s/MB + 0.16 ms/array + 2.3
#: ms/estimator, within 1.9 s of every member (a 512-tree forest: 5.8-9.7 s; a 10-class
#: HistGradientBoosting: 12.5 s; a naive Bayes pipeline: 0.05-0.2 s). Rounded up here. Bytes
#: count once files are large, which those 57 were not: a k-nearest-neighbours member on
#: polynomial features (movement_libras, 1.05 GB of fold models) took 33 s to deflate and
#: write, 0.03 s/MB, and ended a 60 s run 33 s late under 0.005 s/MB.
BAGGED_MEMBER_S = 0.1
BAGGED_SECONDS_PER_MB = 0.03
BAGGED_SECONDS_PER_ARRAY = 2e-4
BAGGED_SECONDS_PER_ESTIMATOR = 3e-3
#: The test rows a bagged member predicts at the end, as a share of the training rows its
#: trial predicted once over its folds: the default test split (0.25 of all rows) is a third
#: of the training rows, predicted by each of the k fold models.
TEST_SHARE = 1 / 3
#: With an ensemble, the share of the wall time kept at most for refitting its members
#: beyond the best trial (auto-sklearn keeps a similar share back from its search).
ENSEMBLE_SHARE = 0.1
#: With an ensemble, the search keeps back the refit time of this many next-best trials,
#: its likely other members (at most :data:`ENSEMBLE_SHARE` of the wall time): a tenth of
#: the wall time kept for members that refit in a second ended runs up to 16 s early.
ENSEMBLE_RESERVED = 10


@dataclass
class Finishing:
    """What finishing a run needs besides its task and history."""

    recipe: Recipe
    plugins: Plugins
    run_dir: Path
    #: A ``time.monotonic()`` value the refit must end by (None: no deadline).
    deadline: float | None = None
    #: Threads the refits may use under a deadline: the trials' own (an executor's
    #: ``threads_per_trial``), so that their fit times predict the refits'; None: any.
    threads: int | None = None


@dataclass
class Refitted:
    """The members refitted on all training rows, and those left out for lack of time."""

    #: Fitted estimators by position in the configurations offered.
    estimators: dict[int, Any]
    #: Positions of the members left out for lack of time, in refit order.
    dropped: list[int]
    seconds: float

    @property
    def kept(self) -> list[int]:
        """Positions refitted, in refit order."""
        return list(self.estimators)


def refit_order(weights: np.ndarray, first: int | None = None) -> list[int]:
    """The order refits go in under a deadline: ``first`` (the best trial, the fallback a
    run must always be able to save), then the others by decreasing weight, so the time goes
    to the members that matter most."""
    by_weight = [int(i) for i in np.argsort(-np.asarray(weights, dtype=float), kind="stable")]
    return by_weight if first is None else [first, *(i for i in by_weight if i != first)]


def refit_plan(
    members: list[StoredTrial], weights: np.ndarray, best: StoredTrial
) -> tuple[list[StoredTrial], np.ndarray]:
    """What a refit under a deadline fits, the best trial at position 0 (weight 0 when it is
    not a member: it is the fallback), then the other members. The plan that chooses the
    ensemble and the refit that follows use this one list, so the time the plan counts is
    the time the refit spends."""
    weights = np.asarray(weights, dtype=float)
    others = [i for i, t in enumerate(members) if t.trial.id != best.trial.id]
    own = [float(weights[i]) for i, t in enumerate(members) if t.trial.id == best.trial.id]
    plan = [best, *(members[i] for i in others)]
    return plan, np.array([own[0] if own else 0.0, *(float(weights[i]) for i in others)])


def refit_members(
    evaluator: PipelineEvaluator,
    configs: list[dict[str, Any]],
    weights: np.ndarray,
    seed: int,
    deadline: float | None = None,
    estimates: list[float] | None = None,
    first: int | None = None,
) -> Refitted:
    """Refit the members on all the evaluator's training rows, within ``deadline`` when one
    is given.

    With a deadline (a ``time.monotonic()`` value) the members are refitted in
    :func:`refit_order`; a member whose ``estimates`` (seconds, see :func:`refit_estimate`)
    would take it past the deadline is left out. The first in that order is always refitted:
    a run must leave a model. Without a deadline every member is refitted, in the order
    given. What the kept members weigh is the caller's choice (the ensemble is selected again
    over them).
    """
    started = time.monotonic()
    order = list(range(len(configs))) if deadline is None else refit_order(weights, first)
    guesses = estimates if estimates is not None else [0.0] * len(configs)
    context = BuildContext(task=evaluator.task, seed=seed, threads=evaluator.threads)
    estimators: dict[int, Any] = {}
    dropped: list[int] = []
    for position in order:
        late = deadline is not None and time.monotonic() + guesses[position] > deadline
        if estimators and late:
            dropped.append(position)
            continue
        estimators[position] = _fit_member(evaluator, configs[position], context)
    return Refitted(estimators, dropped, time.monotonic() - started)


def bagged_member_estimate(stored: StoredTrial, evaluator: PipelineEvaluator) -> float:
    """Seconds a bagged search's member is expected to take to join the final model: its
    fold models read back and saved with skops, whose time goes with the bytes, the numpy
    arrays and the scikit-learn estimators it holds (:data:`BAGGED_MEMBER_S`,
    :data:`BAGGED_SECONDS_PER_MB`, :data:`BAGGED_SECONDS_PER_ARRAY`,
    :data:`BAGGED_SECONDS_PER_ESTIMATOR`), and its k fold models predicting
    the test rows (its trial's prediction time, k times over, for a third as many rows:
    :data:`TEST_SHARE`). The saving constants are a fit over the default pipeline of every
    classifier of the default space (benchmarks/skops_save_rate.py); the prediction share was
    set from 60 s runs (benchmarks/bagging_finish.jsonl)."""
    assert evaluator.fold_models is not None
    try:
        megabytes = evaluator.fold_models.path(stored.trial.id).stat().st_size / 1e6
    except OSError:
        megabytes = 0.0
    parts = evaluator.fold_models.parts(stored.trial.id)
    saving = BAGGED_MEMBER_S + megabytes * BAGGED_SECONDS_PER_MB
    saving += parts.arrays * BAGGED_SECONDS_PER_ARRAY
    saving += parts.estimators * BAGGED_SECONDS_PER_ESTIMATOR
    predicting = (stored.predict_time or 0.0) * len(evaluator.splits) * TEST_SHARE
    return saving + predicting


def too_slow_to_refit(
    estimates: list[float], weights: np.ndarray, seconds_left: float, first: int | None = None
) -> list[int]:
    """The positions :func:`refit_members` would leave out if every refit took its estimate:
    the same :func:`refit_order`, the first always, each later one only if it ends within
    ``seconds_left``."""
    spent, late = 0.0, []
    for rank, position in enumerate(refit_order(weights, first)):
        if rank and spent + estimates[position] > seconds_left:
            late.append(position)
        else:
            spent += estimates[position]
    return late


def _fit_member(evaluator: PipelineEvaluator, config: dict[str, Any], context: BuildContext) -> Any:
    model = clone(evaluator.space.build(config, context))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(evaluator.dataset.X, evaluator.y)
    return model


def refit_estimate(stored: StoredTrial, evaluator: PipelineEvaluator) -> float:
    """Seconds a trial's configuration is expected to take to become part of the final
    model. In a bagged search (its fold models kept), reading and saving them:
    :func:`bagged_member_estimate`. Otherwise to fit on all training rows: the
    trial's fit time (summed over its folds) per row it was fitted on, times the training
    rows, times :data:`REFIT_SAFETY`. A trial at a reduced budget fitted on (or iterated
    over) that fraction, so its time is scaled up by the budget too.

    The fit time is the smaller of its wall-clock and CPU seconds: a worker sharing the
    cores with other workers (or another program) takes longer on the wall clock than the
    refit will, alone after the search; a fit on several threads takes fewer."""
    budget = stored.trial.budget
    full = budget is None or budget >= 1
    if evaluator.fold_models is not None and full:  # bagged: its fold models are read back
        return bagged_member_estimate(stored, evaluator)
    fitted_rows = float(sum(len(train) for train, _ in evaluator.splits))
    if budget is not None and 0 < budget < 1:
        fitted_rows *= budget
    seconds = stored.fit_time if stored.fit_time else (stored.duration or 0.0)
    if stored.fit_cpu_time:
        seconds = min(seconds, stored.fit_cpu_time)
    return seconds * evaluator.dataset.n_rows / max(fitted_rows, 1.0) * REFIT_SAFETY


class FinalModelChooser:
    """Chooses the final model's trials from a run's history (see
    :mod:`automl_engine.final_model`): the best trial, or the ensembler's choice when it beats
    the best trial on the validation rows and its members can be refitted in time."""

    def __init__(
        self,
        history: RunHistory,
        evaluator: PipelineEvaluator,
        ensembler: Ensembler | None = None,
        ensembler_name: str = "",
    ) -> None:
        self.history, self.evaluator = history, evaluator
        self.ensembler, self.ensembler_name = ensembler, ensembler_name

    def choose(self, deadline: float | None = None) -> FinalChoice:
        """The final model's members among the best :data:`ENSEMBLE_POOL` trials."""
        best = self.history.best(ENSEMBLE_POOL if self.ensembler is not None else 1)
        if not best:
            return FinalChoice([], np.ones(0), reason="no finished trial")
        if self.ensembler is None or len(best) < 2:
            return FinalChoice(best[:1], np.ones(1))
        return self._among(best, deadline)

    def among(self, trials: list[StoredTrial], within: float | None = None) -> FinalChoice:
        """The choice over ``trials`` (best first): with no time limit, the members actually
        refitted when a refit took longer than estimated; ``within`` seconds, what finishing
        would choose with that much time left (the members it could refit)."""
        if self.ensembler is None or len(trials) < 2:
            return FinalChoice(trials[:1], np.ones(min(1, len(trials))))
        return self._among(trials, None if within is None else time.monotonic() + within)

    def _among(self, trials: list[StoredTrial], deadline: float | None) -> FinalChoice:
        assert self.ensembler is not None
        evaluator = self.evaluator
        slow: list[int] = []
        if deadline is not None:  # a member that alone outlasts the time left never fits
            left = max(deadline - time.monotonic(), 0.0)
            slow = [t.trial.id for t in trials[1:] if refit_estimate(t, evaluator) > left]
            trials = [t for t in trials if t.trial.id not in slow]
        scored = [
            Scored(t, p) for t in trials if (p := self.history.predictions(t.trial.id)) is not None
        ]
        if not scored or scored[0].trial is not trials[0]:
            return FinalChoice(
                trials[:1], np.ones(1), reason="the best trial: its predictions are not stored"
            )

        def too_slow(members: list[StoredTrial], weights: np.ndarray) -> list[StoredTrial]:
            assert deadline is not None
            plan, plan_weights = refit_plan(members, weights, trials[0])
            estimates = [refit_estimate(t, evaluator) for t in plan]
            late = too_slow_to_refit(estimates, plan_weights, deadline - time.monotonic(), 0)
            return [plan[i] for i in late]

        try:
            return choose_final_model(
                scored,
                self.ensembler,
                evaluator.validation_targets,
                evaluator.metric,
                too_slow if deadline is not None else None,
                left_out_for_time=slow,
            )
        except EnsemblerError as error:  # a plugin's bug must not cost the run its model
            name = self.ensembler_name or "?"
            headline = str(error).splitlines()[0]
            warnings.warn(
                f"ensembler {name!r} failed; the best trial is the final model: {error}",
                stacklevel=4,
            )
            reason = f"the best trial: ensembler {name!r} failed: {headline}"
            return FinalChoice(trials[:1], np.ones(1), reason=reason)


def final_model_chooser(
    history: RunHistory, evaluator: PipelineEvaluator, recipe: Recipe, plugins: Plugins
) -> FinalModelChooser:
    """The chooser of a run on data, with the recipe's ensembler when it names one."""
    ref = recipe.ensemble
    ensembler = plugins.create("ensembler", ref.name, ref.params) if ref is not None else None
    return FinalModelChooser(history, evaluator, ensembler, ref.name if ref else "")


def save_final_model(
    summary: RunSummary,
    chooser: FinalModelChooser,
    choice: FinalChoice,
    test: Dataset | None,
    saved: dict[str, Any],
    finishing: Finishing,
) -> None:
    """Refit the final model on all training rows (a bagged search: its members' fold models
    as they are), score it on the ``test`` rows, save it with ``saved`` (what ``automl
    predict`` checks: features, target) and the recipe.

    Under a deadline a best trial whose refit (or saving, bagged) would not end in time
    gives way to the best trial whose does (:func:`refit_fallback`), alone. The best trial
    is refitted first, whether it is a member or not: it is the model saved when the
    deadline leaves too little time for the chosen one. When a member could not be refitted
    in time, the choice is made again over those that were
    (with time left; once the deadline has passed, the best trial alone)."""
    evaluator, deadline = chooser.evaluator, finishing.deadline
    best = chooser.history.best(1)[0]
    if deadline is not None:  # refitted, or bagged (its fold models saved): within the time
        fallback = refit_fallback(
            chooser.history.best(ENSEMBLE_POOL), evaluator, deadline - time.monotonic()
        )
        if fallback.trial.id != best.trial.id:
            choice = _instead_of_best(summary, best, fallback, evaluator, deadline)
            best = fallback
    if evaluator.fold_models is not None:
        bagged = bagged_model(choice, evaluator, summary)
        if bagged is not None:
            _save(summary, bagged, test, saved, finishing)
            # the saved model holds the members' folds; the others' are hundreds of MB of
            # a disk (7.6 MB a trial on KEEL's german) that only a longer resumed search
            # could use, and it refits what it lacks
            evaluator.fold_models.keep_only(t.trial.id for t in choice.members)
            return
    plan, weights, first = list(choice.members), np.asarray(choice.weights, dtype=float), None
    if deadline is not None:
        plan, weights = refit_plan(choice.members, choice.weights, best)
        first = 0
    estimates = [refit_estimate(t, evaluator) for t in plan]
    configs = [dict(t.trial.config) for t in plan]
    seed = finishing.recipe.seed
    limit = finishing.threads if deadline is not None else None
    with threadpool_limits(limit) if limit is not None else contextlib.nullcontext():
        refitted = refit_members(evaluator, configs, weights, seed, deadline, estimates, first)
    summary.refit_seconds = refitted.seconds
    by_trial = {plan[i].trial.id: e for i, e in refitted.estimators.items()}
    final = choice
    if refitted.dropped:
        if deadline is not None and time.monotonic() >= deadline:
            final = FinalChoice(
                [best], np.ones(1), reason="the best trial: the refit ran out of time"
            )
        else:
            final = chooser.among(sorted((plan[i] for i in refitted.kept), key=rank_key))
        _record_dropped(summary, plan, weights, estimates, refitted, final)
    model = TrainedModel(
        evaluator.task,
        [by_trial[t.trial.id] for t in final.members],
        final.weights,
        evaluator.label_encoder,
        [dict(t.trial.config) for t in final.members],
    )
    _save(summary, model, test, saved, finishing)


def _save(
    summary: RunSummary,
    model: TrainedModel,
    test: Dataset | None,
    saved: dict[str, Any],
    finishing: Finishing,
) -> None:
    """Score ``model`` on the test rows and save it with ``saved`` and the recipe."""
    if test is not None:
        summary.test_scores = _test_scores(model, test)
    path = save_model(finishing.run_dir, {"model": model, "recipe": finishing.recipe.raw, **saved})
    summary.model_path, summary.model = str(path), model


def bagged_model(
    choice: FinalChoice, evaluator: PipelineEvaluator, summary: RunSummary
) -> TrainedModel | None:
    """The final model of a bagged search: each member's fold models, as fitted and
    validated in its trial, averaged (:class:`~automl_engine.model.BaggedPipeline`), nothing
    refitted. None (with a warning: the members are then refitted) when a member's fold
    models cannot be read: not kept (a trial at a reduced budget), or not signed by this
    user (a run folder from elsewhere, an altered file)."""
    assert evaluator.fold_models is not None
    started = time.monotonic()
    members = []
    for stored in choice.members:
        folds = evaluator.fold_models.read(stored.trial.id)
        if folds is None:
            warnings.warn(
                f"the fold models of trial {stored.trial.id} cannot be read back (not kept, "
                "or not signed by this user): the final model is refitted instead",
                stacklevel=4,
            )
            return None
        members.append(BaggedPipeline(folds, evaluator.n_classes))
    summary.refit_seconds = 0.0
    summary.bagged_seconds = round(time.monotonic() - started, 3)
    return TrainedModel(
        evaluator.task,
        members,
        choice.weights,
        evaluator.label_encoder,
        [dict(t.trial.config) for t in choice.members],
    )


def refit_fallback(
    ranked: list[StoredTrial], evaluator: PipelineEvaluator, seconds_left: float
) -> StoredTrial:
    """The trial a run under a deadline refits first, the model it must always be able to
    save: the best trial (``ranked`` is best first) when its refit is expected to end within
    ``seconds_left`` (plus :data:`FINISH_OVERHEAD_S`, so a refit of milliseconds is never
    traded away), else the best whose refit is. When none is (the deadline has passed), the
    best whose refit takes at most :data:`FINISH_OVERHEAD_S` longer than the quickest: every
    refit then overruns, and a better model is not traded for a second. A slow pipeline that
    wins late in a run (a forest on many rows) would otherwise take the run far past its
    wall time."""
    estimates = [refit_estimate(t, evaluator) for t in ranked]
    limit = max(seconds_left, min(estimates)) + FINISH_OVERHEAD_S
    return next(t for t, e in zip(ranked, estimates, strict=True) if e <= limit)


def _instead_of_best(
    summary: RunSummary,
    best: StoredTrial,
    fallback: StoredTrial,
    evaluator: PipelineEvaluator,
    deadline: float,
) -> FinalChoice:
    """The final model when the best trial cannot be refitted (or, bagged, its fold models
    saved) in time: ``fallback`` alone, said in the summary and a warning."""
    left = max(deadline - time.monotonic(), 0.0)
    estimate = refit_estimate(best, evaluator)
    work = "refit" if evaluator.fold_models is None else "save its fold models"
    reason = (
        f"trial {fallback.trial.id}: the best trial ({best.trial.id}) needs ~{estimate:.1f}s to "
        f"{work} and {left:.1f}s were left"
    )
    warnings.warn(f"the final model is {reason}", stacklevel=4)
    summary.dropped_members = [
        {"trial": best.trial.id, "weight": 1.0, "estimated_seconds": round(estimate, 3)}
    ]
    choice = FinalChoice([fallback], np.ones(1), reason=reason)
    summary.record_choice(choice)
    return choice


def _test_scores(model: TrainedModel, test: Dataset) -> dict[str, float]:
    encoder = model.label_encoder
    y_test = encoder.transform(test.y) if encoder is not None else np.asarray(test.y, float)
    return score_all(model.task, y_test, model.raw_predictions(test.X))


def _record_dropped(
    summary: RunSummary,
    plan: list[StoredTrial],
    weights: np.ndarray,
    estimates: list[float],
    refitted: Refitted,
    final: FinalChoice,
) -> None:
    """Say in the summary (and a warning) which members the deadline left out; the
    ensemble's weights become those of the model actually saved."""
    summary.dropped_members = [
        {
            "trial": plan[i].trial.id,
            "weight": float(weights[i]),
            "estimated_seconds": round(estimates[i], 3),
        }
        for i in refitted.dropped
    ]
    summary.record_choice(final)
    left_out = ", ".join(
        f"trial {d['trial']} (weight {d['weight']:.3f}, ~{d['estimated_seconds']:.1f}s)"
        for d in summary.dropped_members
    )
    warnings.warn(
        f"the deadline left no time to refit {len(refitted.dropped)} of the "
        f"{len(plan)} planned refits: {left_out}; the final model was chosen again among "
        f"the {len(refitted.kept)} refitted: {final.reason}",
        stacklevel=5,
    )
