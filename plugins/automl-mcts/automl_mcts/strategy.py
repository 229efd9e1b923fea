"""Mosaic: Monte-Carlo tree search over pipeline structure, Bayesian optimisation of the
hyper-parameters, one shared surrogate (Rakotoarison et al., IJCAI 2019; thesis ch. 4).

Each ``ask`` after the initial design runs one MCTS iteration:

1. **Selection** from the root by PUCT (Eq. 4.4) with the softmax prior of the partial
   surrogate (Eqs. 4.2-4.3), until a node that progressive widening lets grow;
2. **Expansion** of that node by its child of highest partial-surrogate value;
3. **Playout C**: the candidate of highest expected improvement among ``n_r`` random
   completions of the new node and the neighbours of the best pipeline seen below it;
4. **Back-propagation** (at ``tell``): the loss joins every node compatible with the
   pipeline, whose value is the median.

The surrogate is the recipe's (``rf`` by default in recipes; any registered one works), fitted
on every result so far plus a constant lie for each trial still running, so that several
asks before a tell spread out; visits count running trials too (a virtual visit).

Before the tree, Mosaic.Vanilla's initial design (a default and ``kappa`` random pipelines
per learning algorithm: 72 on auto-sklearn's space) takes at most ``INITIAL_SHARE`` of the
run's trials, so that the tree search runs at short budgets too. With a trial budget the
design is cut once, at set-up. With a time budget the run's length in trials is unknown at
set-up, so it is estimated while the design is served (see :meth:`MCTS._design_done`).
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from typing import Any

import attrs
import numpy as np

from automl_core.contracts import WARM_START_ORIGIN, SearchContext, SearchStrategy, Surrogate
from automl_core.space import require_vector_space
from automl_core.trial import Candidate, Result, Trial
from automl_mcts.decisions import Decisions, Structure, make_decisions
from automl_mcts.tree import Node, puct, softmax, widening_limit
from automl_spaces.acquisition import (
    PENDING_LIES,
    best_first,
    constant_liar_targets,
    expected_improvement,
    failures_as_worst,
    prepared_surrogate,
)
from automl_spaces.options import integer, number, one_of, optional

#: At most this many of the best-ranked playout candidates are decoded looking for one not
#: proposed before; past that the node counts as exhausted.
MAX_DECODES = 64
#: The initial design takes at most this fraction of a run's trials: of its trial budget,
#: or of the trials its time budget is expected to hold at the rate results arrive.
INITIAL_SHARE = 0.25
#: With a time budget, the rate is trusted once this many of the strategy's own trials have
#: finished (or a quarter of the time budget has passed, whichever comes first).
MIN_OBSERVED = 4
#: Never fewer initial-design trials than this: the surrogate needs two finite results.
MIN_DESIGN = 2

log = logging.getLogger(__name__)


@attrs.define(slots=False, eq=False)
class MCTS(SearchStrategy):
    """Mosaic's tree search; see the module docstring and docs/strategies.md.

    Parameters (the thesis's defaults, §4.4.2):
        c_ucb: PUCT's exploration constant C_ucb (1.3; the thesis also prints 0.6).
        pw: progressive widening exponent PW (0.6): a node may have floor(n^PW) children.
        n_s: completions averaged by the partial surrogate Q_F (100).
        n_r: random completions scored in a playout (1,000, shared with SMAC).
        kappa: random pipelines per learning algorithm in the initial design (3), after
            its default pipeline (Mosaic.Vanilla).
        initial_design: the initial design's size; None: Vanilla's, capped at a quarter of
            the run's trials: of its trial budget when the recipe sets one, of the trials
            its time budget is expected to hold when it sets one (see ``_design_done``).
        order: the decision stages in decision order; None: the learning algorithm first,
            then the other choice stages from the model backwards.
        neighbours: Gaussian steps per numeric hyper-parameter in a pipeline's
            neighbourhood (4), or on a pool the number of nearest candidates (20).
        pending_lie: the loss assumed for running trials when the surrogate is fitted.

    ``clock`` (an attribute, ``time.monotonic`` by default, first read in ``setup``) is what
    the time-budget rule measures seconds with; tests replace it to simulate trial times.
    """

    surrogate_use = "required"

    c_ucb: float = attrs.field(default=1.3, validator=number(at_least=0))
    pw: float = attrs.field(default=0.6, validator=number(above=0, at_most=1))
    n_s: int = attrs.field(default=100, validator=integer(at_least=1))
    n_r: int = attrs.field(default=1000, validator=integer(at_least=1))
    kappa: int = attrs.field(default=3, validator=integer(at_least=0))
    initial_design: int | None = attrs.field(default=None, validator=optional(integer(at_least=0)))
    order: list[str] | None = attrs.field(default=None, converter=attrs.converters.optional(list))
    neighbours: int | None = attrs.field(default=None, validator=optional(integer(at_least=0)))
    pending_lie: str = attrs.field(default="mean", validator=one_of(*PENDING_LIES))
    clock: Callable[[], float] = attrs.field(default=time.monotonic, init=False, repr=False)

    # -- set-up ------------------------------------------------------------------------------
    def setup(self, context: SearchContext) -> None:
        super().setup(context)
        self.rng = np.random.default_rng(context.seed)
        space = require_vector_space(context.space, "mcts")
        self.decisions: Decisions = make_decisions(space, self.order, self.neighbours)
        if not self.decisions.stages:
            raise ValueError(
                f"mcts searches the structure of pipelines, and space {space.name!r} has no "
                "stage with a choice of components: search it with smbo (e.g. search: "
                "{name: smbo, surrogate: rf})"
            )
        self.surrogate: Surrogate = prepared_surrogate(context.new_surrogate, space, context)
        self.tree: dict[Structure, Node] = {(): Node()}
        self._options: dict[Structure, list[int]] = {}
        #: every result: (item, structure, loss), in the order told
        self.results: list[tuple[Any, Structure, float]] = []
        #: running trials by configuration key: (item, the nodes given a virtual visit)
        self.pending: dict[str, tuple[Any, list[Structure]]] = {}
        self.fitted = False
        self._fit_stale = True
        self._partial_cache: dict[Structure, float] = {}
        self.queue = self._initial_queue(context)
        #: initial-design pipelines proposed (the loop's warm start not counted), and results
        #: told for trials run in this process: its own and the warm start's (not replayed)
        self.design_issued = 0
        self.observed = 0
        self._set_up_at = self.clock()
        self._first_result_at: float | None = None

    def _initial_queue(self, context: SearchContext) -> list[Candidate]:
        """Mosaic.Vanilla's design: for each learning algorithm (in a seeded random order)
        its default pipeline, then ``kappa`` random pipelines each, round-robin; cut to the
        design's size, of which the warm start the loop serves first takes its share."""
        queue: list[Candidate] = []
        roots = self._options_of(())
        order = [roots[i] for i in self.rng.permutation(len(roots))]
        extra = []  # a root with no default pipeline (a pool's) gets one more random one
        for a in order:
            row = self.decisions.default((a,))
            if row is None:
                extra.append(a)
            else:
                queue.append(Candidate(self.decisions.config(row[0]), origin="default"))
        randoms = [
            self.decisions.completions((a,), self.kappa + (a in extra), self.rng) for a in order
        ]
        for k in range(self.kappa + 1):
            queue += [
                Candidate(self.decisions.config(items[k]), origin="initial")
                for items in randoms
                if k < len(items)
            ]
        served = context.served_first
        return queue[
            : max(0, self._design_size(served + len(queue), context.trial_budget) - served)
        ]

    def _design_size(self, vanilla: int, trial_budget: int | None) -> int:
        """The queue's length at set-up: ``initial_design`` if given, else at most a quarter
        of the trial budget (the warm start included, as it always was)."""
        if self.initial_design is not None:
            return self.initial_design
        if trial_budget is None:
            return vanilla
        return min(vanilla, max(MIN_DESIGN, math.floor(INITIAL_SHARE * trial_budget)))

    def _design_done(self) -> bool:
        """Whether to stop serving the initial design, under a time budget.

        The run's length in trials is estimated from the rate at which this strategy's own
        trials finished (results replayed on resume are not counted: they took no time
        here; see :meth:`_expected_trials`). The design stops once
        the design pipelines proposed reach ``max(MIN_DESIGN, floor(INITIAL_SHARE *
        estimate))``. The rate is trusted once ``MIN_OBSERVED`` results have come, or once a
        quarter of the time budget has passed (a run of slow trials); until then the design
        goes on, which loses little: its default pipelines come first, and they are the most
        informative. The trial budget's cap was applied at set-up, so with both budgets the
        smaller estimate wins. An explicit ``initial_design`` is left alone, and so is a run
        with no time budget: it stays deterministic.
        """
        budget = self.context.time_budget
        if self.initial_design is not None or budget is None:
            return False
        if self.design_issued < MIN_DESIGN:
            return False
        elapsed = self.clock() - self._set_up_at
        if self.observed < MIN_OBSERVED and elapsed < INITIAL_SHARE * budget:
            return False
        expected = self._expected_trials(elapsed, budget)
        cap = max(MIN_DESIGN, math.floor(INITIAL_SHARE * expected))
        if self.design_issued < cap:
            return False
        log.info(
            "mcts: the initial design stops after %d pipelines: %d results in %.1f s, about "
            "%.0f trials expected in the %.0f s budget",
            self.design_issued, self.observed, elapsed, expected, budget,
        )  # fmt: skip
        return True

    def _expected_trials(self, elapsed: float, budget: float) -> float:
        """The trials the run is expected to hold: those finished so far, plus the seconds
        left times the rate since the first result. The rate is measured from the first
        result, not from set-up, so that the workers' start-up (and the first imports in
        them) does not pass for slow trials; with a single result, from set-up."""
        first = self._first_result_at
        now = self.clock()
        if self.observed >= 2 and first is not None and now > first:
            rate = (self.observed - 1) / (now - first)
        elif elapsed > 0:
            rate = self.observed / elapsed
        else:
            return math.inf
        return self.observed + rate * max(budget - elapsed, 0.0)

    # -- ask ---------------------------------------------------------------------------------
    def ask(self) -> Candidate | None:
        while self.queue:
            if self._design_done():
                self.queue = []
                break
            candidate = self.queue.pop(0)
            if self.decisions.claim_config(candidate.config):
                self._start(self.decisions.item_of(candidate.config), candidate.config)
                self.design_issued += 1
                return candidate
        self._fit()
        while not self.tree[()].exhausted:
            leaf = self._select()
            if leaf is None:
                continue
            item, config = self._playout(leaf)
            if config is None:
                self.tree[leaf].exhausted = True
                continue
            self._start(item, config)
            return Candidate(config, origin=f"mcts-depth{len(leaf)}")
        return None

    def _start(self, item: Any, config: dict[str, Any]) -> None:
        """A virtual visit to every node compatible with the proposed pipeline."""
        path = self._compatible_nodes(self._structure(item))
        for prefix in path:
            self.tree[prefix].pending += 1
        self.pending[self.context.space.key(config)] = (item, path)
        self._fit_stale = True

    # -- selection and expansion --------------------------------------------------------------
    def _select(self) -> Structure | None:
        """The node to play out: descend by PUCT until a node may widen, and expand it; None
        when a node on the way turned out to be exhausted (the caller starts again)."""
        prefix: Structure = ()
        while len(prefix) < len(self.decisions.stages):
            node = self.tree[prefix]
            options = self._options_of(prefix)
            live = [a for a in node.children if not self.tree[(*prefix, a)].exhausted]
            fresh = [a for a in options if a not in node.children]
            limit = widening_limit(node.visits, self.pw, len(options))
            if fresh and (len(node.children) < limit or not live):
                return self._expand(prefix, fresh)
            if not live:
                node.exhausted = True
                return None
            prefix = (*prefix, self._puct_choice(prefix, options, live))
        return prefix

    def _expand(self, prefix: Structure, fresh: list[int]) -> Structure | None:
        """Add the child of highest partial-surrogate value (ties at random)."""
        values = self._partial(prefix, fresh)
        option = fresh[int(best_first(values, self.rng)[0])]
        child = (*prefix, option)
        node = Node([loss for _, s, loss in self.results if s[: len(child)] == child])
        self.tree[prefix].children.append(option)
        self.tree[child] = node
        if self.decisions.exhausted(child):
            node.exhausted = True
            return None
        return child

    def _puct_choice(self, prefix: Structure, options: list[int], live: list[int]) -> int:
        """Eq. 4.4 over the live children; the prior spreads over every admissible option
        (Eq. 4.3 sums over all of them); a child with no finished result is valued by the
        partial surrogate."""
        partial = self._partial(prefix, options)
        prior = softmax(partial)
        position = {a: i for i, a in enumerate(options)}
        worst = self._worst()
        children = [self.tree[(*prefix, a)] for a in live]
        q = [
            value if (value := child.value(worst)) is not None else partial[position[a]]
            for a, child in zip(live, children, strict=True)
        ]
        scores = puct(
            np.array(q),
            prior[[position[a] for a in live]],
            self.tree[prefix].visits,
            np.array([child.visits for child in children]),
            self.c_ucb,
        )
        return live[int(best_first(scores, self.rng)[0])]

    def _partial(self, prefix: Structure, options: list[int]) -> np.ndarray:
        """Q_F(s, a) for each option a (Eq. 4.2): the mean predicted score of ``n_s``
        completions of s.a; all zero (a uniform prior) before the surrogate is fitted."""
        if not self.fitted:
            return np.zeros(len(options))
        missing = [a for a in options if (*prefix, a) not in self._partial_cache]
        if missing:
            groups = [self.decisions.completions((*prefix, a), self.n_s, self.rng) for a in missing]
            sizes = [len(g) for g in groups]
            rows = self.decisions.encode(np.concatenate(groups))
            mean, _ = self.surrogate.predict(rows)
            for a, chunk in zip(
                missing, np.split(np.asarray(mean), np.cumsum(sizes)[:-1]), strict=True
            ):
                self._partial_cache[(*prefix, a)] = (
                    -float(chunk.mean()) if len(chunk) else -math.inf
                )
        return np.array([self._partial_cache[(*prefix, a)] for a in options])

    def _options_of(self, prefix: Structure) -> list[int]:
        if prefix not in self._options:
            self._options[prefix] = self.decisions.options(prefix)
        return self._options[prefix]

    # -- playout -------------------------------------------------------------------------------
    def _playout(self, prefix: Structure) -> tuple[Any, dict[str, Any] | None]:
        """Playout C: ``n_r`` random completions of the node plus the neighbours of the best
        pipeline below it, ranked by expected improvement; the best not proposed before."""
        self.decisions.refresh(prefix, self.rng)
        items = self.decisions.completions(prefix, self.n_r, self.rng, unclaimed=True)
        best = self._best_below(prefix)
        if best is not None:
            items = np.concatenate([items, self.decisions.neighbours(best, prefix, self.rng)])
        if not len(items):
            return None, None
        if self.fitted:
            mean, std = self.surrogate.predict(self.decisions.encode(items))
            scores = expected_improvement(np.asarray(mean), np.asarray(std), self._best_loss())
            order = best_first(scores, self.rng)
        else:
            order = self.rng.permutation(len(items))
        for index in order[:MAX_DECODES]:
            config = self.decisions.claim(items[index])
            if config is not None:
                return items[index], config
        return None, None

    def _best_below(self, prefix: Structure) -> Any:
        """The evaluated pipeline of lowest loss in X(prefix), or None."""
        below = [
            (loss, i)
            for i, (_, s, loss) in enumerate(self.results)
            if s[: len(prefix)] == prefix and math.isfinite(loss)
        ]
        return self.results[min(below)[1]][0] if below else None

    # -- the surrogate ---------------------------------------------------------------------------
    def _fit(self) -> None:
        """Fit the shared surrogate on every result, a constant lie for each running trial."""
        if not self._fit_stale:
            return
        losses = np.array([loss for _, _, loss in self.results], dtype=float)
        if np.isfinite(losses).sum() < 2:
            return
        losses = failures_as_worst(losses)
        items = [item for item, _, _ in self.results]
        items += [item for item, _ in self.pending.values()]
        targets = constant_liar_targets(losses, len(self.pending), self.pending_lie)
        self.surrogate.fit(self.decisions.encode(_stack(items)), targets)
        self.fitted, self._fit_stale = True, False
        self._partial_cache.clear()

    def _best_loss(self) -> float:
        finite = [loss for _, _, loss in self.results if math.isfinite(loss)]
        return min(finite)

    def _worst(self) -> float:
        finite = [loss for _, _, loss in self.results if math.isfinite(loss)]
        return max(finite) if finite else 1.0

    # -- tell: back-propagation -----------------------------------------------------------------
    def tell(self, trial: Trial, result: Result) -> None:
        key = self.context.space.key(trial.config)
        started = self.pending.pop(key, None)
        if started is None:  # the loop's warm start, replayed on resume, or someone else's
            self.decisions.claim_config(trial.config)
            item = self.decisions.item_of(trial.config)
        else:
            item, path = started
            for prefix in path:
                self.tree[prefix].pending -= 1
        # the warm start's trials (the loop serves them before the design) ran in this
        # process's time too: they count in the rate at which trials finish
        if started is not None or trial.origin == WARM_START_ORIGIN:  # run in this process's time
            self.observed += 1
            if self._first_result_at is None:
                self._first_result_at = self.clock()
        loss = result.loss if result.ok else math.inf
        structure = self._structure(item)
        self.results.append((item, structure, loss))
        for prefix in self._compatible_nodes(structure):
            self.tree[prefix].losses.append(loss)
        self._fit_stale = True

    def _structure(self, item: Any) -> Structure:
        return tuple(int(v) for v in self.decisions.structures(_stack([item]))[0])

    def _compatible_nodes(self, structure: Structure) -> list[Structure]:
        """The nodes of the tree whose prefix the structure extends, root first."""
        path: list[Structure] = [()]
        for depth in range(1, len(structure) + 1):
            if structure[:depth] not in self.tree:
                break
            path.append(structure[:depth])
        return path


def _stack(items: list[Any]) -> np.ndarray:
    """Items as one array: rows of a pipeline space, candidate indices of a pool."""
    first = np.asarray(items[0])
    return np.vstack(items) if first.ndim else np.asarray(items, dtype=int)
