"""The contracts between the run loop and the plugins.

Each kind of component is a small abstract base class: subclass it, implement the abstract
methods, and register a factory for it in a plugin (see :mod:`automl_core.hookspecs`).
Factories are called with the recipe's ``params`` as keyword arguments, so a component's
parameters are simply its constructor's keyword arguments.
"""

from __future__ import annotations

import abc
import logging
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, runtime_checkable

import numpy as np

from automl_core.errors import InvalidConfigurationError, PluginError
from automl_core.space import EncodingColumn, SearchSpace, VectorSpace
from automl_core.trial import Candidate, Config, Result, Trial

if TYPE_CHECKING:  # annotations only: the kernel imports neither pandas nor the pool's module
    import pandas as pd

    from automl_spaces.pool_space import PoolSpace

log = logging.getLogger(__name__)

# ---------------------------------------------------------------------------------------------
# Meta-data and meta-features
# ---------------------------------------------------------------------------------------------


@dataclass
class MetaData:
    """Results of earlier searches on other datasets: the raw material of meta-learning.

    ``performance[i, j]`` is the loss (lower is better) of ``configs[j]`` on ``datasets[i]``;
    NaN where it was not run. Every ``configs[j]`` is valid in the space named ``space``; for a
    meta-dataset of a finite pool of pipelines that space is ``pool`` (configurations are
    ``{"candidate": j}``, and ``pool.descriptions[j]`` says which pipeline it is).

    ``metafeatures`` has one row per dataset that has them (index = dataset ids, which may be a
    subset of ``datasets``). ``runtimes`` has the shape of ``performance`` (seconds).
    ``splits`` names fixed subsets of dataset ids (``train``, ``test``...) where the source
    defines them. Multi-fidelity sources add ``budgets`` (increasing, e.g. train sizes) and
    ``curves[i, j, k]``, the loss of ``configs[j]`` on ``datasets[i]`` at ``budgets[k]``.
    ``info`` keeps what is particular to one source (provenance, licence, initial designs).
    Two of its keys are read by :class:`automl_metadata.lookup.TableBenchmark`: ``metric`` (what
    the losses measure, shown in summaries) and ``fidelity`` (what ``budgets`` count, e.g.
    ``train_size``; ``budget`` when absent).
    """

    datasets: list[str]
    configs: list[dict[str, Any]]
    performance: np.ndarray
    metafeatures: pd.DataFrame | None = None
    runtimes: np.ndarray | None = None
    splits: dict[str, list[str]] = field(default_factory=dict)
    space: str = ""
    pool: PoolSpace | None = None
    budgets: np.ndarray | None = None
    curves: np.ndarray | None = None
    info: dict[str, Any] = field(default_factory=dict)
    _rows: dict[str, int] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.performance = np.asarray(self.performance, dtype=float)
        self._rows = {name: i for i, name in enumerate(self.datasets)}
        expected = (len(self.datasets), len(self.configs))
        _check_shape("performance", self.performance, expected)
        if self.runtimes is not None:
            self.runtimes = np.asarray(self.runtimes, dtype=float)
            _check_shape("runtimes", self.runtimes, expected)
        if self.pool is not None and len(self.pool.encodings) != len(self.configs):
            raise ValueError(
                f"pool has {len(self.pool.encodings)} candidates, "
                f"expected one per configuration ({len(self.configs)})"
            )
        if (self.budgets is None) != (self.curves is None):
            raise ValueError("budgets and curves come together: give both or neither")
        if self.budgets is not None and self.curves is not None:
            self.budgets = np.asarray(self.budgets, dtype=float)
            self.curves = np.asarray(self.curves, dtype=float)
            _check_shape("curves", self.curves, (*expected, len(self.budgets)))
        known = set(self.datasets)
        for split, members in self.splits.items():
            unknown = [d for d in members if d not in known]
            if unknown:
                raise ValueError(f"split {split!r} names unknown datasets: {unknown[:5]}")

    @property
    def shape(self) -> tuple[int, int]:
        """(datasets, configurations)."""
        return (len(self.datasets), len(self.configs))

    def observed_fraction(self) -> float:
        """The fraction of (dataset, configuration) cells that were run."""
        if self.performance.size == 0:
            return 0.0
        return float(np.isfinite(self.performance).mean())

    def row(self, dataset: str) -> int:
        """The row of ``dataset`` in ``performance`` (KeyError for an unknown dataset)."""
        try:
            return self._rows[str(dataset)]
        except KeyError:
            raise KeyError(f"dataset {dataset!r} is not in this meta-data") from None


def _check_shape(name: str, array: np.ndarray, expected: tuple[int, ...]) -> None:
    if array.shape != expected:
        raise ValueError(
            f"{name} has shape {array.shape}, expected {expected} "
            "(datasets x configurations" + (" x budgets)" if len(expected) == 3 else ")")
        )


@dataclass(frozen=True)
class TaskDescription:
    """What is known about the task before the search: for meta-learning components."""

    dataset: str
    task: str
    n_rows: int
    n_features: int
    metric: str
    metafeatures: Mapping[str, float] = field(default_factory=dict)
    #: Other names of the same dataset (its OpenML name or id, lower case), so that a
    #: warm-starter can leave the dataset itself out of its meta-data (leave-one-out).
    aliases: tuple[str, ...] = ()
    #: The table-lookup benchmark a ``benchmark`` task is on (its registered name, e.g.
    #: ``oboe``, which also names its meta-data); None for a data task.
    benchmark: str | None = None
    #: The run's way to meta-data (registered sources by name, folders by path), bound to the
    #: run's own plugin registry; use it through :meth:`metadata`. None for a description
    #: made outside a run, which can then only be handed :class:`MetaData` objects.
    resolve_metadata: MetaDataResolver | None = field(default=None, compare=False, repr=False)
    #: Training rows of the rarest class (classification; None otherwise or unknown): how
    #: many minority rows a holdout would validate on is what makes it reliable or not.
    #: (Last, so that descriptions built positionally keep their meaning.)
    smallest_class_rows: int | None = None

    def metadata(
        self, reference: str | Path | MetaData, params: Mapping[str, Any] | None = None
    ) -> MetaData:
        """The meta-data ``reference`` names: a registered meta-data source (``autosklearn``,
        ``oboe``... built with ``params``), a meta-data folder, or a :class:`MetaData` (as
        is). Warm-starters and learned meta-feature providers call this when they first need
        their meta-data, so that listing or validating a recipe never downloads."""
        if isinstance(reference, MetaData):
            return reference
        if self.resolve_metadata is None:
            raise PluginError(
                f"no meta-data resolver to find {str(reference)!r}: this task description was "
                "not made by a run; pass a MetaData object instead"
            )
        return self.resolve_metadata(reference, params)


class MetaDataResolver(Protocol):
    """``resolve(reference, params=None)``: see :meth:`TaskDescription.metadata`."""

    def __call__(
        self, reference: str | Path, params: Mapping[str, Any] | None = None
    ) -> MetaData: ...


@runtime_checkable
class MetaDataLoader(Protocol):
    """What a ``register_metadata`` factory builds: ``load()`` gives the meta-data.

    automl-metadata's ``MetaDataSource`` is the usual implementation (a registry package,
    downloaded and converted once per machine); the core needs nothing more than this.
    """

    def load(self) -> MetaData: ...


@runtime_checkable
class LocalMetaDataLoader(MetaDataLoader, Protocol):
    """A loader that can say whether ``load()`` would work without a download (automl-metadata's
    sources: converted on this machine already). ``automl validate`` asks it, so that a check
    that needs meta-data never downloads; a loader without it is taken to be local."""

    def is_converted(self) -> bool: ...


class MetaFeatureProvider(abc.ABC):
    """Describes a dataset by a named vector of meta-features."""

    @abc.abstractmethod
    def compute(self, X: pd.DataFrame, y: np.ndarray, task: str) -> dict[str, float]:
        """The meta-features of one dataset (NaN for a feature that could not be computed)."""

    def fit(self, metadata: MetaData) -> None:  # noqa: B027 -- optional, deliberately empty
        """Learn from meta-data (learned providers such as Dida or Metabu); optional. The
        engine never calls it: a learned provider fits itself on the meta-data its recipe
        names when first asked to ``compute``; ``fit`` is how its own commands
        (``automl metabu fit``) and tests train it on meta-data they choose."""


@dataclass
class WarmStart:
    """Where a search starts: configurations to try first, and optionally a surrogate state
    (a pre-trained model that strategies hand to ``Surrogate.warm_start``). ``info`` is the
    warm-starter's account; the run stores it, and ``automl show`` prints its optional keys
    ``metadata`` (what it drew on), ``datasets`` (``{"dataset", "distance"}`` mappings, nearest
    first, or ids), ``excluded`` (datasets left out) and ``state`` (the state, in words)."""

    configs: list[dict[str, Any]] = field(default_factory=list)
    surrogate_state: Any = None
    info: dict[str, Any] = field(default_factory=dict)


class WarmStarter(abc.ABC):
    """Chooses initial configurations (and possibly a pretrained model) for a new task."""

    @abc.abstractmethod
    def suggest(self, task: TaskDescription, space: SearchSpace, n: int | None) -> WarmStart:
        """Up to ``n`` configurations, valid in ``space``, best first (``n`` None: as many as
        the warm-starter itself chooses, e.g. its whole portfolio)."""

    def training_before_search(self, task: TaskDescription, space: SearchSpace) -> str | None:
        """What ``suggest`` would train first (a sentence naming it and how to do it once,
        ahead), or None when it answers at once. A run under a wall time, which cannot
        bound such training, is refused before its first trial. Optional."""
        return None


@dataclass(frozen=True)
class Policy:
    """How a run spends its budget (Auto-sklearn 2.0's *policy*): the resampling, written as
    in a recipe (``{"holdout": 0.33}``, ``{"cv": 5}``), and whether candidates are raced by
    successive halving instead of each getting the full budget.

    ``racing_strategy`` names the registered search strategy that races them when
    ``halving`` (automl-policy names automl-halving's ``successive_halving``): it replaces a
    recipe's strategy that does not race budgets itself. The selector names it, not the
    engine, which knows no strategy by name."""

    name: str
    resampling: Mapping[str, float]
    halving: bool
    info: Mapping[str, Any] = field(default_factory=dict)
    racing_strategy: str | None = None


#: The selector ``task.resampling: auto`` uses: the one registered under this name. The
#: plugin that registers it provides the default (automl-policy: Auto-sklearn 2.0's);
#: ``{auto: NAME}`` picks any other.
AUTO_POLICY_SELECTOR = "auto"


class PolicySelector(abc.ABC):
    """Chooses a run's policy from what is known before the search (``task.resampling:
    auto`` in a recipe)."""

    @abc.abstractmethod
    def select(self, task: TaskDescription, time_budget: float | None) -> Policy:
        """The policy for ``task`` given the search's time budget in seconds (None: the run
        is bounded by trials only)."""


# ---------------------------------------------------------------------------------------------
# Surrogates and strategies
# ---------------------------------------------------------------------------------------------


class Surrogate(abc.ABC):
    """A regression model of the loss over encoded configurations, with uncertainty."""

    @abc.abstractmethod
    def fit(self, X: np.ndarray, y: np.ndarray) -> Surrogate:
        """Fit on encoded configurations ``X`` (n x d) and their losses ``y`` (n,)."""

    @abc.abstractmethod
    def predict(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Predicted mean and standard deviation of the loss at each row of ``X``."""

    def prepare(self, columns: Sequence[EncodingColumn]) -> None:  # noqa: B027
        """Told once, before the first ``fit``, what each column of ``X`` holds (categorical or
        numeric, conditional or not), so that e.g. a GP can one-hot encode categoricals."""

    def meta_fit(self, metadata: MetaData, space: SearchSpace) -> None:  # noqa: B027
        """Pre-train on other datasets (DeepPipe, shared latent space); optional. The engine
        never calls it: a surrogate whose recipe names meta-data pre-trains itself in
        ``prepare_space``, once it knows the space; ``automl deeppipe train`` and the
        conformance kit call it directly."""

    def prepare_space(self, space: VectorSpace, task: TaskDescription | None = None) -> None:  # noqa: B027
        """Told, after ``prepare``, the space whose rows it models (for a surrogate that encodes
        each component apart, DeepPipe) and the task (meta-training leaves it out); optional."""

    def warm_start(self, state: Any) -> None:  # noqa: B027
        """Start from a warm-starter's pre-trained ``state`` (WarmStart.surrogate_state)."""

    def check_space(self, space: VectorSpace, task: TaskDescription | None = None) -> None:  # noqa: B027
        """Raise ``ValueError`` saying why when this surrogate, as configured, cannot model
        ``space`` (meta-data or weights of another space; ``task`` resolves meta-data names);
        ``automl validate`` asks, so a mismatch is refused before a run. Optional."""

    def training_before_search(
        self, space: VectorSpace, task: TaskDescription | None = None
    ) -> str | None:
        """What this surrogate, as configured, would train before the run's first trial (a
        sentence naming it and the command that does it once, ahead), or None when it is
        ready at once. ``automl validate`` refuses such training under a wall time, which
        cannot bound it. Optional."""
        return None


@dataclass(frozen=True)
class Fidelity:
    """The budget range of a multi-fidelity search.

    ``kind`` says what a budget counts: ``subsample`` (a fraction of the training rows),
    ``iterations``, or ``train_size`` (a number of training rows, as in learning-curve data).
    """

    kind: str
    min: float
    max: float


#: How a data task's budget (a fraction of full fidelity) can be spent; see
#: :mod:`automl_engine.evaluator`.
DATA_FIDELITY_KINDS = ("iterations", "subsample")
#: A data task's budget range when the recipe sets none: iterations where a pipeline has an
#: iterative component (else a subsample), from a ninth of full fidelity (three rungs of
#: successive halving with eta = 3: 1/9, 1/3, 1).
DEFAULT_DATA_FIDELITY = Fidelity("iterations", 1 / 9, 1.0)


#: The ``origin`` of a trial of the warm start's configurations, whoever serves it (the run
#: loop, or a strategy that ``serves_warm_start``): a strategy told a result may read it.
WARM_START_ORIGIN = "warmstart"


@dataclass
class SearchContext:
    """Everything a strategy is handed at set-up."""

    space: SearchSpace
    seed: int
    surrogate_factory: Callable[[], Surrogate] | None = None
    warm_start: WarmStart | None = None
    fidelity: Fidelity | None = None
    task: TaskDescription | None = None
    #: The run's trial budget, when the recipe sets one (strategies that size an initial
    #: design by the run's length read it; the run loop still owns the budget).
    trial_budget: int | None = None
    #: The seconds of search the run has left when the strategy is set up: the recipe's
    #: ``budget.wall_time``, less what a resumed run already spent; None without a wall
    #: time (strategies that size an initial design read it, e.g. from the rate at which
    #: results arrive; the run loop still owns the budget).
    time_budget: float | None = None
    #: How many configurations the run loop proposes before this strategy's first ask (the
    #: warm start's valid ones, unless the strategy ``serves_warm_start`` itself): their
    #: results are told like those of the strategy's own trials. A strategy that sizes an
    #: initial design counts them in.
    served_first: int = 0

    def new_surrogate(self) -> Surrogate:
        """A fresh surrogate from the recipe's ``search.surrogate``. Validation refuses a
        recipe without one for a strategy whose ``surrogate_use`` is ``"required"``; this
        error is for a strategy set up by hand without it."""
        if self.surrogate_factory is None:
            raise ValueError(
                "this search strategy needs a surrogate: name one in the recipe's "
                "search.surrogate (e.g. surrogate: rf)"
            )
        return self.surrogate_factory()

    def warm_start_configs(self) -> list[dict[str, Any]]:
        """The warm start's configurations that are valid in the space, validated, in order.

        A warm-starter may suggest configurations of another space version (meta-data from
        an older release, a restricted space); each invalid one is skipped with a warning
        rather than failing the run.
        """
        valid = []
        for config in self.warm_start.configs if self.warm_start else []:
            try:
                valid.append(self.space.validate(config))
            except InvalidConfigurationError as error:
                log.warning("skipping a warm-start configuration: %s", error)
        return valid


class SearchStrategy(abc.ABC):
    """Proposes configurations (``ask``) and learns from their results (``tell``).

    The run loop may call ``ask`` several times before the first ``tell`` (parallel workers),
    and results may arrive in any order. ``ask`` returns ``None`` when the strategy has nothing
    left to propose (e.g. a finite pool is exhausted); the run then ends.

    The loop owns two rules every strategy would otherwise repeat (as Optuna's
    ``enqueue_trial`` does): the warm start's configurations are proposed by the loop before
    the strategy is first asked, and told to it like its own trials; and a proposal of a
    configuration the run already tried at that budget is refused, and the strategy asked
    again.
    """

    context: SearchContext
    #: Whether the strategy itself races candidates over budgets (successive halving and its
    #: kin): a run whose policy calls for successive halving then keeps it instead of
    #: switching to ``successive_halving`` (see ``task.resampling: auto``). Such a strategy
    #: needs a budget range: a task without one is refused when the recipe is validated.
    races_budgets: ClassVar[bool] = False
    #: ``"required"``, ``"optional"`` or ``"unused"``: whether the strategy fits the recipe's
    #: ``search.surrogate``. Validation refuses a recipe without one for ``"required"`` and
    #: warns that a surrogate named for an ``"unused"`` one is ignored.
    surrogate_use: ClassVar[str] = "optional"
    #: The space kinds the strategy searches (``"pipeline"``, ``"pool"``): the conformance
    #: kit (:mod:`automl_engine.testing`) checks it on each.
    space_kinds: ClassVar[frozenset[str]] = frozenset({"pipeline", "pool"})
    #: Whether the strategy places the warm start's configurations itself
    #: (``SearchContext.warm_start_configs``): successive halving races them at its lowest
    #: budget, SMAC3 puts them in its initial design. Otherwise the run loop proposes them
    #: first, in order.
    serves_warm_start: ClassVar[bool] = False

    def setup(self, context: SearchContext) -> None:
        """Called once before the first ``ask``."""
        self.context = context

    @abc.abstractmethod
    def ask(self) -> Candidate | None:
        """The next configuration to evaluate."""

    @abc.abstractmethod
    def tell(self, trial: Trial, result: Result) -> None:
        """The result of a trial this strategy proposed, or, when a run resumes, of a
        finished trial of the interrupted run: a resumed strategy learns its state again
        from these replayed results, in trial order."""

    def close(self) -> None:  # noqa: B027 -- nothing to release by default
        """Release what the strategy holds (temporary folders, worker pools); called once when
        the search ends, also after an error."""


# ---------------------------------------------------------------------------------------------
# Evaluation and execution
# ---------------------------------------------------------------------------------------------


class Evaluator(abc.ABC):
    """Turns a trial into a result: fits and scores a pipeline, or looks a result up."""

    @abc.abstractmethod
    def evaluate(self, trial: Trial) -> Result:
        """Never raises for a bad configuration: a failure is a ``Result`` with its status."""


class Executor(abc.ABC):
    """Runs evaluations, perhaps elsewhere; the run loop keeps ``capacity`` trials in flight."""

    capacity: int = 1
    #: Whether :meth:`set_limits` is honoured (the run warns when a recipe sets limits that
    #: its executor cannot enforce).
    enforces_limits: bool = False
    #: The threads each trial runs on, when the executor sets them (the ``processes`` and
    #: ``dask`` executors' parameter); the pipelines are built for as many
    #: (``BuildContext.threads``) and the refit runs on as many. None: not set (one).
    threads_per_trial: int | None = None

    def set_limits(self, trial_time: float | None, trial_memory_mb: int | None) -> None:  # noqa: B027
        """The per-trial limits for the trials submitted from now on (the recipe's
        ``budget.trial_time`` and ``budget.trial_memory_mb``); ``None`` is no limit."""

    @abc.abstractmethod
    def submit(self, evaluator: Evaluator, trial: Trial) -> Future[Result]:
        """Start evaluating ``trial``; the future resolves to its ``Result``."""

    def shutdown(self) -> None:  # noqa: B027 -- nothing to release by default
        """Release workers; called once at the end of a run, also when the run's wall time
        ended with trials still running. Those trials' results are no longer wanted, so an
        executor that can should stop them at once rather than wait for them: the time
        budget of ``AutoMLClassifier.fit`` counts on it (the ``processes`` executor kills
        them within its 50 ms poll)."""


class Ensembler(abc.ABC):
    """Combines trials' out-of-sample predictions into a weighted ensemble."""

    @abc.abstractmethod
    def fit(
        self,
        predictions: Sequence[np.ndarray],
        y: np.ndarray,
        loss: Callable[[np.ndarray, np.ndarray], float],
    ) -> np.ndarray:
        """Weights (summing to 1) over ``predictions``, minimising ``loss(y, blend)``."""


class Benchmark(abc.ABC):
    """A table-lookup objective: a pool space and an evaluator per dataset of a meta-dataset.

    Evaluating a configuration is looking its stored loss up, so strategies, surrogates and
    warm-starters can be compared over hundreds of datasets in seconds, exactly and
    reproducibly (the protocol of the DeepPipe paper and HPO-B).
    """

    #: What the stored losses measure (shown in summaries), e.g. ``error rate``.
    metric: str = "loss"

    @abc.abstractmethod
    def datasets(self, split: str | None = None) -> list[str]:
        """The dataset ids, or those of one named split."""

    @abc.abstractmethod
    def space(self, dataset: str) -> SearchSpace:
        """The candidates that may be offered on ``dataset`` (never one that was not run)."""

    @abc.abstractmethod
    def evaluator(self, dataset: str, seed: int) -> Evaluator:
        """Looks results up for ``dataset``."""

    def splits(self) -> list[str]:
        """The names accepted by :meth:`datasets`."""
        return []

    def loss_range(self, dataset: str) -> tuple[float, float] | None:
        """(best, worst) loss among the candidates offered on ``dataset``, for normalised
        regret; None when unknown."""
        return None

    def fidelity(self, dataset: str) -> Fidelity | None:
        """The budget range on ``dataset`` for a multi-fidelity benchmark, else None."""
        return None


__all__ = [
    "DATA_FIDELITY_KINDS",
    "DEFAULT_DATA_FIDELITY",
    "WARM_START_ORIGIN",
    "Benchmark",
    "Config",
    "Ensembler",
    "Evaluator",
    "Executor",
    "Fidelity",
    "MetaData",
    "MetaDataLoader",
    "MetaDataResolver",
    "MetaFeatureProvider",
    "SearchContext",
    "SearchStrategy",
    "Surrogate",
    "TaskDescription",
    "WarmStart",
    "WarmStarter",
]
