"""Search spaces: what a strategy searches over.

Two kinds implement the :class:`VectorSpace` protocol (encoded rows, neighbours, a default,
per-component blocks; :class:`SearchSpace` is its minimal part, enough for random search),
so that one strategy works on both:

* :class:`PipelineSpace` -- ordered *stages* (rescaling, feature preprocessor, classifier...),
  each a choice among :class:`PipelineComponent` objects that carry their own ConfigSpace
  sub-space. It flattens to one conditional ``ConfigurationSpace`` for model-based search and
  is walked stage by stage by tree search.
* :class:`PoolSpace` -- a finite set of candidates with vector encodings (the pipelines of a
  meta-dataset). A configuration is ``{"candidate": index}``.

Code outside this module never asks ``hasattr(space, ...)`` or ``isinstance(space,
PipelineSpace)``: it takes the typed protocol once (:func:`vector_space`,
:func:`require_vector_space`, :func:`pipeline_space`) and reaches a kind's own structure
through :meth:`VectorSpace.as_pipeline` / :meth:`VectorSpace.as_pool`.

Hyper-parameter names follow auto-sklearn's convention: ``<stage prefix>:__choice__`` names
the component chosen in a stage and ``<stage prefix>:<component>:<name>`` its parameters.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, runtime_checkable

import numpy as np
import numpy.typing as npt
from ConfigSpace import (
    CategoricalHyperparameter,
    Configuration,
    ConfigurationSpace,
    Constant,
    ForbiddenAndConjunction,
    ForbiddenEqualsClause,
    OrdinalHyperparameter,
)
from ConfigSpace.util import change_hp_value

from automl_core.errors import InvalidConfigurationError
from automl_core.trial import Config

CHOICE = "__choice__"
SEP = ":"
#: The value an inactive hyper-parameter takes in :meth:`SearchSpace.encode` (active values
#: are scaled to [0, 1]); SMAC uses the same convention.
INACTIVE = -1.0
#: The standard deviation of a local-search step of a number, as a fraction of its range.
NUMERIC_STEP = 0.2


@runtime_checkable
class SearchSpace(Protocol):
    """What every strategy may rely on, whatever the space's kind: enough for random search.

    A space that offers only this (a test double, a space of another library) can still be
    searched at random; the strategies that need encoded rows, neighbours or structure ask for
    a :class:`VectorSpace` (:func:`vector_space`).
    """

    def sample(self, rng: np.random.Generator, n: int) -> list[dict[str, Any]]:
        """``n`` configurations drawn at random (uniformly over the space's prior)."""
        ...

    def validate(self, config: Config) -> dict[str, Any]:
        """The configuration in canonical form; raises InvalidConfigurationError if not a member."""
        ...

    def encode(self, configs: Sequence[Config]) -> np.ndarray:
        """A numeric matrix, one row per configuration, for surrogates."""
        ...

    def key(self, config: Config) -> str:
        """A canonical string identifying the configuration (for de-duplication)."""
        ...


@runtime_checkable
class VectorSpace(SearchSpace, Protocol):
    """A space of encoded rows, typed whole: what model-based, local, evolutionary and tree
    search rely on. :class:`PipelineSpace` and :class:`PoolSpace` implement all of it.

    Strategies and adapters program against this protocol, never against ``hasattr`` or a
    concrete class: where they need what only one kind has (a pipeline space's conditional
    ConfigurationSpace, a pool's candidate table), :meth:`as_pipeline` and :meth:`as_pool`
    hand it over, typed, and are None for every other kind. A third-party space that
    implements the protocol answers None to both and gets every strategy's generic path.
    """

    #: What the space is called (in messages, run metadata, meta-data references).
    name: str

    def columns(self) -> list[EncodingColumn]:
        """What each column of :meth:`encode` holds (categories, conditional or not)."""
        ...

    def decode(self, vector: np.ndarray) -> dict[str, Any]:
        """The configuration an encoded row stands for (the inverse of :meth:`encode`)."""
        ...

    def sample_vectors(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` random configurations, encoded: acquisition optimisers score thousands of
        rows and decode only the one they pick."""
        ...

    def neighbours(
        self, config: Config, rng: np.random.Generator, n: int = 4
    ) -> list[dict[str, Any]]:
        """Configurations one small step from ``config`` (for local search and mutation)."""
        ...

    def neighbour_vectors(
        self, vector: np.ndarray, rng: np.random.Generator, n: int = 4
    ) -> np.ndarray:
        """Encoded rows one small step from the encoded ``vector``, without decoding."""
        ...

    def default(self) -> dict[str, Any] | None:
        """The configuration to try first when a strategy wants one, or None when the space
        has no meaningful default (a pool: see :meth:`PoolSpace.default`)."""
        ...

    def restrict(
        self,
        include: Mapping[str, Iterable[str]] | None = None,
        exclude: Mapping[str, Iterable[str]] | None = None,
    ) -> VectorSpace:
        """A copy keeping, per stage (``{stage: [component names]}``), only the included (or
        not excluded) components; stages and components are those of :meth:`blocks`."""
        ...

    def blocks(self) -> EncodingBlocks:
        """Which encoding columns belong to which stage and which component."""
        ...

    def active_components(self, config: Config) -> dict[str, str]:
        """Per stage of :meth:`blocks` (in order), the component ``config`` chooses."""
        ...

    def as_pipeline(self) -> PipelineSpace | None:
        """This space as a :class:`PipelineSpace` (stages, ConfigurationSpace, build), or None."""
        ...

    def as_pool(self) -> PoolSpace | None:
        """This space as a :class:`PoolSpace` (a finite table of candidates), or None."""
        ...


#: The members of :class:`VectorSpace`, those a model-based optimiser needs first leading (a
#: refusal names what a space lacks in this order).
VECTOR_MEMBERS = (
    "columns",
    "sample_vectors",
    "neighbour_vectors",
    "decode",
    "encode",
    "neighbours",
    "default",
    "sample",
    "validate",
    "key",
    "restrict",
    "blocks",
    "active_components",
    "as_pipeline",
    "as_pool",
    "name",
)


def vector_space(space: object) -> VectorSpace | None:
    """``space`` typed as a :class:`VectorSpace` when it implements the protocol, else None.

    The one structural check of the project: code outside this module asks here (or
    :func:`require_vector_space`) once, at set-up, and from then on calls typed methods.
    """
    return space if isinstance(space, VectorSpace) else None


def pipeline_space(space: object) -> PipelineSpace | None:
    """``space`` as a :class:`PipelineSpace` (:meth:`VectorSpace.as_pipeline`), or None: for
    callers that need what only a pipeline space has (``build``, ``task``), such as the run
    of a dataset task, given whatever a space factory returned."""
    typed = vector_space(space)
    return typed.as_pipeline() if typed is not None else None


Built = TypeVar("Built")


def by_kind(
    space: object,
    pipeline: Callable[[PipelineSpace], Built],
    pool: Callable[[PoolSpace], Built],
    otherwise: Callable[[], Built],
) -> Built:
    """``pipeline(space)`` for a pipeline space, ``pool(space)`` for a pool, ``otherwise()``
    for anything else (raise there, or fall back): the one dispatch on a space's kind, for the
    components that build a kind's own structure (an adapter to another library's space,
    MCTS's decisions, evolution's operators)."""
    typed = vector_space(space)
    as_pipeline = typed.as_pipeline() if typed is not None else None
    if as_pipeline is not None:
        return pipeline(as_pipeline)
    as_pool = typed.as_pool() if typed is not None else None
    if as_pool is not None:
        return pool(as_pool)
    return otherwise()


def require_vector_space(space: object, who: str) -> VectorSpace:
    """``space`` as a :class:`VectorSpace`; a TypeError naming ``who`` (the strategy) and the
    members the space lacks when it does not implement the protocol."""
    typed = vector_space(space)
    if typed is not None:
        return typed
    missing = [member for member in VECTOR_MEMBERS if not hasattr(space, member)]
    raise TypeError(
        f"{who} searches a space of encoded rows (automl_core.space.VectorSpace, such as a "
        f"PipelineSpace or a PoolSpace); {type(space).__name__} lacks {', '.join(missing)}"
    )


@dataclass(frozen=True)
class EncodingColumn:
    """What one column of ``SearchSpace.encode`` holds, for surrogates that care.

    ``categories`` > 0: a categorical hyper-parameter whose values are the indices
    ``0..categories-1`` (a one-hot encoding may expand it); 0: a number, scaled to [0, 1]
    for a pipeline space. ``conditional``: the column may hold ``INACTIVE`` (-1) when the
    hyper-parameter does not apply to a configuration.
    """

    name: str
    categories: int = 0
    conditional: bool = False


# -- per-component blocks ---------------------------------------------------------------------
# A per-component surrogate (DeepPipe: one encoder per component, their outputs concatenated
# per stage) needs to know which columns of ``encode`` each component's encoder reads, and
# which component is active in each configuration. :meth:`VectorSpace.blocks` says the first,
# :meth:`VectorSpace.active_components` (and :meth:`EncodingBlocks.selector`) the second.


@dataclass(frozen=True)
class ComponentBlock:
    """One component of a stage and the encoding columns that hold its own values (its
    hyper-parameters): what the component's encoder reads when the component is active."""

    name: str
    columns: tuple[int, ...] = ()


@dataclass(frozen=True)
class StageBlock:
    """One stage: its components, in order, and the stage's own columns.

    The stage's own ``columns`` are read whichever component is active (a pipeline stage's
    ``__choice__`` column, which holds the active component's position). Components of one
    stage may share columns (in some meta-datasets two algorithms share one encoding block);
    a column never belongs both to the stage and to one of its components.
    """

    name: str
    components: tuple[ComponentBlock, ...]
    columns: tuple[int, ...] = ()

    @property
    def names(self) -> tuple[str, ...]:
        """The components' names, in order."""
        return tuple(component.name for component in self.components)

    def position(self, component: str) -> int:
        """The position of ``component`` among the stage's components (KeyError if absent)."""
        try:
            return self.names.index(component)
        except ValueError:
            raise KeyError(f"stage {self.name!r} has no component {component!r}") from None

    def component(self, name: str) -> ComponentBlock:
        """The block of the component called ``name`` (KeyError if absent)."""
        return self.components[self.position(name)]

    def all_columns(self) -> tuple[int, ...]:
        """Every column of the stage: its own, then its components', sorted, once each."""
        found = set(self.columns).union(*(c.columns for c in self.components))
        return tuple(sorted(found))


@dataclass(frozen=True)
class EncodingBlocks:
    """Which of a space's ``width`` encoding columns belong to which stage and component.

    Every column lies in exactly one place: one stage (its own columns, or one or more of
    its components') or ``shared`` (columns of no stage, e.g. a pipeline space's constants,
    or a pool's columns that no single component explains). Checked on construction, so a
    consumer can build one encoder per component and one for the shared columns and know
    that together they read the whole row.
    """

    width: int
    stages: tuple[StageBlock, ...]
    shared: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        names = [stage.name for stage in self.stages]
        if len(set(names)) != len(names):
            raise ValueError(f"blocks: stage names repeat: {names}")
        placed = list(self.shared)
        for stage in self.stages:
            components = stage.names
            if not components:
                raise ValueError(f"blocks: stage {stage.name!r} has no components")
            if len(set(components)) != len(components):
                raise ValueError(f"blocks: stage {stage.name!r} repeats a component name")
            own = set(stage.columns)
            for component in stage.components:
                if own & set(component.columns):
                    raise ValueError(
                        f"blocks: columns {sorted(own & set(component.columns))} belong both "
                        f"to stage {stage.name!r} and to its component {component.name!r}"
                    )
            placed += stage.all_columns()
        if sorted(placed) != list(range(self.width)):
            twice = sorted({c for c in placed if placed.count(c) > 1})
            outside = sorted(c for c in set(placed) if not 0 <= c < self.width)
            unplaced = sorted(set(range(self.width)) - set(placed))
            raise ValueError(
                f"blocks: each of the {self.width} columns must lie in exactly one stage or in "
                f"shared; in several: {twice}, out of range: {outside}, in none: {unplaced}"
            )

    def stage(self, name: str) -> StageBlock:
        """The stage called ``name`` (KeyError if absent)."""
        for stage in self.stages:
            if stage.name == name:
                return stage
        raise KeyError(name)

    def selector(self, active: Sequence[Mapping[str, str]]) -> np.ndarray:
        """Per configuration (its :meth:`VectorSpace.active_components`) and stage, the
        position of the active component in the stage: an int matrix of ``len(active)`` rows
        and one column per stage (DeepPipe's ``list_for_selector``)."""
        matrix = np.zeros((len(active), len(self.stages)), dtype=np.int64)
        for row, chosen in enumerate(active):
            for column, stage in enumerate(self.stages):
                matrix[row, column] = stage.position(chosen[stage.name])
        return matrix


# -- checks of a surrogate's inputs ---------------------------------------------------------------
# For any surrogate (the plugins' and third parties'): the checks of what ``prepare``, ``fit``
# and ``predict`` receive. ``where`` (e.g. "fit", "gp surrogate") starts each error message.


def check_columns(columns: Iterable[EncodingColumn], where: str = "") -> tuple[EncodingColumn, ...]:
    """The column descriptions a surrogate's ``prepare`` receives (a space's ``columns()``),
    as a tuple, checked.

    Raises TypeError for an item that is not an :class:`EncodingColumn`, and ValueError for
    a negative number of categories.
    """
    prefix = f"{where}: " if where else ""
    checked = tuple(columns)
    for position, column in enumerate(checked):
        if not isinstance(column, EncodingColumn):
            raise TypeError(
                f"{prefix}column {position} is a {type(column).__name__}, "
                "expected an automl_core.space.EncodingColumn"
            )
        if column.categories < 0:
            raise ValueError(
                f"{prefix}column {position} ({column.name!r}) has {column.categories} "
                "categories; expected 0 (a number) or more"
            )
    return checked


def check_encoded(
    X: npt.ArrayLike, columns: Sequence[EncodingColumn] | None = None, where: str = ""
) -> np.ndarray:
    """Encoded configurations (the rows of :meth:`SearchSpace.encode`) as a float64 matrix,
    checked; a ValueError names the first offending cell.

    Always: ``X`` is numeric, 2-d with at least one column (any number of rows, also none),
    and finite (an inactive value is ``INACTIVE``, not NaN). With ``columns`` (as checked by
    :func:`check_columns`): one column of ``X`` per description, and every categorical
    column (``categories`` k > 0) holds indices ``0..k-1``, or ``INACTIVE`` where it is
    conditional. Numeric columns are not range-checked (a pool's encodings may lie outside
    [0, 1]). ``X`` itself is returned when it already is a float64 array.
    """
    prefix = f"{where}: " if where else ""
    try:
        matrix = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{prefix}X must be a numeric matrix ({error})") from None
    if matrix.ndim != 2:
        raise ValueError(
            f"{prefix}X must be 2-d (rows x columns), got shape {matrix.shape}; give a single "
            "configuration as a 2-d matrix of one row"
        )
    if matrix.shape[1] == 0:
        raise ValueError(f"{prefix}X has no columns")
    finite = np.isfinite(matrix)
    if not finite.all():
        row, column = (int(i) for i in np.argwhere(~finite)[0])
        raise ValueError(
            f"{prefix}X must be finite, but X[{row}, {column}] holds a non-finite value "
            f"({float(matrix[row, column])!r}); inactive hyper-parameters are encoded as "
            f"{INACTIVE}"
        )
    if columns is None:
        return matrix
    if matrix.shape[1] != len(columns):
        raise ValueError(
            f"{prefix}X has {matrix.shape[1]} columns, but prepare() described {len(columns)}"
        )
    positions = [i for i, column in enumerate(columns) if column.categories > 0]
    if not positions:
        return matrix
    categories = np.array([columns[i].categories for i in positions])
    conditional = np.array([columns[i].conditional for i in positions])
    values = matrix[:, positions]
    valid = (values == np.round(values)) & (values >= 0) & (values < categories)
    valid |= (values == INACTIVE) & conditional
    if not valid.all():
        # The first column with a bad value (in the order of the columns), then its first row.
        block_column, row = (int(i) for i in np.argwhere(~valid.T)[0])
        position = positions[block_column]
        described = columns[position]
        allowed = f"0..{described.categories - 1}" + (" or -1" if described.conditional else "")
        raise ValueError(
            f"{prefix}column {position} ({described.name!r}) is categorical with "
            f"{described.categories} categories; row {row} holds "
            f"{float(matrix[row, position])!r} (expected an index {allowed})"
        )
    return matrix


def check_losses(y: npt.ArrayLike, rows: int, where: str = "") -> np.ndarray:
    """Losses, one per row of ``X`` (``rows`` of them), as a finite float64 vector; a
    ValueError says what is wrong (for a non-finite loss, the first one)."""
    prefix = f"{where}: " if where else ""
    try:
        losses = np.asarray(y, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{prefix}y must be a numeric vector ({error})") from None
    if losses.ndim != 1:
        raise ValueError(f"{prefix}y must be 1-d (one loss per row of X), got shape {losses.shape}")
    if len(losses) != rows:
        raise ValueError(
            f"{prefix}X has {rows} rows but y has {len(losses)} losses (one loss per row)"
        )
    bad = np.flatnonzero(~np.isfinite(losses))
    if bad.size:
        raise ValueError(
            f"{prefix}y must be finite, but y[{int(bad[0])}] is {float(losses[bad[0]])!r}, a "
            f"non-finite loss ({bad.size} in all); give failed trials a large finite loss "
            "instead (e.g. the worst observed)"
        )
    return losses


def plain_config(config: Config) -> dict[str, Any]:
    """A configuration with plain Python values (ConfigSpace hands out numpy scalars), so that
    it serialises to JSON and compares equal to the same configuration read back."""
    return {
        name: value.item() if isinstance(value, np.generic) else value
        for name, value in config.items()
    }


def config_key(config: Config) -> str:
    """Canonical JSON of a configuration: equal configurations give equal keys."""
    return json.dumps(dict(config), sort_keys=True, default=str)


@dataclass(frozen=True)
class BuildContext:
    """What a component may need to know when it builds its estimator.

    ``budget`` is the trial's fidelity as a fraction of the full training length (0 < budget
    <= 1), for trials of a multi-fidelity search whose budget counts iterations; ``None``
    means full length. Components do not read it: :meth:`PipelineSpace.build` applies it to
    the components that declare :class:`Iterations`.
    """

    task: str
    seed: int = 0
    budget: float | None = None


@dataclass(frozen=True)
class Iterations:
    """How an iterative component (a forest, boosting, an MLP, SGD) is trained for less.

    ``parameter`` is the key of the component's parameters that its ``build`` reads for the
    number of iterations (trees, boosting rounds, epochs): a hyper-parameter of the component,
    or one it reads with a default of ``max``. At a budget ``b`` (a fraction of full fidelity)
    the component gets ``b`` times its full count, never fewer than ``min``: auto-sklearn 2.0
    trains trees 32 -> 512 and linear models 64 -> 1024 iterations this way.
    """

    parameter: str
    min: int
    max: int

    def at_budget(self, budget: float, full: int) -> int:
        """The iteration count at ``budget``, between ``min`` and ``full``."""
        return int(min(full, max(self.min, round(budget * full))))


@dataclass(frozen=True)
class PipelineComponent:
    """One pipeline step: a named estimator or transformer with its hyper-parameter space.

    ``hyperparameters`` returns a fresh ``ConfigurationSpace`` whose names are relative to the
    component (``max_features``, not ``classifier:random_forest:max_features``). ``build``
    turns those values into a scikit-learn-compatible object. ``stage`` names the stage the
    component belongs to; ``tasks`` the tasks it supports.
    """

    name: str
    stage: str
    build: Callable[[dict[str, Any], BuildContext], Any]
    hyperparameters: Callable[[], ConfigurationSpace] = ConfigurationSpace
    tasks: frozenset[str] = frozenset({"classification", "regression"})
    description: str = ""
    #: Set for components whose training length a multi-fidelity budget can shorten.
    iterations: Iterations | None = None


@dataclass(frozen=True)
class Stage:
    """A decision in a pipeline: which component, and with which hyper-parameters.

    ``prefix`` is the hyper-parameter name prefix (``name`` by default), so that a stage can
    keep auto-sklearn's nested names. A stage with a single component and ``choice=False`` has
    no ``__choice__`` hyper-parameter: its parameters are named ``<prefix>:<name>``.
    """

    name: str
    components: tuple[PipelineComponent, ...]
    prefix: str = ""
    choice: bool = True
    default: str | None = None

    def __post_init__(self) -> None:
        if not self.prefix:
            object.__setattr__(self, "prefix", self.name)
        if not self.components:
            raise ValueError(f"stage {self.name!r} has no components")
        if not self.choice and len(self.components) != 1:
            raise ValueError(f"stage {self.name!r}: choice=False needs exactly one component")

    @property
    def choice_name(self) -> str:
        return f"{self.prefix}{SEP}{CHOICE}"

    def component(self, name: str) -> PipelineComponent:
        for component in self.components:
            if component.name == name:
                return component
        raise KeyError(name)

    def param_prefix(self, component: str) -> str:
        return f"{self.prefix}{SEP}{component}{SEP}" if self.choice else f"{self.prefix}{SEP}"


#: ``assemble(choices, context)`` receives, per stage name, the chosen component and its
#: parameters (relative names) and returns the whole estimator (e.g. a sklearn Pipeline).
Assembler = Callable[[dict[str, tuple[PipelineComponent, dict[str, Any]]], BuildContext], Any]

#: Components of different stages that may not be chosen together, as (stage, component) pairs.
Combination = tuple[tuple[str, str], ...]


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
        for stage_name in [*include, *exclude]:
            self.stage(stage_name)  # KeyError names an unknown stage
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
        return [plain_config(c) for c in self._sample_configurations(rng, n)]

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
        rows = [r for r in changed_choice if not _is_forbidden(space, r)]
        rows += [r for r in changed_number if not (check_numbers and _is_forbidden(space, r))]
        return _vectors(rows, len(space))

    def _forbids_numbers(self) -> bool:
        """Whether a forbidden clause of the space names a numeric hyper-parameter."""
        numeric = {name for name, categories in self._column_kinds() if categories == 0}
        named = set().union(*map(_clause_names, self.configspace.forbidden_clauses))
        return bool(numeric & named)

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
        configuration = Configuration(self.configspace, vector=_configspace_vector(vector))
        return plain_config(configuration)


@dataclass
class PoolSpace:
    """A finite pool of candidates; a configuration is ``{"candidate": index}``.

    ``encodings`` has one row per candidate. ``stage_choices`` (optional, one column per stage
    in ``stage_names``) gives the component chosen in each stage, for tree search and for
    :meth:`blocks`. ``available`` masks out candidates that may not be offered (e.g. never run
    on the dataset). ``descriptions`` (optional) says what each candidate is, e.g. its
    algorithm and hyper-parameters, for people and for surrogates that read pipelines.

    The :class:`VectorSpace` protocol on a pool: distances (neighbours, decoding a row that is
    no candidate's) are Euclidean on the encodings scaled to [0, 1] per column over the
    offered candidates (as :class:`~automl_core.snapping.PoolSnapper` scales them), so that a
    wide column does not dominate; ties go to the lower candidate index. A pool has no
    default (:meth:`default` is None).
    """

    name: str
    encodings: np.ndarray
    stage_names: tuple[str, ...] = ()
    stage_choices: np.ndarray | None = None
    available: np.ndarray | None = None
    descriptions: list[dict[str, Any]] | None = None
    #: (what the blocks were derived from, the blocks): derived once, again if a field changes
    _blocks: tuple[tuple[Any, ...], EncodingBlocks] | None = field(
        default=None, init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        self.encodings = np.asarray(self.encodings, dtype=float)
        if self.available is None:
            self.available = np.ones(len(self.encodings), dtype=bool)

    @property
    def size(self) -> int:
        assert self.available is not None
        return int(np.count_nonzero(self.available))

    def candidates(self) -> list[dict[str, Any]]:
        assert self.available is not None
        return [{"candidate": int(i)} for i in np.flatnonzero(self.available)]

    def sample(self, rng: np.random.Generator, n: int) -> list[dict[str, Any]]:
        assert self.available is not None
        pool = np.flatnonzero(self.available)
        chosen = rng.choice(pool, size=min(n, len(pool)), replace=False)
        return [{"candidate": int(i)} for i in chosen]

    def validate(self, config: Config) -> dict[str, Any]:
        assert self.available is not None
        index = config.get("candidate") if isinstance(config, Mapping) else None
        if not isinstance(index, (int, np.integer)) or not 0 <= index < len(self.encodings):
            raise InvalidConfigurationError(
                f"pool {self.name!r}: expected {{'candidate': 0..{len(self.encodings) - 1}}}, "
                f"got {config!r}"
            )
        if not self.available[index]:
            raise InvalidConfigurationError(f"pool {self.name!r}: candidate {index} not offered")
        return {"candidate": int(index)}

    def encode(self, configs: Sequence[Config]) -> np.ndarray:
        indices = [self.validate(c)["candidate"] for c in configs]
        return self.encodings[indices]

    def key(self, config: Config) -> str:
        return config_key(config)

    def columns(self) -> list[EncodingColumn]:
        """Every column of a pool's encoding is a number; one that holds ``INACTIVE`` for some
        candidates is conditional."""
        inactive = (self.encodings == INACTIVE).any(axis=0)
        return [EncodingColumn(f"x{i}", conditional=bool(flag)) for i, flag in enumerate(inactive)]

    def restrict(
        self,
        include: Mapping[str, Iterable[str]] | None = None,
        exclude: Mapping[str, Iterable[str]] | None = None,
        *,
        available: npt.ArrayLike | None = None,
    ) -> PoolSpace:
        """The same pool offering fewer candidates: those offered here, of ``available``
        (a mask over all candidates) when given, and whose active component in each stage of
        :meth:`blocks` is included (or not excluded). A KeyError names an unknown stage; a
        ValueError says when ``include``/``exclude`` leave no candidate."""
        assert self.available is not None
        mask = self.available.copy()
        if available is not None:
            mask &= np.asarray(available, dtype=bool)
        if include or exclude:
            blocks, choices = self.blocks(), self._choice_matrix()
            included = {k: set(v) for k, v in (include or {}).items()}
            excluded = {k: set(v) for k, v in (exclude or {}).items()}
            for stage_name in [*included, *excluded]:
                blocks.stage(stage_name)  # KeyError names an unknown stage
            for position, stage in enumerate(blocks.stages):
                keep = np.array(
                    [
                        (stage.name not in included or name in included[stage.name])
                        and name not in excluded.get(stage.name, set())
                        for name in stage.names
                    ]
                )
                mask &= keep[choices[:, position]]
            if not mask.any():
                raise ValueError(f"pool {self.name!r} would have no candidates left")
        restricted = replace(self, available=mask)
        restricted._blocks = self._blocks  # blocks describe every candidate, offered or not
        return restricted

    def describe(self, config: Config) -> dict[str, Any]:
        """What candidate ``config`` is: its description, or its index when there is none."""
        index = self.validate(config)["candidate"]
        if self.descriptions is None:
            return {"candidate": index}
        return dict(self.descriptions[index])

    # -- the rest of the VectorSpace protocol --------------------------------------------------
    def as_pipeline(self) -> None:
        return None

    def as_pool(self) -> PoolSpace:
        return self

    def default(self) -> None:
        """None: a pool has no prior default. Any one candidate (the first, a medoid) would be
        an arbitrary choice that strategies would then try first on every dataset; they start
        from the warm start or at random instead."""
        return None

    def sample_vectors(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """The encodings of :meth:`sample`'s candidates (the same random draws)."""
        return self.encode(self.sample(rng, n))

    def decode(self, vector: np.ndarray) -> dict[str, Any]:
        """The offered candidate whose encoding is ``vector``, else the nearest one (a row of
        a continuous optimiser snaps to a candidate). Candidates with equal encodings are
        not told apart: the lowest index is returned."""
        indices, scaled, low, span = self._scaled()
        target = (np.asarray(vector, dtype=float) - low) / span
        distances = np.sum((scaled - target) ** 2, axis=1)
        return {"candidate": int(indices[int(np.argmin(distances))])}

    def neighbours(
        self, config: Config, rng: np.random.Generator, n: int = 4
    ) -> list[dict[str, Any]]:
        """The ``n`` offered candidates nearest to ``config``'s, nearest first: a pool's
        stand-in for "one value changed", since its candidates are not one change apart.
        ``rng`` is not used (the answer is deterministic)."""
        index = self.validate(config)["candidate"]
        indices, scaled, _, _ = self._scaled()
        others = indices != index
        order = self._nearest(scaled[others], scaled[indices == index][0])
        return [{"candidate": int(i)} for i in indices[others][order[:n]]]

    def neighbour_vectors(
        self, vector: np.ndarray, rng: np.random.Generator, n: int = 4
    ) -> np.ndarray:
        """The encodings of the ``n`` offered candidates nearest to ``vector`` whose encoding
        differs from it, nearest first, each encoding once. ``rng`` is not used."""
        indices, scaled, low, span = self._scaled()
        vector = np.asarray(vector, dtype=float)
        rows = self.encodings[indices]
        differs = (rows != vector).any(axis=1)
        order = self._nearest(scaled[differs], (vector - low) / span)
        ordered = rows[differs][order]
        _, first = np.unique(ordered, axis=0, return_index=True)
        return ordered[np.sort(first)[:n]]

    @staticmethod
    def _nearest(points: np.ndarray, target: np.ndarray) -> np.ndarray:
        """Positions of ``points`` by increasing distance to ``target``, ties in order."""
        return np.argsort(np.sum((points - target) ** 2, axis=1), kind="stable")

    def _scaled(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The offered candidates' indices, their encodings scaled to [0, 1] per column, and
        the scaling (low, span; span 1 for a constant column)."""
        assert self.available is not None
        indices = np.flatnonzero(self.available)
        if not len(indices):
            raise ValueError(f"pool {self.name!r} offers no candidate")
        rows = self.encodings[indices]
        if not np.all(np.isfinite(rows)):
            raise ValueError(f"pool {self.name!r}: encodings of offered candidates must be finite")
        low = rows.min(axis=0)
        span = rows.max(axis=0) - low
        span = np.where(span > 0, span, 1.0)
        return indices, (rows - low) / span, low, span

    # -- blocks ------------------------------------------------------------------------------
    def blocks(self) -> EncodingBlocks:
        """The stages and components of the pool and the columns of each, derived from what
        the candidates hold (over every candidate, offered or not, so that restricting a pool
        keeps its blocks).

        * Without stage structure (``stage_names``, ``stage_choices``): one stage called
          ``candidate`` with one component named after the pool, owning every column. A
          pool says nothing of its candidates' parts, so one encoder reads the whole row.
        * With it: the stages of ``stage_names``; stage ``s`` has a component per choice
          index ``0..max(stage_choices[:, s])``, named by the candidates' descriptions when
          they name it consistently (``description[stage]`` when a string, else
          ``description[stage]["algorithm"]``, None read as ``"none"``: the forms of the
          Oboe, LCDB and DeepPipe meta-data), else by its index. A column belongs to
          component ``k`` of stage ``s`` when it holds one value on every candidate that does
          not choose ``k`` (``INACTIVE``, or a one-hot 0) and another value on some candidate
          that does: the column then describes that component and nothing else, which is
          what :class:`PipelineSpace` encodings mean too (a one-hot column of the component
          is its own as well). When several components explain a column (a model's
          hyper-parameter that varies only in pipelines with one preprocessor too), the one
          chosen by the fewest candidates takes it, the most specific explanation; ties go
          to the first in order. Columns no component explains are shared.

        On DeepPipe's PMF pool this recovers the file's own algorithm blocks
        (``algorithm_domain``), less its seven columns that are 0 for every pipeline, which
        are shared. A meta-dataset that encodes an unused component with varying values
        leaves such columns shared.
        """
        source = (
            id(self.encodings),
            id(self.stage_choices),
            self.stage_names,
            id(self.descriptions),
        )
        if self._blocks is None or self._blocks[0] != source:
            self._blocks = (source, self._make_blocks())
        return self._blocks[1]

    def active_components(self, config: Config) -> dict[str, str]:
        """Per stage of :meth:`blocks`, the component candidate ``config`` chooses."""
        index = self.validate(config)["candidate"]
        blocks, choices = self.blocks(), self._choice_matrix()
        return {
            stage.name: stage.components[choices[index, position]].name
            for position, stage in enumerate(blocks.stages)
        }

    def _structured(self) -> bool:
        return self.stage_choices is not None and bool(self.stage_names)

    def _choice_matrix(self) -> np.ndarray:
        """Per candidate and stage of :meth:`blocks`, the position of its component."""
        if not self._structured():
            return np.zeros((len(self.encodings), 1), dtype=np.int64)
        choices = np.asarray(self.stage_choices)
        shape = (len(self.encodings), len(self.stage_names))
        if choices.shape != shape or (choices < 0).any() or (choices != np.round(choices)).any():
            raise ValueError(
                f"pool {self.name!r}: stage_choices must be a {shape[0]} x {shape[1]} matrix of "
                f"component positions (>= 0), got shape {choices.shape}"
            )
        return choices.astype(np.int64)

    def _make_blocks(self) -> EncodingBlocks:
        width = self.encodings.shape[1]
        if not self._structured():
            whole = ComponentBlock(self.name, tuple(range(width)))
            return EncodingBlocks(width, (StageBlock("candidate", (whole,)),))
        choices = self._choice_matrix()
        # Per column: the fewest candidates of a component that explains it, and which.
        fewest = np.full(width, len(choices) + 1)
        owner = np.full((width, 2), -1)
        for s in range(choices.shape[1]):
            for k in range(int(choices[:, s].max()) + 1 if len(choices) else 0):
                chosen = choices[:, s] == k
                if chosen.all() or not chosen.any():
                    continue  # nothing to contrast the component with
                outside = self.encodings[~chosen]
                constant = (outside == outside[0]).all(axis=0)
                differs = (self.encodings[chosen] != outside[0]).any(axis=0)
                better = constant & differs & (int(chosen.sum()) < fewest)
                fewest[better] = int(chosen.sum())
                owner[better] = (s, k)
        owned: dict[tuple[int, int], list[int]] = {}
        for column, (s, k) in enumerate(owner.tolist()):
            if s >= 0:
                owned.setdefault((s, k), []).append(column)
        unexplained = owner[:, 0] < 0
        stages = []
        for s, stage in enumerate(self.stage_names):
            count = int(choices[:, s].max()) + 1 if len(choices) else 1
            names = self._component_names(s, stage, choices[:, s], count)
            components = tuple(
                ComponentBlock(names[k], tuple(owned.get((s, k), ()))) for k in range(count)
            )
            stages.append(StageBlock(stage, components))
        return EncodingBlocks(
            width, tuple(stages), tuple(int(c) for c in np.flatnonzero(unexplained))
        )

    def _component_names(self, s: int, stage: str, choices: np.ndarray, count: int) -> list[str]:
        """The components' names of stage ``stage`` (column ``s``): the descriptions' when
        they name every component, one name per index, else the indices."""
        indices = [str(k) for k in range(count)]
        if self.descriptions is None or len(self.descriptions) != len(choices):
            return indices
        named: dict[int, str] = {}
        for description, choice in zip(self.descriptions, choices, strict=True):
            label = _component_label(description, stage)
            if label is None or named.setdefault(int(choice), label) != label:
                return indices
        names = [named.get(k) for k in range(count)]
        if None in names or len(set(names)) != count:
            return indices
        return [str(name) for name in names]


def _component_label(description: Any, stage: str) -> str | None:
    """What a pool's candidate description calls its component of ``stage``, if anything."""
    part = description.get(stage) if isinstance(description, Mapping) else None
    if isinstance(part, str):
        return part
    if isinstance(part, Mapping) and "algorithm" in part:
        return "none" if part["algorithm"] is None else str(part["algorithm"])
    return None


if TYPE_CHECKING:  # mypy proves here that both kinds implement the whole protocol
    _VECTOR_SPACES: tuple[type[VectorSpace], ...] = (PipelineSpace, PoolSpace)


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


def _is_forbidden(space: ConfigurationSpace, vector: np.ndarray) -> bool:
    return any(clause.is_forbidden_vector(vector) for clause in space.forbidden_clauses)


def _configspace_vector(vector: np.ndarray) -> np.ndarray:
    values = np.array(vector, dtype=np.float64)
    values[values == INACTIVE] = np.nan
    return values


class UnseenSampler:
    """Random configurations of a space that a strategy has not proposed before.

    Samples are drawn ``batch`` at a time and the rest of a batch is kept for the next call,
    so a seeded run's random stream depends only on how many configurations were taken.
    """

    def __init__(self, space: SearchSpace, batch: int = 64, attempts: int = 200) -> None:
        self.space, self.batch, self.attempts = space, batch, attempts
        self.buffer: list[dict[str, Any]] = []

    def next(self, rng: np.random.Generator, claim: Callable[[Config], bool]) -> dict | None:
        """The next sampled configuration that ``claim`` accepts (``claim`` marks it as
        proposed); None after ``attempts`` refusals in a row, or when the space samples
        nothing."""
        for _ in range(self.attempts):
            if not self.buffer:
                self.buffer = self.space.sample(rng, self.batch)
                if not self.buffer:
                    return None
            config = self.buffer.pop(0)
            if claim(config):
                return config
        return None
