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
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, runtime_checkable

import numpy as np
import numpy.typing as npt

from automl_core.trial import Config

if TYPE_CHECKING:  # the two kinds of space, in modules of their own (the pipeline space
    # needs ConfigSpace, which the kernel does not import); they import this module
    from ConfigSpace import ConfigurationSpace

    from automl_spaces.pipeline_space import PipelineSpace
    from automl_spaces.pool_space import PoolSpace

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

    ``threads`` is how many threads the fit may use: the executor's ``threads_per_trial``
    (1 unless the recipe gives more). Components with a thread pool of their own (LightGBM,
    XGBoost, CatBoost, scikit-learn's forests) size it to this, so that a trial uses what its
    worker was given, no more (two trials on one core each would otherwise fight over every
    core) and no less.
    """

    task: str
    seed: int = 0
    budget: float | None = None
    threads: int = 1


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


def _no_hyperparameters() -> ConfigurationSpace:
    """An empty sub-space: a component without hyper-parameters (ConfigSpace imported here,
    when a space is built, not with the kernel)."""
    from ConfigSpace import ConfigurationSpace

    return ConfigurationSpace()


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
    hyperparameters: Callable[[], ConfigurationSpace] = _no_hyperparameters
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


class UnseenSampler:
    """Random configurations of a space that a strategy has not proposed before.

    Samples are drawn ``batch`` at a time (then twice the last, up to ``max_batch``), the
    rest kept for the next call: a seeded run's stream depends only on how many were taken.
    On a pool, once random draws keep missing, the candidates left are taken in order: a
    pool is exhausted only when every candidate was proposed.
    """

    def __init__(self, space: SearchSpace, batch: int = 64, attempts: int = 200) -> None:
        self.space, self.batch, self.attempts, self.max_batch = space, batch, attempts, batch
        self.buffer: list[dict[str, Any]] = []

    def next(self, rng: np.random.Generator, claim: Callable[[Config], bool]) -> dict | None:
        """The next sampled configuration that ``claim`` accepts (``claim`` marks it as
        proposed); None after ``attempts`` refusals in a row, or when the space samples
        nothing."""
        for _ in range(self.attempts):
            if not self.buffer:
                self.buffer = self.space.sample(rng, self.batch)
                self.batch = min(2 * self.batch, self.max_batch)
                if not self.buffer:
                    return None
            config = self.buffer.pop(0)
            if claim(config):
                return config
        typed = vector_space(self.space)
        pool = typed.as_pool() if typed is not None else None
        for config in pool.candidates() if pool is not None else []:
            if claim(config):
                return config
        return None
