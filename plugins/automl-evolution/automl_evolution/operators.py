"""Variation operators: how a child is made from one parent (mutation) or two (crossover).

Each space kind gets its own operators, because what "a small change" means differs:

* :class:`PipelineVariation` on a :class:`~automl_spaces.pipeline_space.PipelineSpace` changes one
  hyper-parameter, or swaps the component of one stage, and crosses two pipelines stage by
  stage -- the structure auto-sklearn's and TPOT's pipelines share.
* :class:`PoolVariation` on a :class:`~automl_spaces.pool_space.PoolSpace` (a finite set of encoded
  candidates, as in a table-lookup benchmark) moves to a nearby candidate, and crosses two
  candidates by looking for the one nearest to a mix of their encodings.
* :class:`Variation` itself, for any other :class:`~automl_core.space.SearchSpace`, makes no
  children at all: the strategy then proposes random samples instead, since the protocol gives
  no notion of a neighbour or of parts to recombine.

Operators return ``None`` when they cannot make a child (no admissible one was found, or the
pool has nothing left near enough); the strategy then tries again or samples at random.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import numpy as np
from ConfigSpace import ConfigurationSpace

from automl_core.errors import InvalidConfigurationError
from automl_core.space import INACTIVE, PipelineComponent, SearchSpace, Stage, by_kind, plain_config
from automl_core.trial import Config
from automl_spaces.pipeline_space import PipelineSpace
from automl_spaces.pool_space import PoolSpace
from automl_spaces.snapping import PoolSnapper

log = logging.getLogger(__name__)

#: How many (stage, component) swaps are tried before giving up on an inadmissible parent
#: (a swap can land on a forbidden combination, e.g. a decision tree after kernel PCA).
SWAP_ATTEMPTS = 10
#: How many random stage assignments a crossover tries before giving up (each can be forbidden).
CROSSOVER_ATTEMPTS = 5
#: How many neighbours a hyper-parameter mutation decodes before giving up: a small step of an
#: integer can round back to the parent's value.
STEP_ATTEMPTS = 5
#: A pool mutation picks at random among this many nearest candidates not proposed yet.
NEAREST = 5


class Variation:
    """Operators for a space the strategy knows nothing about: no children at all.

    Every method answers ``None``, so the strategy falls back to random samples from
    ``space.sample`` (a plain :class:`~automl_core.space.SearchSpace` offers no neighbours and
    no parts to recombine).
    """

    def mutate(self, parent: Config, rng: np.random.Generator, swap: bool) -> dict | None:
        """A child one small step from ``parent``; ``swap`` asks for a change of component
        rather than of a hyper-parameter value (the other kind is tried when it is impossible)."""
        return None

    def crossover(self, a: Config, b: Config, rng: np.random.Generator) -> dict | None:
        """A child made of parts of ``a`` and ``b``."""
        return None

    def proposed(self, config: Config) -> None:
        """Told of every configuration proposed or evaluated, so operators that pick from a
        finite set can avoid what is taken."""


# ---------------------------------------------------------------------------------------------
# Pipeline spaces
# ---------------------------------------------------------------------------------------------


def stage_component(config: Config, stage: Stage) -> str:
    """The name of the component ``config`` chooses in ``stage``."""
    return str(config[stage.choice_name]) if stage.choice else stage.components[0].name


def stage_part(config: Config, stage: Stage) -> dict[str, Any]:
    """Every key of ``config`` that belongs to ``stage``: its choice and the chosen component's
    hyper-parameters. These travel together: a component's values mean nothing without it."""
    prefix = stage.param_prefix(stage_component(config, stage))
    part = {name: value for name, value in config.items() if name.startswith(prefix)}
    if stage.choice:
        part[stage.choice_name] = config[stage.choice_name]
    return part


def recombine(
    stages: Sequence[Stage], a: Config, b: Config, from_b: Sequence[bool]
) -> dict[str, Any]:
    """Uniform per-stage crossover: each stage wholly from ``b`` where ``from_b`` says so, else
    from ``a``; keys of no stage (constants) from ``a``. Not validated."""
    parts_a = [stage_part(a, stage) for stage in stages]
    staged = set().union(*parts_a)
    child = {name: value for name, value in a.items() if name not in staged}
    for stage, part_a, take_b in zip(stages, parts_a, from_b, strict=True):
        child.update(stage_part(b, stage) if take_b else part_a)
    return child


def with_component(parent: Config, stage: Stage, component: str, params: Config) -> dict[str, Any]:
    """``parent`` with ``component`` chosen in ``stage``, with ``params`` (full names) as its
    hyper-parameters; every other stage's keys unchanged. Not validated."""
    old = stage_part(parent, stage)
    child = {name: value for name, value in parent.items() if name not in old}
    child[stage.choice_name] = component
    child.update(params)
    return child


def changed_columns(base: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Per row of ``rows`` (neighbours of the encoded ``base``), the column whose value was
    changed, or -1 when none was.

    A neighbour changes one active value; children of a changed categorical may switch on
    (inactive in ``base``) or off (inactive in the row) with it, so only columns active on
    both sides count.
    """
    differs = (rows != base) & (base != INACTIVE) & (rows != INACTIVE)
    return np.where(differs.any(axis=1), differs.argmax(axis=1), -1)


class PipelineVariation(Variation):
    """Mutation and crossover on a conditional pipeline space.

    * **Hyper-parameter mutation**: a random one-exchange neighbour (``neighbour_vectors``, the
      encoded form of ``space.neighbours``; forbidden values are already left out) that keeps
      every stage's component. The changed hyper-parameter is drawn uniformly among the active
      ones first, then its new value, so that a categorical with many values is not changed
      more often than a number.
    * **Component swap**: a stage with a choice (and more than one component) gets another
      component, drawn uniformly; every other stage keeps its keys. The new component's
      hyper-parameters are a random draw of its own sub-space: that is exactly the conditional
      distribution of a random sample of the whole space with this component chosen (stages
      are independent given their choices), valid under the component's own conditions and
      forbidden clauses by construction, and it costs one small draw rather than rejection
      sampling of whole pipelines. Its defaults would be valid too, but would put every swapped
      component at the same point, so repeated swaps would collide as duplicates. A swap that
      lands on a forbidden combination of stages is rejected by ``validate`` and another
      (stage, component) is tried.
    * **Crossover**: uniform per stage (:func:`recombine`), validated; up to
      ``CROSSOVER_ATTEMPTS`` assignments are tried when the result is forbidden.

    Every child is returned as ``space.validate`` returns it (canonical, conditional values
    cleaned).
    """

    def __init__(self, space: PipelineSpace) -> None:
        self.space = space
        self.swappable = tuple(s for s in space.stages if s.choice and len(s.components) > 1)
        choices = {stage.choice_name for stage in space.stages if stage.choice}
        self.is_choice_column = np.array([c.name in choices for c in space.columns()], dtype=bool)
        self._subspaces: dict[tuple[str, str], ConfigurationSpace] = {}

    def mutate(self, parent: Config, rng: np.random.Generator, swap: bool) -> dict | None:
        kinds = [self.swap_component, self.mutate_hyperparameter]
        for mutation in kinds if swap else kinds[::-1]:
            child = mutation(parent, rng)
            if child is not None:
                return child
        return None

    def mutate_hyperparameter(self, parent: Config, rng: np.random.Generator) -> dict | None:
        """A child differing from ``parent`` in one hyper-parameter value (same components)."""
        base = self.space.encode([parent])[0]
        rows = self.space.neighbour_vectors(base, rng, 1)
        if not len(rows):
            return None
        changed = changed_columns(base, rows)
        usable = changed >= 0
        usable[usable] = ~self.is_choice_column[changed[usable]]
        columns = np.unique(changed[usable])
        if not columns.size:
            return None
        for _ in range(STEP_ATTEMPTS):
            column = rng.choice(columns)
            row = rows[rng.choice(np.flatnonzero(usable & (changed == column)))]
            child = self._decoded(row)
            if child is not None and child != dict(parent):
                return child
        return None

    def swap_component(self, parent: Config, rng: np.random.Generator) -> dict | None:
        """A child choosing another component in one stage (see the class docstring)."""
        if not self.swappable:
            return None
        tried: set[tuple[str, str]] = set()
        for _ in range(SWAP_ATTEMPTS):
            stage = self.swappable[rng.integers(len(self.swappable))]
            current = stage_component(parent, stage)
            others = [c for c in stage.components if c.name != current]
            component = others[rng.integers(len(others))]
            if (stage.name, component.name) in tried:
                continue
            tried.add((stage.name, component.name))
            params = self.random_parameters(stage, component, rng)
            child = self._valid(with_component(parent, stage, component.name, params))
            if child is not None:
                return child
        return None

    def random_parameters(
        self, stage: Stage, component: PipelineComponent, rng: np.random.Generator
    ) -> dict[str, Any]:
        """A random draw of ``component``'s hyper-parameters, named as in the space."""
        key = (stage.name, component.name)
        if key not in self._subspaces:
            self._subspaces[key] = component.hyperparameters()
        subspace = self._subspaces[key]
        if not len(subspace):
            return {}
        subspace.seed(int(rng.integers(2**31 - 1)))
        prefix = stage.param_prefix(component.name)
        values = plain_config(subspace.sample_configuration())
        return {prefix + name: value for name, value in values.items()}

    def crossover(self, a: Config, b: Config, rng: np.random.Generator) -> dict | None:
        stages = self.space.stages
        for _ in range(CROSSOVER_ATTEMPTS):
            from_b = (rng.random(len(stages)) < 0.5).tolist()
            child = self._valid(recombine(stages, a, b, from_b))
            if child is not None:
                return child
        return None

    def _valid(self, config: Config) -> dict | None:
        try:
            return self.space.validate(config)
        except (InvalidConfigurationError, ValueError):
            return None

    def _decoded(self, row: np.ndarray) -> dict | None:
        try:
            return self._valid(self.space.decode(row))
        except ValueError:  # ConfigSpace's errors for a vector it will not take
            return None


# ---------------------------------------------------------------------------------------------
# Pools
# ---------------------------------------------------------------------------------------------


class PoolVariation(Variation):
    """Mutation and crossover on a finite pool of encoded candidates.

    Distances are Euclidean on the encodings scaled to [0, 1] per column over the offered
    candidates (:class:`~automl_spaces.snapping.PoolSnapper`'s scaling, so that a wide column
    does not dominate). Only candidates not proposed yet are ever returned.

    * **Mutation**: one of the ``nearest`` candidates closest to the parent, at random. When
      the pool has ``stage_choices``, a hyper-parameter mutation prefers candidates with the
      same component in every stage, and a component swap candidates that differ in exactly
      one stage's component (falling back to any candidate when there is none).
    * **Crossover**: the candidate nearest to a uniform per-column mix of the parents' scaled
      encodings, parents excluded; with ``stage_choices``, among the candidates whose
      components follow a uniform per-stage mix of the parents' (when any does).
    """

    def __init__(self, space: PoolSpace, nearest: int = NEAREST) -> None:
        snapper = PoolSnapper(space)  # ValueError for an empty pool or non-finite encodings
        self.indices = snapper.indices
        self.points = snapper.scaled[:, snapper.varying]
        self.row_of = {int(index): row for row, index in enumerate(self.indices)}
        self.free = np.ones(len(self.indices), dtype=bool)
        choices = space.stage_choices
        self.stages = None if choices is None else np.asarray(choices)[self.indices]
        self.nearest = nearest

    def proposed(self, config: Config) -> None:
        row = self.row_of.get(int(config["candidate"]))
        if row is not None:
            self.free[row] = False

    def random_unproposed(self, rng: np.random.Generator) -> dict | None:
        """A uniformly random candidate not proposed yet; ``None`` once the pool is used up."""
        rows = np.flatnonzero(self.free)
        return None if not rows.size else self._config(rng.choice(rows))

    def mutate(self, parent: Config, rng: np.random.Generator, swap: bool) -> dict | None:
        row = self.row_of.get(int(parent["candidate"]))
        if row is None:  # not offered here (a result replayed from a larger pool)
            return None
        allowed = self.free.copy()
        allowed[row] = False
        if self.stages is not None:
            differing = (self.stages != self.stages[row]).sum(axis=1)
            preferred = allowed & (differing == (1 if swap else 0))
            if preferred.any():
                allowed = preferred
        return self.near(self.points[row], allowed, rng, self.nearest)

    def crossover(self, a: Config, b: Config, rng: np.random.Generator) -> dict | None:
        row_a, row_b = self.row_of.get(int(a["candidate"])), self.row_of.get(int(b["candidate"]))
        if row_a is None or row_b is None:
            return None
        from_b = rng.random(self.points.shape[1]) < 0.5
        target = np.where(from_b, self.points[row_b], self.points[row_a])
        allowed = self.free.copy()
        allowed[[row_a, row_b]] = False
        if self.stages is not None:
            stage_from_b = rng.random(self.stages.shape[1]) < 0.5
            wanted = np.where(stage_from_b, self.stages[row_b], self.stages[row_a])
            matching = allowed & (self.stages == wanted).all(axis=1)
            if matching.any():
                allowed = matching
        return self.near(target, allowed, rng, 1)

    def near(
        self, target: np.ndarray, allowed: np.ndarray, rng: np.random.Generator, k: int
    ) -> dict | None:
        """One of the ``k`` allowed candidates nearest to the scaled point ``target``, at
        random; ``None`` when none is allowed."""
        rows = np.flatnonzero(allowed)
        if not rows.size:
            return None
        distances = np.sum((self.points[rows] - target) ** 2, axis=1)
        closest = rows[np.argsort(distances, kind="stable")[: min(k, rows.size)]]
        return self._config(rng.choice(closest))

    def _config(self, row: int) -> dict:
        return {"candidate": int(self.indices[row])}


def variation_for(space: SearchSpace) -> Variation:
    """The operators for ``space``'s kind (see the module docstring): the kind's own
    structure comes from the space's typed protocol (:func:`~automl_core.space.vector_space`,
    dispatched by :func:`~automl_core.space.by_kind`)."""

    def on_pool(pool: PoolSpace) -> Variation:
        try:
            return PoolVariation(pool)
        except ValueError as error:  # no distances to work with: children are random
            log.warning("evolution on pool %r proposes random children: %s", pool.name, error)
            return Variation()

    return by_kind(space, PipelineVariation, on_pool, Variation)
