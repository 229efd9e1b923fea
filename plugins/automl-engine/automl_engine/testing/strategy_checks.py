"""Checks of a search strategy: the rules of :class:`~automl_core.contracts.SearchStrategy`
that the run loop relies on, each run on the kit's small spaces (:mod:`.spaces`)."""

from __future__ import annotations

import numpy as np

from automl_core.contracts import (
    DEFAULT_DATA_FIDELITY,
    WARM_START_ORIGIN,
    SearchContext,
    SearchStrategy,
    WarmStart,
)
from automl_core.errors import InvalidConfigurationError
from automl_core.space import SearchSpace
from automl_core.trial import Candidate, Result, Status, Trial
from automl_engine.loop import replay_calls
from automl_engine.proposals import Proposals, start
from automl_engine.testing.components import Component, NotApplicable, check, describe_kind
from automl_engine.testing.spaces import (
    PIPELINE,
    POOL,
    NearestSurrogate,
    loss_of,
    space_of,
)
from automl_engine.validation import SURROGATE_USES

STRATEGY = "search_strategy"
describe_kind(STRATEGY, "Search strategies")


def claimed_kinds(component: Component) -> list[str]:
    """The space kinds the strategy says it searches (``space_kinds``), in a fixed order;
    a claim that is empty or names an unknown kind fails (it would make every check
    vacuous)."""
    kinds = set(getattr(type(component.build()), "space_kinds", {PIPELINE, POOL}))
    unknown = sorted(kinds - {PIPELINE, POOL})
    assert kinds and not unknown, (
        f"space_kinds {sorted(kinds)}: expected one or both of {PIPELINE!r} and {POOL!r}"
    )
    return [kind for kind in (PIPELINE, POOL) if kind in kinds]


def set_up(
    component: Component, kind: str, seed: int = 0, warm_start: WarmStart | None = None
) -> tuple[SearchStrategy, SearchSpace]:
    """A fresh strategy, set up on a fresh space of ``kind``, with a surrogate and the
    default budget range (and a warm start, counted as the loop serves it)."""
    space = space_of(kind)
    strategy = component.build()
    surrogate = component.surrogate
    context = SearchContext(
        space=space,
        seed=seed,
        surrogate_factory=surrogate.build if surrogate is not None else NearestSurrogate,
        warm_start=warm_start,
        fidelity=DEFAULT_DATA_FIDELITY,
    )
    start(strategy, context)  # as a run sets it up; the checks ask the strategy itself
    return strategy, space


def ask(strategy: SearchStrategy, space: SearchSpace, number: int) -> Candidate | None:
    """``strategy.ask()``, checked: None or a Candidate whose configuration is valid in
    ``space`` and whose budget is None or in the range the strategy was given."""
    return checked(strategy.ask(), strategy, space, number)


def checked(
    candidate: Candidate | None, strategy: SearchStrategy, space: SearchSpace, number: int
) -> Candidate | None:
    """``candidate``, the answer to ask #``number``, checked as :func:`ask` says."""
    if candidate is None:
        return None
    assert isinstance(candidate, Candidate), (
        f"ask() #{number} returned {type(candidate).__name__}, expected a Candidate or None"
    )
    try:
        space.validate(candidate.config)
    except InvalidConfigurationError as error:
        raise AssertionError(
            f"ask() #{number} proposed an invalid configuration: {error}"
        ) from None
    fidelity = strategy.context.fidelity or DEFAULT_DATA_FIDELITY
    budget = candidate.budget
    assert budget is None or fidelity.min - 1e-9 <= budget <= fidelity.max + 1e-9, (
        f"ask() #{number} proposed budget {budget}, outside the range [{fidelity.min:g}, "
        f"{fidelity.max:g}] it was given"
    )
    return candidate


def ok(space: SearchSpace, trial: Trial) -> Result:
    return Result(Status.OK, loss_of(space, trial.config))


def search(
    strategy: SearchStrategy, space: SearchSpace, trials: int, first_id: int = 0
) -> list[Trial]:
    """Ask and tell one at a time, up to ``trials`` trials (fewer if the strategy runs out),
    numbered from ``first_id``."""
    told = []
    for number in range(first_id, first_id + trials):
        candidate = ask(strategy, space, number)
        if candidate is None:
            break
        trial = Trial.from_candidate(number, candidate)
        strategy.tell(trial, ok(space, trial))
        told.append(trial)
    return told


def proposals(trials: list[Trial], space: SearchSpace) -> list[tuple[str, float | None]]:
    return [(space.key(t.config), t.budget) for t in trials]


@check(STRATEGY)
def check_strategy_says_how_it_uses_a_surrogate(component: Component) -> None:
    """``surrogate_use`` is ``"required"``, ``"optional"`` or ``"unused"``: validation refuses
    a recipe without a surrogate for a strategy that requires one, before the run."""
    use = getattr(type(component.build()), "surrogate_use", "optional")
    assert use in SURROGATE_USES, f"surrogate_use is {use!r}, expected one of {SURROGATE_USES}"


@check(STRATEGY)
def check_strategy_sets_up_on_the_spaces_it_claims(component: Component) -> None:
    """``setup`` then ``ask`` works on a pipeline space and on a pool, as far as the
    strategy's ``space_kinds`` claims them (both by default)."""
    for kind in claimed_kinds(component):
        strategy, space = set_up(component, kind)
        assert ask(strategy, space, 0) is not None, f"the first ask() on a {kind} space was None"
        strategy.close()


@check(STRATEGY)
def check_strategy_asks_several_times_before_a_tell(component: Component) -> None:
    """Parallel workers: the run loop asks for several trials before the first result
    arrives; every proposal is valid, none is a trial still pending, and the results may
    then come back in any order."""
    for kind in claimed_kinds(component):
        strategy, space = set_up(component, kind)
        asked = [ask(strategy, space, number) for number in range(4)]
        assert all(c is not None for c in asked), f"ask() returned None early on a {kind} space"
        trials = [Trial.from_candidate(i, c) for i, c in enumerate(asked) if c is not None]
        pending = proposals(trials, space)
        assert len(set(pending)) == len(pending), (
            f"4 asks before a tell on a {kind} space proposed the same trial twice: {pending}"
        )
        for trial in reversed(trials):
            strategy.tell(trial, ok(space, trial))
        assert ask(strategy, space, 4) is not None, f"no ask() after the tells on a {kind} space"


@check(STRATEGY)
def check_strategy_keeps_asking_after_failed_trials(component: Component) -> None:
    """A crash, a timeout and a memory-out are results too (infinite loss, no metrics):
    told in any order among good ones, the strategy keeps proposing valid trials."""
    failures = [Status.CRASHED, Status.TIMEOUT, Status.MEMOUT]
    for kind in claimed_kinds(component):
        strategy, space = set_up(component, kind)
        asked = [ask(strategy, space, number) for number in range(6)]
        trials = [Trial.from_candidate(i, c) for i, c in enumerate(asked) if c is not None]
        order = np.random.default_rng(0).permutation(len(trials))
        for position in order:
            trial = trials[position]
            if position < len(failures):
                strategy.tell(trial, Result.failure(failures[position], "the kit's failure"))
            else:
                strategy.tell(trial, ok(space, trial))
        after = search(strategy, space, 4)
        assert len(after) == 4, f"after the failures on a {kind} space, ask() returned None"


@check(STRATEGY)
def check_strategy_ends_when_the_pool_is_exhausted(component: Component) -> None:
    """On a finite pool, ``ask`` returns None once nothing is left to propose (the run
    then ends), not before every offered candidate was proposed, and never proposes a
    candidate twice at the same budget."""
    if POOL not in claimed_kinds(component):
        raise NotApplicable("the strategy does not search pools (space_kinds)")
    strategy, space = set_up(component, POOL)
    offered = len(space.candidates())  # type: ignore[attr-defined]
    limit = 10 * offered  # a multi-fidelity strategy may propose each at a few budgets
    trials = search(strategy, space, limit)
    seen = proposals(trials, space)
    repeated = sorted({p for p in seen if seen.count(p) > 1}, key=str)
    assert not repeated, f"proposed twice at the same budget: {repeated[:3]}"
    assert len(trials) < limit, (
        f"ask() still proposed after {limit} trials on a pool of {offered} candidates; "
        "it must return None when the pool is exhausted"
    )
    proposed = {t.config["candidate"] for t in trials}
    assert len(proposed) == offered, (
        f"ask() returned None after proposing {len(proposed)} of the {offered} candidates"
    )


@check(STRATEGY)
def check_strategy_is_deterministic_given_its_seed(component: Component) -> None:
    """The same seed gives the same proposals (a run is reproducible from its recipe's
    seed), and another seed other proposals."""
    for kind in claimed_kinds(component):
        runs = {}
        for label, seed in (("first", 0), ("again", 0), ("other", 1)):
            strategy, space = set_up(component, kind, seed=seed)
            runs[label] = proposals(search(strategy, space, 8), space)
        assert runs["first"] == runs["again"], (
            f"two runs with seed 0 on a {kind} space proposed different trials:\n"
            f"  {runs['first']}\n  {runs['again']}"
        )
        assert runs["first"] != runs["other"], (
            f"seeds 0 and 1 proposed the same trials on a {kind} space: is the seed used?"
        )


def search_in_pairs(
    strategy: SearchStrategy,
    space: SearchSpace,
    trials: int,
    pending: list[Trial] | None = None,
    proposals: Proposals | None = None,
) -> tuple[list[Trial], list[tuple[Trial, Result, int]]]:
    """Two trials in flight, as with two workers: ask until two are pending, tell the
    older, ask again... up to ``trials`` asks. ``pending`` are trials asked before (a
    resumed run's requeued ones). The strategy is asked through the loop's
    :class:`~automl_engine.proposals.Proposals` (``proposals``: the one a replay used), as
    in a run. Returns the trials asked, and the results told with how many trials had been
    asked by then (what the history keeps for a replay)."""
    asked: list[Trial] = []
    told: list[tuple[Trial, Result, int]] = []
    pending = list(pending or [])
    first = pending[0].id + len(pending) if pending else 0
    source = proposals or Proposals(strategy, space)
    while len(asked) < trials:
        candidate = checked(source.ask(), strategy, space, first + len(asked))
        if candidate is None:
            break
        trial = Trial.from_candidate(first + len(asked), candidate)
        asked.append(trial)
        pending.append(trial)
        if len(pending) == 2:
            done = pending.pop(0)
            result = ok(space, done)
            strategy.tell(done, result)
            told.append((done, result, first + len(asked)))
    return asked, told


@check(STRATEGY)
def check_strategy_resumes_as_if_never_interrupted(component: Component) -> None:
    """A run killed and resumed proposes what it would have proposed uninterrupted (``automl
    resume`` keeps that promise). A resumed run sets up a fresh strategy with the same seed
    and calls it as the interrupted one was called (:func:`automl_engine.loop.replay_calls`:
    the same asks, the results told after the same asks), so the strategy must be
    deterministic given its seed and those calls, not keep state elsewhere (the clock, a
    global random stream). Here with two trials in flight, killed after six results."""
    for kind in claimed_kinds(component):
        strategy, space = set_up(component, kind)
        uninterrupted, told = search_in_pairs(strategy, space, 14)
        if len(uninterrupted) < 14:
            raise NotApplicable(f"the strategy proposed only {len(uninterrupted)} trials")
        killed_after = 6
        asked_by_then = told[killed_after - 1][2]
        resumed, space = set_up(component, kind)
        replayed = Proposals(resumed, space)
        differed = replay_calls(replayed, uninterrupted[:asked_by_then], told[:killed_after])
        assert not differed, (
            f"on a {kind} space, replaying the interrupted run's calls, ask() proposed other "
            f"trials than it did the first time (trials {differed}): it is not deterministic "
            "given its seed and the calls it gets"
        )
        requeued = uninterrupted[killed_after:asked_by_then]  # running when it was killed
        later, _ = search_in_pairs(resumed, space, 14 - asked_by_then, requeued, replayed)
        expected = proposals(uninterrupted[asked_by_then:], space)
        assert proposals(later, space) == expected, (
            f"on a {kind} space, the resumed run proposed\n  {proposals(later, space)}\nwhere "
            f"the uninterrupted one proposed\n  {expected}"
        )


@check(STRATEGY)
def check_strategy_takes_the_warm_start(component: Component) -> None:
    """The warm start comes first. A strategy that ``serves_warm_start`` proposes its
    configurations first, in any order; for any other the run loop runs them before the
    first ask and tells their results like its own: the strategy then goes on proposing
    valid configurations, none of those again."""
    for kind in claimed_kinds(component):
        space = space_of(kind)
        configs = space.sample(np.random.default_rng(7), 3)
        strategy, space = set_up(component, kind, warm_start=WarmStart(configs=list(configs)))
        wanted = {space.key(c) for c in configs}
        if strategy.serves_warm_start:
            first = [ask(strategy, space, number) for number in range(len(configs))]
            asked = {space.key(c.config) for c in first if c is not None}
            assert asked == wanted, (
                f"the first {len(configs)} proposals on a {kind} space were not the warm "
                f"start's configurations (serves_warm_start is true): missing "
                f"{sorted(wanted - asked)}"
            )
            continue
        for number, config in enumerate(configs):  # as the loop serves them
            trial = Trial(number, space.validate(config), origin=WARM_START_ORIGIN)
            strategy.tell(trial, ok(space, trial))
        later = search(strategy, space, 6, first_id=len(configs))
        assert later, f"after the warm start's results on a {kind} space, ask() proposed nothing"
        again = sorted(wanted & {space.key(t.config) for t in later})
        assert not again, (
            f"on a {kind} space, the strategy proposed the warm start's configurations {again} "
            "again after the loop had run them and told it their results (the run loop serves "
            "the warm start: drop the strategy's own queue of it, or set serves_warm_start = "
            "True to place it yourself)"
        )
