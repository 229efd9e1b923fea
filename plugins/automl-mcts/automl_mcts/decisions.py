"""The structural decisions a tree search takes, on both kinds of search space.

A node of Mosaic's tree is a *k-pipeline structure*: the components chosen in the first k
decision stages, in a fixed order (the learning algorithm first). The tree needs four things
of a space, whatever its kind, and :class:`PipelineDecisions` and :class:`PoolDecisions`
give them:

* the admissible options of the next stage after a prefix (never an inadmissible structure);
* completions of a prefix drawn from Mosaic's default distribution D[X(s)] (uniform over
  each remaining stage's admissible components, then uniform over their hyper-parameters);
* the neighbours of a complete pipeline that keep a prefix;
* turning what was chosen into a configuration, and a configuration into its structure.

A structure is a tuple of option indices, one per decision stage in decision order. What
the strategy scores is an array of *items*: encoded rows on a pipeline space, candidate
indices on a pool; ``encode`` turns items into the rows a surrogate reads.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np
from ConfigSpace.util import change_hp_value

from automl_core.space import INACTIVE, VectorSpace, by_kind
from automl_core.trial import Config
from automl_spaces.pipeline_space import PipelineSpace
from automl_spaces.pool_space import PoolSpace
from automl_spaces.snapping import PoolSnapper

#: Stage names that hold the learning algorithm, the root decision when a pool names one.
MODEL_STAGES = ("estimator", "classifier", "regressor", "model", "learner")
#: Random hyper-parameter vectors kept per component; ``REFRESH`` of them are drawn anew each
#: time a component is used in a playout, so that completions keep finding new values.
RESERVOIR, REFRESH = 256, 32

Structure = tuple[int, ...]


class Decisions(Protocol):
    """What :class:`~automl_mcts.strategy.MCTS` needs of a space; see the module docstring."""

    #: The decision stages, in decision order (the learning algorithm first).
    stages: tuple[str, ...]

    def options(self, prefix: Structure) -> list[int]: ...

    def completions(
        self, prefix: Structure, n: int, rng: np.random.Generator, unclaimed: bool = False
    ) -> np.ndarray: ...

    def structures(self, items: np.ndarray) -> np.ndarray: ...

    def default(self, prefix: Structure) -> np.ndarray | None: ...

    def neighbours(self, item: Any, prefix: Structure, rng: np.random.Generator) -> np.ndarray: ...

    def encode(self, items: np.ndarray) -> np.ndarray: ...

    def config(self, item: Any) -> dict[str, Any]: ...

    def item_of(self, config: Config) -> Any: ...

    def claim(self, item: Any) -> dict[str, Any] | None: ...

    def claim_config(self, config: Config) -> bool: ...

    def exhausted(self, prefix: Structure) -> bool: ...

    def refresh(self, structure: Structure, rng: np.random.Generator) -> None: ...


def decision_order(
    names: Sequence[str], model_stage: str, order: Sequence[str] | None
) -> tuple[str, ...]:
    """The decision stages in decision order: ``order`` when given (it must name each
    stage once), else the model's stage first, then the others from the model backwards
    (the steps nearest the model first, in reverse pipeline order)."""
    if order is not None:
        if sorted(order) != sorted(names):
            raise ValueError(
                f"order must name each decision stage of the space once: {sorted(names)}; "
                f"got {list(order)}"
            )
        return tuple(order)
    others = [name for name in reversed(names) if name != model_stage]
    return (model_stage, *others) if model_stage in names else tuple(others)


# ---------------------------------------------------------------------------------------------
# Pipeline spaces
# ---------------------------------------------------------------------------------------------


class _ComponentSampler:
    """Random hyper-parameter vectors of one component, written into full-space rows.

    A component's sub-space encodes each hyper-parameter exactly as the flattened space does
    (the same definition under a longer name), so a full row is assembled from one vector
    per chosen component: far cheaper than sampling conditional configurations of the whole
    space and rejecting those of the wrong structure.
    """

    def __init__(self, space: PipelineSpace, stage_index: int, component: int) -> None:
        stage = space.stages[stage_index]
        self.component = stage.components[component]
        self.sub = self.component.hyperparameters()
        prefix = stage.param_prefix(self.component.name)
        index = space.configspace.index_of
        names = list(self.sub.index_of)
        self.columns = np.array([index[prefix + name] for name in names], dtype=int)
        self.vectors: np.ndarray | None = None

    def draw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` hyper-parameter vectors (rows), drawn from the reservoir."""
        if not len(self.columns):
            return np.empty((n, 0))
        if self.vectors is None:
            self.vectors = self._sample(rng, RESERVOIR)
        rows = rng.integers(len(self.vectors), size=n)
        return self.vectors[rows]

    def refresh(self, rng: np.random.Generator) -> None:
        if self.vectors is not None and len(self.columns):
            replaced = rng.choice(len(self.vectors), REFRESH, replace=False)
            self.vectors[replaced] = self._sample(rng, REFRESH)

    def _sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        self.sub.seed(int(rng.integers(2**31 - 1)))
        sampled = self.sub.sample_configuration(n)
        sampled = [sampled] if n == 1 else sampled
        return np.array([c.get_array() for c in sampled], dtype=float)


class PipelineDecisions:
    """The choice stages of a :class:`PipelineSpace` as tree decisions.

    Stages offering a single component are not decisions: every completion takes that
    component (with random hyper-parameters). Items are encoded rows (``space.encode``).
    """

    def __init__(
        self, space: PipelineSpace, order: Sequence[str] | None = None, neighbours: int = 4
    ) -> None:
        self.space = space
        self.n_neighbours = neighbours
        configspace = space.configspace
        self.width = len(configspace)
        choice_stages = [s.name for s in space.stages if s.choice and len(s.components) > 1]
        self.stages = decision_order(choice_stages, space.stages[-1].name, order)
        self._stage_index = {s.name: i for i, s in enumerate(space.stages)}
        self._column = {
            s.name: configspace.index_of[s.choice_name] for s in space.stages if s.choice
        }
        self._samplers: dict[tuple[int, int], _ComponentSampler] = {}
        self._base = self._base_row()
        self._forbidden = self._forbidden_checks()
        self._seen: set[str] = set()

    # -- structure ---------------------------------------------------------------------------
    def options(self, prefix: Structure) -> list[int]:
        depth = len(prefix)
        chosen = np.full((1, len(self.stages)), -1)
        chosen[0, :depth] = prefix
        return [int(i) for i in np.flatnonzero(self._allowed(chosen, depth)[0])]

    def structures(self, items: np.ndarray) -> np.ndarray:
        columns = [self._column[name] for name in self.stages]
        return np.asarray(items[:, columns], dtype=int)

    def _forbidden_checks(self) -> list[list[tuple[int, list[tuple[int, int]]]]]:
        """Per decision depth: (option, conditions) pairs meaning "``option`` is forbidden
        where the earlier decisions ``conditions`` ((depth, option) pairs) were taken".

        Each forbidden combination is checked at its member decided last; a member in a
        stage that is no decision (a single offered component) always holds.
        """
        depth_of = {name: depth for depth, name in enumerate(self.stages)}
        checks: list[list[tuple[int, list[tuple[int, int]]]]] = [[] for _ in self.stages]
        for combination in self.space.forbidden_combinations():
            members = [
                (depth_of[stage], self._option_index(stage, name))
                for stage, name in combination
                if stage in depth_of
            ]
            if members:
                *conditions, (depth, option) = sorted(members)
                checks[depth].append((option, conditions))
        return checks

    def _option_index(self, stage: str, component: str) -> int:
        names = [c.name for c in self.space.stage(stage).components]
        return names.index(component)

    def _allowed(self, chosen: np.ndarray, depth: int) -> np.ndarray:
        """(rows x options of the stage at ``depth``): which options complete no forbidden
        combination with the earlier decisions of each row of ``chosen``."""
        options = len(self.space.stage(self.stages[depth]).components)
        allowed = np.ones((len(chosen), options), dtype=bool)
        for option, conditions in self._forbidden[depth]:
            hit = np.ones(len(chosen), dtype=bool)
            for earlier, value in conditions:
                hit &= chosen[:, earlier] == value
            allowed[hit, option] = False
        return allowed

    # -- drawing completions -------------------------------------------------------------------
    def completions(
        self, prefix: Structure, n: int, rng: np.random.Generator, unclaimed: bool = False
    ) -> np.ndarray:
        """Up to ``n`` rows drawn from D[X(prefix)] (fewer only where a draw meets a stage
        whose every option is forbidden). ``unclaimed`` is ignored: a pipeline space is too
        large to exhaust, and the strategy skips proposals made before."""
        chosen = self._complete(prefix, n, rng)
        if not len(chosen):
            return np.empty((0, self.width))
        return self._rows(chosen, rng)

    def _complete(self, prefix: Structure, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` structures (rows of option indices) extending ``prefix``: each later stage's
        option uniform among those the earlier decisions allow."""
        chosen = np.full((n, len(self.stages)), -1)
        chosen[:, : len(prefix)] = prefix
        alive = np.ones(n, dtype=bool)
        for depth in range(len(prefix), len(self.stages)):
            allowed = self._allowed(chosen, depth)
            keys = rng.random(allowed.shape)
            keys[~allowed] = -1.0
            chosen[:, depth] = keys.argmax(axis=1)
            alive &= allowed.any(axis=1)
        return chosen[alive]

    def _rows(self, chosen: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Full encoded rows for the structures ``chosen``, hyper-parameters drawn per
        component."""
        rows = np.tile(self._base, (len(chosen), 1))
        depth_of = {name: depth for depth, name in enumerate(self.stages)}
        for stage_index, stage in enumerate(self.space.stages):
            if stage.name in depth_of:
                picks = chosen[:, depth_of[stage.name]]
            else:  # one component offered
                picks = np.zeros(len(chosen), dtype=int)
            if stage.name in self._column:
                rows[:, self._column[stage.name]] = picks
            for component in np.unique(picks):
                sampler = self._sampler(stage_index, int(component))
                members = np.flatnonzero(picks == component)
                rows[np.ix_(members, sampler.columns)] = sampler.draw(rng, len(members))
        rows[~np.isfinite(rows)] = INACTIVE
        return rows

    def _sampler(self, stage_index: int, component: int) -> _ComponentSampler:
        key = (stage_index, component)
        if key not in self._samplers:
            self._samplers[key] = _ComponentSampler(self.space, stage_index, component)
        return self._samplers[key]

    def refresh(self, structure: Structure, rng: np.random.Generator) -> None:
        """Draw new hyper-parameter values for the components of ``structure``."""
        for name, option in zip(self.stages, structure, strict=False):
            self._sampler(self._stage_index[name], option).refresh(rng)

    def _base_row(self) -> np.ndarray:
        """Every column inactive except those no stage owns (the space's constants)."""
        default = self.space.configspace.get_default_configuration().get_array()
        base = np.full(self.width, np.nan)
        index = self.space.configspace.index_of
        for name in self.space.constants:
            base[index[name]] = default[index[name]]
        return base

    # -- around one pipeline ---------------------------------------------------------------------
    def default(self, prefix: Structure) -> np.ndarray | None:
        """The space's default pipeline with the choices of ``prefix`` switched in (their
        components at their default hyper-parameters); None when that is inadmissible."""
        configspace = self.space.configspace
        row = configspace.get_default_configuration().get_array()
        for name, option in zip(self.stages, prefix, strict=False):
            column = self._column[name]
            if row[column] != option:
                row = change_hp_value(
                    configspace, row, self.space.stage(name).choice_name, option, column
                )
        if any(clause.is_forbidden_vector(row) for clause in configspace.forbidden_clauses):
            return None
        row = np.array(row, dtype=float)
        row[~np.isfinite(row)] = INACTIVE
        return row[None, :]

    def neighbours(self, item: Any, prefix: Structure, rng: np.random.Generator) -> np.ndarray:
        """Mosaic's neighbours of a pipeline that stay in X(prefix): one hyper-parameter
        changed, or one decision changed with the new component at its defaults."""
        rows = self.space.neighbour_vectors(np.asarray(item, dtype=float), rng, self.n_neighbours)
        if not len(rows) or not prefix:
            return rows
        keep = (self.structures(rows)[:, : len(prefix)] == np.asarray(prefix)).all(axis=1)
        return rows[keep]

    # -- items and configurations -----------------------------------------------------------------
    def encode(self, items: np.ndarray) -> np.ndarray:
        return items

    def config(self, item: Any) -> dict[str, Any]:
        return self.space.decode(np.asarray(item, dtype=float))

    def item_of(self, config: Config) -> np.ndarray:
        return self.space.encode([config])[0]

    def claim(self, item: Any) -> dict[str, Any] | None:
        """Mark the pipeline ``item`` as proposed and return its configuration; None if it
        was proposed before."""
        config = self.config(item)
        key = self.space.key(config)
        if key in self._seen:
            return None
        self._seen.add(key)
        return config

    def claim_config(self, config: Config) -> bool:
        key = self.space.key(self.space.validate(config))
        if key in self._seen:
            return False
        self._seen.add(key)
        return True

    def exhausted(self, prefix: Structure) -> bool:
        """Never known in advance: a node counts as exhausted once a playout finds no
        pipeline that was not proposed before."""
        return False


# ---------------------------------------------------------------------------------------------
# Pools
# ---------------------------------------------------------------------------------------------


class PoolDecisions:
    """The stages of a :class:`PoolSpace` whose candidates carry ``stage_choices``.

    Items are candidate indices. A prefix's completions are the offered candidates with that
    structure; a candidate's neighbours are the nearest offered candidates of the same prefix
    (Euclidean on the encodings scaled per column), the pool's stand-in for "one value
    changed", since a pool's candidates are not one change apart.
    """

    def __init__(
        self, space: PoolSpace, order: Sequence[str] | None = None, neighbours: int = 20
    ) -> None:
        if space.stage_choices is None or not space.stage_names:
            raise ValueError(
                f"pool {space.name!r} does not say which component each candidate chooses in "
                "each stage (stage_names, stage_choices): tree search needs that structure"
            )
        assert space.available is not None
        self.space = space
        self.n_neighbours = neighbours
        names = list(space.stage_names)
        choices = np.asarray(space.stage_choices, dtype=int)
        varying = [
            n for i, n in enumerate(names) if len(np.unique(choices[space.available, i])) > 1
        ]
        model = next((n for n in names if n.lower() in MODEL_STAGES), names[-1])
        self.stages = decision_order(varying, model, order)
        self.choices = choices[:, [names.index(n) for n in self.stages]]
        snapper = PoolSnapper(space)  # the core's per-column scaling of the offered
        self.offered = snapper.indices
        self.claimed = np.zeros(len(space.encodings), dtype=bool)
        self.scaled = np.zeros((len(space.encodings), snapper.scaled.shape[1]))
        self.scaled[self.offered] = snapper.scaled

    def _matching(self, prefix: Structure, unclaimed: bool = False) -> np.ndarray:
        offered = self.offered
        if unclaimed:
            offered = offered[~self.claimed[offered]]
        if prefix:
            keep = (self.choices[offered, : len(prefix)] == np.asarray(prefix)).all(axis=1)
            offered = offered[keep]
        return offered

    def options(self, prefix: Structure) -> list[int]:
        matching = self._matching(prefix)
        return [int(v) for v in np.unique(self.choices[matching, len(prefix)])]

    def exhausted(self, prefix: Structure) -> bool:
        """Whether every candidate of X(prefix) has been proposed."""
        return not len(self._matching(prefix, unclaimed=True))

    def completions(
        self, prefix: Structure, n: int, rng: np.random.Generator, unclaimed: bool = False
    ) -> np.ndarray:
        matching = self._matching(prefix, unclaimed)
        if len(matching) <= n:
            return matching
        return rng.choice(matching, size=n, replace=False)

    def structures(self, items: np.ndarray) -> np.ndarray:
        return self.choices[np.asarray(items, dtype=int)]

    def default(self, prefix: Structure) -> np.ndarray | None:
        return None  # a pool has no default pipeline

    def neighbours(self, item: Any, prefix: Structure, rng: np.random.Generator) -> np.ndarray:
        matching = self._matching(prefix, unclaimed=True)
        if not len(matching):
            return matching
        distances = np.sum((self.scaled[matching] - self.scaled[int(item)]) ** 2, axis=1)
        return matching[np.argsort(distances, kind="stable")[: self.n_neighbours]]

    def refresh(self, structure: Structure, rng: np.random.Generator) -> None:
        """Nothing to refresh: a pool's candidates are all known."""

    def encode(self, items: np.ndarray) -> np.ndarray:
        return self.space.encodings[np.asarray(items, dtype=int)]

    def config(self, item: Any) -> dict[str, Any]:
        return {"candidate": int(item)}

    def item_of(self, config: Config) -> int:
        return int(self.space.validate(config)["candidate"])

    def claim(self, item: Any) -> dict[str, Any] | None:
        if self.claimed[int(item)]:
            return None
        self.claimed[int(item)] = True
        return self.config(item)

    def claim_config(self, config: Config) -> bool:
        return self.claim(self.item_of(config)) is not None


def make_decisions(
    space: VectorSpace, order: Sequence[str] | None, neighbours: int | None
) -> PipelineDecisions | PoolDecisions:
    """The decisions of ``space``: a pipeline space, or a pool with stage structure (each
    needs its own kind's structure, which the space hands over typed)."""

    def on_pipeline(pipeline: PipelineSpace) -> PipelineDecisions | PoolDecisions:
        return PipelineDecisions(pipeline, order, 4 if neighbours is None else neighbours)

    def on_pool(pool: PoolSpace) -> PipelineDecisions | PoolDecisions:
        return PoolDecisions(pool, order, 20 if neighbours is None else neighbours)

    def unsupported() -> PipelineDecisions | PoolDecisions:
        raise TypeError(
            f"mcts searches a pipeline space or a pool with stage structure, not a "
            f"{type(space).__name__}"
        )

    return by_kind(space, on_pipeline, on_pool, unsupported)


__all__ = ["Decisions", "PipelineDecisions", "PoolDecisions", "make_decisions"]
