"""SMBO: SMAC's loop with whatever surrogate the recipe names.

Each ``ask`` after the initial design fits the surrogate on the observed (configuration, loss)
pairs -- plus a *constant lie* for every trial still running, so that several asks before a
tell do not all chase the same point -- and proposes the configuration that maximises the
acquisition function. A set fraction of asks are plain random configurations, which keeps the
search from trusting a wrong model forever (SMAC's interleaved random design).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import attrs
import numpy as np

from automl_core.contracts import SearchContext, SearchStrategy, Surrogate
from automl_core.space import VectorSpace, require_vector_space
from automl_core.trial import Candidate, Config, Result, Trial
from automl_smbo.acquisition import make_acquisition
from automl_smbo.optimizer import LocalSearch, PerComponentSearch
from automl_smbo.targets import TARGET_TRANSFORMS, transform_losses
from automl_spaces.acquisition import (
    PENDING_LIES,
    constant_liar_targets,
    failures_as_worst,
    prepared_surrogate,
    rank_pool,
)
from automl_spaces.component_rows import components_alone, stage_position
from automl_spaces.options import integer, number, one_of, optional, probability
from automl_spaces.pool_space import PoolSpace

#: Random configurations are drawn in batches of this size, at most this many batches.
RANDOM_BATCH, RANDOM_BATCHES = 16, 50


@attrs.define(slots=False, eq=False)
class SMBO(SearchStrategy):
    """Sequential model-based optimisation over pipeline spaces and pools.

    Parameters:
        acquisition: ``ei`` (expected improvement), ``pi`` or ``lcb``.
        xi: EI/PI's improvement margin; kappa: LCB's exploration weight.
        initial_design: configurations proposed before the model is used (the warm start's
            configurations count towards it, then the space's default, then random ones).
        initial_per_component: when set, the random part of the initial design is this many
            random configurations of *each* component of the space's stage
            ``initial_stage`` (default: the last stage, where pipelines put their model),
            as the shared-latent-space paper starts (2 per algorithm); they replace the
            random part of ``initial_design``.
        random_fraction: probability that an ask after the initial design is random.
        pending_lie: the loss assumed for running trials: the ``mean``, ``min`` or ``max``
            of the observed losses (constant liar).
        n_random, n_starts, max_steps, neighbours_per_number: the acquisition optimiser on
            pipeline spaces (see :class:`~automl_smbo.optimizer.LocalSearch`); pools are
            scored whole.
        acquisition_stage: when set, the acquisition is maximised in each component of this
            stage apart, from ``component_starts`` random configurations of each, and the
            best over components is proposed (the shared-latent-space paper's per-algorithm
            EI: :class:`~automl_smbo.optimizer.PerComponentSearch`); ``last`` names the
            space's last stage. On a pool, which is scored whole, it changes nothing.
        target_transform: what the surrogate is fitted to (:mod:`automl_smbo.targets`):
            ``none`` (the losses), ``log`` or ``copula`` (monotone transforms that keep the
            order of the losses and even out heavy tails); ``auto`` (the default): the
            surrogate's ``preferred_target_transform`` where it names one (the random
            forest: ``copula``, measured in issue 48), else ``none``.
        refit_every: the surrogate is fitted again once this many results have come since
            its last fit (1: before every model-based ask). Between fits an ask scores with
            the last fit, against the best loss observed now; the proposals made since are
            skipped (the seen set), so parallel workers get the next best candidates of one
            model, a batch. One driver feeding many workers of short trials spends most of
            its time fitting (178 ms an ask at 5,000 observations for smbo:rf,
            docs/benchmarks.md, issue 48); ``refit_every: 8`` fits an eighth as often.
    """

    surrogate_use = "required"

    acquisition: str = "ei"
    xi: float = attrs.field(default=0.0, validator=number())
    kappa: float = attrs.field(default=2.0, validator=number())
    initial_design: int = attrs.field(default=10, validator=integer(at_least=1))
    initial_per_component: int | None = attrs.field(
        default=None, validator=optional(integer(at_least=1))
    )
    initial_stage: str | None = None
    random_fraction: float = attrs.field(default=0.2, validator=probability())
    pending_lie: str = attrs.field(default="mean", validator=one_of(*PENDING_LIES))
    n_random: int = attrs.field(default=256, validator=integer(at_least=1))
    n_starts: int = attrs.field(default=4, validator=integer(at_least=0))
    max_steps: int = attrs.field(default=5, validator=integer(at_least=0))
    neighbours_per_number: int = attrs.field(default=2, validator=integer(at_least=1))
    acquisition_stage: str | None = None
    component_starts: int = attrs.field(default=10, validator=integer(at_least=1))
    target_transform: str = attrs.field(
        default="auto", validator=one_of("auto", *TARGET_TRANSFORMS)
    )
    refit_every: int = attrs.field(default=1, validator=integer(at_least=1))

    def __attrs_post_init__(self) -> None:
        #: the acquisition function the name and its parameters make
        self.score_with = make_acquisition(self.acquisition, xi=self.xi, kappa=self.kappa)
        self.local_search = LocalSearch(
            self.n_random, self.n_starts, self.max_steps, self.neighbours_per_number
        )

    # -- set-up ------------------------------------------------------------------------------
    def setup(self, context: SearchContext) -> None:
        super().setup(context)
        #: the acquisition optimiser works on encoded rows
        self.space: VectorSpace = require_vector_space(context.space, "smbo")
        #: a pool is scored whole; any other space by local search over encoded rows
        self.pool: PoolSpace | None = self.space.as_pool()
        self.rng = np.random.default_rng(context.seed)
        self.surrogate: Surrogate = prepared_surrogate(context.new_surrogate, self.space, context)
        #: the transform the surrogate is fitted to, ``auto`` resolved
        self.fitted_transform = fitted_transform(self.target_transform, self.surrogate)
        #: every configuration proposed or told, by key (on a pool, the ranking leaves out
        #: their candidates)
        self.seen: dict[str, Config] = {}
        self.observed: dict[str, tuple[np.ndarray, float]] = {}
        self.pending: dict[str, np.ndarray] = {}
        self.queue = self._initial_queue(context)
        self.per_component = self._per_component_search()
        #: how many results the surrogate's last fit saw (None: not fitted yet)
        self.fitted_on: int | None = None

    def _per_component_search(self) -> PerComponentSearch | None:
        """The per-component optimiser ``acquisition_stage`` asks for (None: not asked, or a
        pool, which is scored whole)."""
        if self.acquisition_stage is None or self.pool is not None:
            return None
        name = None if self.acquisition_stage == "last" else self.acquisition_stage
        blocks = self.space.blocks()
        stage = blocks.stages[stage_position(blocks, name, "smbo: acquisition_stage")].name
        search = self.local_search
        return PerComponentSearch(
            stage, self.component_starts, search.max_steps, search.neighbours_per_number
        )

    def _initial_queue(self, context: SearchContext) -> list[Candidate]:
        """The space's default, then random configurations (or ``initial_per_component``'s)
        up to ``initial_design``, of which the warm start the loop serves first takes its
        share."""
        queue = []
        default = self.space.default()  # None on a pool
        if default is not None:
            queue.append(Candidate(default, origin="default"))
        if self.initial_per_component is not None:
            return queue + self._initial_per_component()
        missing = self.initial_design - context.served_first - len(queue)
        if missing > 0:
            queue += [Candidate(c, origin="initial") for c in self.space.sample(self.rng, missing)]
        return queue

    def _initial_per_component(self) -> list[Candidate]:
        """``initial_per_component`` random configurations of each component of the
        initial stage, component by component (a component the space cannot sample alone,
        e.g. a pool with none of its candidates offered, is skipped)."""
        assert self.initial_per_component is not None
        blocks = self.space.blocks()
        stage = blocks.stages[stage_position(blocks, self.initial_stage, "smbo: initial_stage")]
        queue = []
        for alone in components_alone(self.space, stage.name).values():
            configs = alone.sample(self.rng, self.initial_per_component)
            queue += [Candidate(self.space.validate(c), origin="initial") for c in configs]
        return queue

    # -- ask ---------------------------------------------------------------------------------
    def ask(self) -> Candidate | None:
        while self.queue:
            candidate = self.queue.pop(0)
            if self._claim(candidate.config):
                return candidate
        if len(self.observed) < 2 or self.rng.random() < self.random_fraction:
            return self._random()
        return self._model_based() or self._random()

    def _random(self) -> Candidate | None:
        """A random configuration not proposed before (None when none is left to find)."""
        for _ in range(RANDOM_BATCHES):
            batch: Iterable[tuple[Config, np.ndarray | None]]
            if self.pool is not None:
                configs = self.space.sample(self.rng, RANDOM_BATCH)
                batch = [(config, None) for config in configs]
            else:  # decode lazily: turning a row into a configuration is the costly part
                rows = self.space.sample_vectors(self.rng, RANDOM_BATCH)
                batch = ((self.space.decode(row), row) for row in rows)
            found = False
            for config, row in batch:
                found = True
                if self._claim(config, row):
                    return Candidate(config, origin="random")
            if not found:
                break
        return None

    def _model_based(self) -> Candidate | None:
        score = self._fit_and_score()
        if self.pool is not None:
            proposed = [int(config["candidate"]) for config in self.seen.values()]
            indices, _ = rank_pool(self.pool, score, proposed, self.rng)
            if not indices.size:
                return None
            config = {"candidate": int(indices[0])}
            self._claim(config)  # never proposed: the ranking left out every seen candidate
            return Candidate(config, origin="acquisition")
        if self.per_component is not None:
            ranked = self.per_component.rank(self.space, score, self._best_rows(None), self.rng)
        else:
            starts = self._best_rows(self.local_search.n_starts // 2 or 1)
            ranked = self.local_search.rank(self.space, score, starts, self.rng)
        for row, origin in zip(ranked.rows, ranked.origins, strict=True):
            config = self.space.decode(row)
            if self._claim(config, row):
                return Candidate(config, origin=f"acquisition-{origin}")
        return None

    def _fit_and_score(self) -> Any:
        rows = [vector for vector, _ in self.observed.values()]
        losses = np.array([loss for _, loss in self.observed.values()], dtype=float)
        losses = transform_losses(failures_as_worst(losses), self.fitted_transform)
        if self._fit_is_due():
            rows += list(self.pending.values())
            targets = constant_liar_targets(losses, len(self.pending), self.pending_lie)
            self.surrogate.fit(np.vstack(rows), targets)
            self.fitted_on = len(self.observed)
        best = float(losses.min())  # the transforms keep the order: the same best trial

        def score(candidates: np.ndarray) -> np.ndarray:
            mean, std = self.surrogate.predict(candidates)
            return self.score_with(np.asarray(mean), np.asarray(std), best)

        return score

    def _fit_is_due(self) -> bool:
        """Whether ``refit_every`` results have come since the surrogate's last fit."""
        return self.fitted_on is None or len(self.observed) - self.fitted_on >= self.refit_every

    def _best_rows(self, n: int | None) -> np.ndarray:
        """The ``n`` encoded configurations (None: every one) with the lowest observed
        losses, best first: climbs start there."""
        ordered = sorted(self.observed.values(), key=lambda item: item[1])
        rows = [vector for vector, loss in ordered[:n] if np.isfinite(loss)]
        return np.vstack(rows) if rows else np.empty((0, 0))

    def _claim(self, config: Config, row: np.ndarray | None = None) -> bool:
        """Mark ``config`` (encoded as ``row``, when the caller has it) as proposed and
        running; False if it was proposed before."""
        key = self.space.key(config)
        if key in self.seen:
            return False
        self.seen[key] = config
        self.pending[key] = self.space.encode([config])[0] if row is None else row
        return True

    # -- tell --------------------------------------------------------------------------------
    def tell(self, trial: Trial, result: Result) -> None:
        key = self.space.key(trial.config)
        vector = self.pending.pop(key, None)
        if vector is None:  # a result replayed on resume, or from another strategy
            vector = self.space.encode([trial.config])[0]
        self.seen[key] = trial.config
        self.observed[key] = (vector, result.loss if result.ok else np.inf)


def fitted_transform(target_transform: str, surrogate: Surrogate) -> str:
    """``target_transform``, or for ``auto`` the transform ``surrogate`` prefers (an optional
    ``preferred_target_transform`` attribute: a forest's mean and spread follow a heavy tail
    of losses, a GP normalises its targets), ``none`` when it names none."""
    if target_transform != "auto":
        return target_transform
    preferred = str(getattr(surrogate, "preferred_target_transform", "none"))
    if preferred not in TARGET_TRANSFORMS:
        raise ValueError(
            f"{type(surrogate).__name__}.preferred_target_transform is {preferred!r}: "
            f"smbo knows {list(TARGET_TRANSFORMS)}"
        )
    return preferred
