"""The pipeline space: ordered stages (rescaling, feature preprocessor, classifier...), each
a choice among :class:`~automl_core.space.PipelineComponent` objects that carry their own
ConfigSpace sub-space, flattened to one conditional ``ConfigurationSpace`` for model-based
search and walked stage by stage by tree search.

Outside the kernel (:mod:`automl_core.space` holds the protocol it implements): it is the
one part of the spaces that needs ConfigSpace.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np
from ConfigSpace import (
    CategoricalHyperparameter,
    Configuration,
    ConfigurationSpace,
    Constant,
    ForbiddenAndConjunction,
    ForbiddenEqualsClause,
    OrdinalHyperparameter,
)
from ConfigSpace.configuration import ROUND_PLACES
from ConfigSpace.hyperparameters import FloatHyperparameter
from ConfigSpace.util import change_hp_value

from automl_core.errors import InvalidConfigurationError
from automl_core.space import (
    INACTIVE,
    NUMERIC_STEP,
    SEP,
    Assembler,
    BuildContext,
    Combination,
    ComponentBlock,
    EncodingBlocks,
    EncodingColumn,
    PipelineComponent,
    Stage,
    StageBlock,
    VectorSpace,
    config_key,
    plain_config,
)
from automl_core.trial import Config


@dataclass
class PipelineSpace:
    """A space of pipelines made of ordered stages; see the module docstring."""

    name: str
    task: str
    stages: tuple[Stage, ...]
    assemble: Assembler
    constants: Mapping[str, Any] = field(default_factory=dict)
    #: Inadmissible structures. A combination that names a component no longer in the space
    #: (after ``restrict``), or that would forbid the default configuration, is left out.
    forbidden: tuple[Combination, ...] = ()
    _configspace: ConfigurationSpace | None = field(default=None, init=False, repr=False)
    _kinds: list[tuple[str, int]] | None = field(default=None, init=False, repr=False)
    _numbers_forbidden: bool | None = field(default=None, init=False, repr=False)
    _blocks: EncodingBlocks | None = field(default=None, init=False, repr=False, compare=False)

    # -- structure ---------------------------------------------------------------------------
    @property
    def configspace(self) -> ConfigurationSpace:
        """The flattened conditional ConfigurationSpace (built once)."""
        if self._configspace is None:
            self._configspace = self._flatten()
        return self._configspace

    def _flatten(self) -> ConfigurationSpace:
        space = ConfigurationSpace()
        for name, value in self.constants.items():
            space.add(Constant(name, value))
        for stage in self.stages:
            if not stage.choice:
                sub = stage.components[0].hyperparameters()
                if len(sub):
                    space.add_configuration_space(stage.prefix, sub, delimiter=SEP)
                continue
            names = [c.name for c in stage.components]
            default = stage.default if stage.default in names else names[0]
            choice = CategoricalHyperparameter(stage.choice_name, names, default_value=default)
            space.add(choice)
            for component in stage.components:
                sub = component.hyperparameters()
                if len(sub):
                    space.add_configuration_space(
                        f"{stage.prefix}{SEP}{component.name}",
                        sub,
                        delimiter=SEP,
                        parent_hyperparameter={"parent": choice, "value": component.name},
                    )
        clauses = self._forbidden_clauses(space)
        if clauses:
            space.add(*clauses)  # at once: ConfigSpace re-checks the whole space on every add
        return space

    def _forbidden_clauses(self, space: ConfigurationSpace) -> list[ForbiddenAndConjunction]:
        return [
            ForbiddenAndConjunction(
                *(
                    ForbiddenEqualsClause(space[self.stage(stage).choice_name], component)
                    for stage, component in combination
                )
            )
            for combination in self._combinations_in_effect(space)
        ]

    def forbidden_combinations(self) -> list[Combination]:
        """The forbidden combinations the space enforces: those of ``forbidden`` whose
        components are all offered and that leave the default configuration allowed (for
        tree search, which decides one stage at a time)."""
        return self._combinations_in_effect(self.configspace)

    def _combinations_in_effect(self, space: ConfigurationSpace) -> list[Combination]:
        offered = {s.name: {c.name for c in s.components} for s in self.stages if s.choice}
        default = dict(space.get_default_configuration())
        kept = []
        for combination in self.forbidden:
            if not all(component in offered.get(stage, ()) for stage, component in combination):
                continue
            if not all(
                default.get(self.stage(stage).choice_name) == component
                for stage, component in combination
            ):
                kept.append(combination)
        return kept

    def stage(self, name: str) -> Stage:
        for stage in self.stages:
            if stage.name == name:
                return stage
        raise KeyError(name)

    def choices(self, config: Config) -> dict[str, tuple[PipelineComponent, dict[str, Any]]]:
        """Per stage: the chosen component and its parameters with relative names."""
        chosen: dict[str, tuple[PipelineComponent, dict[str, Any]]] = {}
        for stage in self.stages:
            name = config[stage.choice_name] if stage.choice else stage.components[0].name
            prefix = stage.param_prefix(name)
            params = {k[len(prefix) :]: v for k, v in config.items() if k.startswith(prefix)}
            chosen[stage.name] = (stage.component(name), params)
        return chosen

    def build(self, config: Config, context: BuildContext) -> Any:
        """The estimator a configuration describes, its iterative components shortened to
        ``context.budget`` when one is set."""
        chosen = self.choices(self.validate(config))
        if context.budget is not None:
            chosen = {
                stage: (component, _at_budget(component, params, context.budget))
                for stage, (component, params) in chosen.items()
            }
        return self.assemble(chosen, context)

    def iterative(self, config: Config) -> bool:
        """Whether a component of ``config`` declares :class:`Iterations` (a budget counted
        in iterations can shorten it)."""
        chosen = self.choices(self.validate(config))
        return any(component.iterations for component, _ in chosen.values())

    def restrict(
        self,
        include: Mapping[str, Iterable[str]] | None = None,
        exclude: Mapping[str, Iterable[str]] | None = None,
    ) -> PipelineSpace:
        """A copy keeping, per stage, only the included (or not excluded) components."""
        include = {k: set(v) for k, v in (include or {}).items()}
        exclude = {k: set(v) for k, v in (exclude or {}).items()}
        for stage_name, names in [*include.items(), *exclude.items()]:
            known = [c.name for c in self.stage(stage_name).components]  # names a bad stage
            for name in sorted(set(names) - set(known)):
                close = difflib.get_close_matches(name, known, n=1)
                hint = f"did you mean {close[0]!r}? " if close else ""
                raise ValueError(
                    f"stage {stage_name!r} has no component {name!r}: {hint}its components "
                    f"are {', '.join(known)}"
                )
        stages = []
        for stage in self.stages:
            kept = tuple(
                c
                for c in stage.components
                if (stage.name not in include or c.name in include[stage.name])
                and c.name not in exclude.get(stage.name, set())
            )
            if not kept:
                raise ValueError(f"stage {stage.name!r} would have no components left")
            stages.append(replace(stage, components=kept))
        return replace(self, stages=tuple(stages))

    # -- the VectorSpace protocol ------------------------------------------------------------
    def as_pipeline(self) -> PipelineSpace:
        return self

    def as_pool(self) -> None:
        return None

    def blocks(self) -> EncodingBlocks:
        """Per stage, in order: its ``__choice__`` column (the stage's own; it holds the
        active component's position, which is the component's position in the stage), and
        per component the columns of its hyper-parameters. The constants are shared.

        A column goes to the component whose parameter prefix is the longest that names it,
        so that a stage nested under another's prefix (auto-sklearn's
        ``data_preprocessor:feature_type:numerical_transformer:rescaling``) keeps its own.
        """
        if self._blocks is None:
            self._blocks = self._make_blocks()
        return self._blocks

    def _make_blocks(self) -> EncodingBlocks:
        choice_stage = {stage.choice_name: stage.name for stage in self.stages if stage.choice}
        prefixes = sorted(
            (
                (stage.param_prefix(component.name), stage.name, component.name)
                for stage in self.stages
                for component in stage.components
            ),
            key=lambda item: -len(item[0]),
        )
        own: dict[str, list[int]] = {stage.name: [] for stage in self.stages}
        of_component: dict[tuple[str, str], list[int]] = {}
        shared = []
        for position, name in enumerate(self._column_names()):
            if name in choice_stage:
                own[choice_stage[name]].append(position)
                continue
            owner = next((p for p in prefixes if name.startswith(p[0])), None)
            if owner is None:
                shared.append(position)
            else:
                of_component.setdefault((owner[1], owner[2]), []).append(position)
        stages = tuple(
            StageBlock(
                stage.name,
                tuple(
                    ComponentBlock(c.name, tuple(of_component.get((stage.name, c.name), ())))
                    for c in stage.components
                ),
                tuple(own[stage.name]),
            )
            for stage in self.stages
        )
        return EncodingBlocks(len(self.configspace), stages, tuple(shared))

    def active_components(self, config: Config) -> dict[str, str]:
        """Per stage, the name of the component ``config`` chooses (validated first)."""
        chosen = self.choices(self.validate(config))
        return {stage: component.name for stage, (component, _) in chosen.items()}

    def sample(self, rng: np.random.Generator, n: int) -> list[dict[str, Any]]:
        vectors = [c.get_array() for c in self._sample_configurations(rng, n)]
        return self._plain_rows(np.asarray(vectors, dtype=float).reshape(len(vectors), -1))

    def _sample_configurations(self, rng: np.random.Generator, n: int) -> list[Configuration]:
        space = self.configspace
        space.seed(int(rng.integers(2**31 - 1)))
        if n == 1:  # ConfigSpace returns a bare Configuration for size 1
            return [space.sample_configuration()]
        return list(space.sample_configuration(n))

    def default(self) -> dict[str, Any]:
        """The ConfigSpace default: each stage's default component at its own defaults
        (what auto-sklearn tries first); never None on a pipeline space."""
        return plain_config(self.configspace.get_default_configuration())

    def validate(self, config: Config) -> dict[str, Any]:
        return plain_config(self.to_configuration(config))

    def to_configuration(self, config: Config) -> Configuration:
        """The ConfigSpace ``Configuration`` (raises InvalidConfigurationError)."""
        values = {**self.constants, **config}
        try:
            return Configuration(self.configspace, values=values)
        except (ValueError, KeyError, TypeError) as error:
            raise InvalidConfigurationError(f"not in space {self.name!r}: {error}") from error

    def encode(self, configs: Sequence[Config]) -> np.ndarray:
        rows = [self.to_configuration(c).get_array() for c in configs]
        return _vectors(rows, len(self.configspace))

    def key(self, config: Config) -> str:
        return config_key(config)

    def neighbours(self, config: Config, rng: np.random.Generator, n: int = 4) -> list[dict]:
        """Configurations one decision away (for local search): :meth:`neighbour_vectors`,
        decoded."""
        rows = self.neighbour_vectors(self.encode([config])[0], rng, n)
        return [self.decode(row) for row in rows]

    # -- vectors, for model-based search -----------------------------------------------------
    # Acquisition optimisers score thousands of candidates; turning each into a dict costs
    # ~1 ms on the auto-sklearn space, so they work on the encoded rows and decode only the
    # one they choose.
    def columns(self) -> list[EncodingColumn]:
        """What each column of :meth:`encode` holds."""
        space = self.configspace
        columns = []
        for name in self._column_names():
            hyperparameter = space[name]
            if isinstance(hyperparameter, CategoricalHyperparameter):
                categories = len(hyperparameter.choices)
            elif isinstance(hyperparameter, OrdinalHyperparameter):
                categories = len(hyperparameter.sequence)
            else:  # numbers; a Constant is a number too (ConfigSpace encodes it as 1.0)
                categories = 0
            columns.append(EncodingColumn(name, categories, bool(space.parents_of[name])))
        return columns

    def _column_names(self) -> list[str]:
        index = self.configspace.index_of
        return sorted(index, key=index.__getitem__)

    def sample_vectors(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` random configurations, encoded (as :meth:`encode` would)."""
        rows = [c.get_array() for c in self._sample_configurations(rng, n)]
        return _vectors(rows, len(self.configspace))

    def neighbour_vectors(
        self, vector: np.ndarray, rng: np.random.Generator, n: int = 4
    ) -> np.ndarray:
        """Encoded configurations one decision away from the encoded ``vector``: every other
        value of each active categorical (children switched on at their defaults, or off, as
        the conditions say), and ``n`` Gaussian steps (sd 0.2 of the range, as SMAC) of each
        active number. Forbidden combinations are left out.

        Built on the encoded row itself: ConfigSpace's one-exchange neighbourhood makes a
        ``Configuration`` per neighbour, which costs more than the model that scores them.
        """
        space = self.configspace
        base = _configspace_vector(vector)
        changed_choice: list[np.ndarray] = []
        changed_number: list[np.ndarray] = []
        for index, (name, categories) in enumerate(self._column_kinds()):
            if not np.isfinite(base[index]) or categories == 1:
                continue  # inactive, or nothing to change
            if categories:
                for value in range(categories):
                    if value != base[index]:
                        row = change_hp_value(space, base.copy(), name, value, index)
                        changed_choice.append(row)
                continue
            for step in rng.normal(0.0, NUMERIC_STEP, n):
                row = base.copy()
                row[index] = min(1.0, max(0.0, base[index] + step))
                changed_number.append(row)
        # Forbidden clauses name categorical values here; a step of a number can only break
        # one in a space whose clauses name numbers.
        check_numbers = self._forbids_numbers()
        rows = _allowed(space, changed_choice)
        rows += _allowed(space, changed_number) if check_numbers else changed_number
        return _vectors(rows, len(space))

    def _forbids_numbers(self) -> bool:
        """Whether a forbidden clause of the space names a numeric hyper-parameter."""
        if self._numbers_forbidden is None:
            numeric = {name for name, categories in self._column_kinds() if categories == 0}
            named = set().union(*map(_clause_names, self.configspace.forbidden_clauses))
            self._numbers_forbidden = bool(numeric & named)
        return self._numbers_forbidden

    def _column_kinds(self) -> list[tuple[str, int]]:
        """(name, number of categories; 0 for a number, 1 for a constant) per column."""
        if self._kinds is None:
            kinds = []
            for column in self.columns():
                constant = isinstance(self.configspace[column.name], Constant)
                kinds.append((column.name, 1 if constant else column.categories))
            self._kinds = kinds
        return self._kinds

    def decode(self, vector: np.ndarray) -> dict[str, Any]:
        """The configuration an encoded row stands for (inverse of :meth:`encode`)."""
        return self._plain_rows(_configspace_vector(vector)[None, :])[0]

    def _plain_rows(self, vectors: np.ndarray) -> list[dict[str, Any]]:
        """ConfigSpace vectors (NaN inactive) as plain configurations, one hyper-parameter
        column at a time: equal to :func:`plain_config` of each row's ``Configuration``
        (same values, rounding and key order), without its per-value path, which costs
        ~0.9 ms per configuration on auto-sklearn's space: more than the rest of a trial of
        random search. The vectors must be valid (sampled, or encoded from a valid one)."""
        rows: list[dict[str, Any]] = [{} for _ in range(len(vectors))]
        for index, hyperparameter in enumerate(self.configspace.values()):
            column = vectors[:, index]
            active = np.flatnonzero(np.isfinite(column))
            if not active.size:
                continue
            values = np.asarray(hyperparameter.to_value(column[active]))
            if isinstance(hyperparameter, FloatHyperparameter):
                values = np.round(values.astype(float), ROUND_PLACES)
            name = hyperparameter.name
            for row, value in zip(active.tolist(), values.tolist(), strict=True):
                rows[row][name] = value
        return rows


def _at_budget(component: PipelineComponent, params: dict[str, Any], budget: float) -> dict:
    """``params`` with the component's iteration count cut to ``budget``, if it has one."""
    if component.iterations is None:
        return params
    name, declared = component.iterations.parameter, component.iterations
    full = int(params.get(name, declared.max))
    return {**params, name: declared.at_budget(budget, full)}


def _vectors(rows: Sequence[np.ndarray], width: int) -> np.ndarray:
    """ConfigSpace vectors as an encoded matrix: NaN (inactive) becomes ``INACTIVE``."""
    if not rows:
        return np.empty((0, width))
    matrix = np.asarray(rows, dtype=float)
    matrix[~np.isfinite(matrix)] = INACTIVE
    return matrix


def _clause_names(clause: Any) -> set[str]:
    """The hyper-parameters a ConfigSpace forbidden clause (or conjunction) names."""
    if hasattr(clause, "components"):
        return set().union(*map(_clause_names, clause.components))
    sides = [getattr(clause, key, None) for key in ("hyperparameter", "left", "right")]
    return {side.name for side in sides if side is not None}


def _allowed(space: ConfigurationSpace, rows: list[np.ndarray]) -> list[np.ndarray]:
    """The ConfigSpace vectors of ``rows`` that no forbidden clause forbids, each clause
    checked on all of them at once (row by row, the checks cost more than the search)."""
    if not rows or not space.forbidden_clauses:
        return rows
    matrix = np.vstack(rows).T  # ConfigSpace checks one configuration per column
    forbidden = np.zeros(len(rows), dtype=bool)
    for clause in space.forbidden_clauses:
        forbidden |= clause.is_forbidden_vector_array(matrix)
    return [row for row, no in zip(rows, forbidden, strict=True) if not no]


def _configspace_vector(vector: np.ndarray) -> np.ndarray:
    values = np.array(vector, dtype=np.float64)
    values[values == INACTIVE] = np.nan
    return values


if TYPE_CHECKING:  # mypy proves here that the kind implements the whole protocol
    _PROTOCOL: type[VectorSpace] = PipelineSpace
