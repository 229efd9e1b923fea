"""A small, real plugin for the core's tests: a two-stage scikit-learn space, so the core is
tested without the automl-sklearn plugin, plus test doubles of every component kind."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pandas as pd
from ConfigSpace import ConfigurationSpace, Float, Integer
from sklearn.compose import ColumnTransformer, make_column_selector
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OrdinalEncoder, StandardScaler
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

from automl_core import hookimpl
from automl_core.contracts import (
    Ensembler,
    MetaFeatureProvider,
    Policy,
    PolicySelector,
    SearchStrategy,
    Surrogate,
    TaskDescription,
    WarmStart,
    WarmStarter,
)
from automl_core.space import BuildContext, PipelineComponent, SearchSpace, Stage
from automl_core.trial import Candidate, Result, Trial
from automl_spaces.pipeline_space import PipelineSpace


class CrashingEstimator:
    """Raises in fit: the evaluator must turn that into a crashed result."""

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        return {}

    def set_params(self, **params: Any) -> CrashingEstimator:
        return self

    def fit(self, X: Any, y: Any) -> CrashingEstimator:
        raise RuntimeError("this component always fails")


class SleepingEstimator(CrashingEstimator):
    """Sleeps a minute in fit: a trial that hangs."""

    def fit(self, X: Any, y: Any) -> SleepingEstimator:
        time.sleep(60)
        return self


class HangingPlugin:
    """A classifier whose fit hangs, added to the toy space only where a test loads it."""

    @hookimpl
    def register_components(self, register: Any) -> None:
        register(
            PipelineComponent(
                "sleeping",
                "classifier",
                lambda p, c: SleepingEstimator(),
                tasks=frozenset({"classification"}),
            )
        )

    @hookimpl
    def register_warmstarters(self, register: Any) -> None:
        register("slow", SlowWarmStarter)


def _tree_space() -> ConfigurationSpace:
    return ConfigurationSpace(
        {
            "max_depth": Integer("max_depth", (1, 12)),
            "min_samples_leaf": Integer("min_samples_leaf", (1, 20)),
        }
    )


def _c_space() -> ConfigurationSpace:
    return ConfigurationSpace({"C": Float("C", (1e-3, 1e3), log=True)})


COMPONENTS = [
    PipelineComponent("none", "rescaling", lambda p, c: "passthrough"),
    PipelineComponent("standardize", "rescaling", lambda p, c: StandardScaler()),
    PipelineComponent(
        "decision_tree",
        "classifier",
        lambda p, c: DecisionTreeClassifier(random_state=c.seed, **p),
        _tree_space,
        frozenset({"classification"}),
    ),
    PipelineComponent(
        "logistic",
        "classifier",
        lambda p, c: LogisticRegression(solver="newton-cholesky", **p),
        _c_space,
        frozenset({"classification"}),
    ),
    PipelineComponent(
        "crashing",
        "classifier",
        lambda p, c: CrashingEstimator(),
        tasks=frozenset({"classification"}),
    ),
    PipelineComponent(
        "decision_tree",
        "regressor",
        lambda p, c: DecisionTreeRegressor(random_state=c.seed, **p),
        _tree_space,
        frozenset({"regression"}),
    ),
    PipelineComponent(
        "ridge",
        "regressor",
        lambda p, c: Ridge(alpha=1 / p["C"]),
        _c_space,
        frozenset({"regression"}),
    ),
]


def assemble(choices: dict[str, tuple[PipelineComponent, dict]], context: BuildContext) -> Any:
    """Impute and encode, rescale, then the model."""
    steps = {}
    for stage, (component, params) in choices.items():
        steps[stage] = component.build(params, context)
    numeric = Pipeline([("impute", SimpleImputer()), ("rescale", steps["rescaling"])])
    categorical = Pipeline(
        [
            ("impute", SimpleImputer(strategy="most_frequent")),
            ("encode", OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=-1)),
        ]
    )
    columns = ColumnTransformer(
        [
            ("num", numeric, make_column_selector(dtype_include="number")),
            ("cat", categorical, make_column_selector(dtype_exclude="number")),
        ]
    )
    model_stage = "classifier" if "classifier" in steps else "regressor"
    return Pipeline([("columns", columns), ("model", steps[model_stage])])


def defined_in_tests(component: PipelineComponent) -> bool:
    """Whether ``component`` was written in this folder (the toy's, or a test's own)."""
    code = getattr(component.build, "__code__", None)
    return code is not None and Path(code.co_filename).parent == Path(__file__).parent


def toy_space(task: str, model_stage: str) -> Any:
    """The toy space of ``task``: the toy's components and those the tests register, whatever
    else is installed. Built from every registered component, it took in automl-sklearn's
    classifiers where that plugin is installed, and lost the toy's ``decision_tree``,
    ``none`` and ``standardize`` to name conflicts with it."""

    def factory(components: list[PipelineComponent], include: dict | None = None) -> PipelineSpace:
        added = [c for c in components if defined_in_tests(c) and c not in COMPONENTS]
        own = [*COMPONENTS, *added]
        stages = []
        for stage_name in ("rescaling", model_stage):
            members = tuple(c for c in own if c.stage == stage_name and task in c.tasks)
            stages.append(Stage(stage_name, members))
        space = PipelineSpace(f"toy-{task}", task, tuple(stages), assemble)
        return space.restrict(include=include) if include else space

    return factory


class ToyPlugin:
    """Registers the toy space's components and spaces."""

    @hookimpl
    def register_components(self, register: Any) -> None:
        for component in COMPONENTS:
            register(component)

    @hookimpl
    def register_spaces(self, register: Any) -> None:
        register("toy-classification", toy_space("classification", "classifier"))
        register("toy-regression", toy_space("regression", "regressor"))

    @hookimpl
    def trusted_model_types(self) -> list[str]:
        # the assembler's column selectors, SimpleImputer's fitted dtype, a fitted tree
        return [
            "sklearn.compose._column_transformer.make_column_selector",
            "numpy.dtype",
            "sklearn.tree._tree.Tree",
        ]


# --- test doubles of the other kinds ---------------------------------------------------------


class RowCountProvider(MetaFeatureProvider):
    """Meta-features a test can predict: the numbers of rows and features."""

    def compute(self, X: pd.DataFrame, y: np.ndarray, task: str) -> dict[str, float]:
        return {"rows": float(len(X)), "features": float(X.shape[1])}


class FixedWarmStarter(WarmStarter):
    """Suggests the space's default, then deeper trees; records what it was told."""

    seen_tasks: ClassVar[list[TaskDescription]] = []

    def suggest(self, task: TaskDescription, space: SearchSpace, n: int | None) -> WarmStart:
        FixedWarmStarter.seen_tasks.append(task)
        return WarmStart(fixed_warm_start()[:n])


def fixed_warm_start() -> list[dict[str, Any]]:
    """The ``fixed`` warm-starter's configurations: decision trees of depth 2, 4 and 6."""
    return [
        {
            "rescaling:__choice__": "standardize",
            "classifier:__choice__": "decision_tree",
            "classifier:decision_tree:max_depth": depth,
            "classifier:decision_tree:min_samples_leaf": 1,
        }
        for depth in (2, 4, 6)
    ]


class SlowWarmStarter(WarmStarter):
    """Takes ``seconds`` to suggest nothing: a set-up stage slower than the budget."""

    def __init__(self, seconds: float = 2.0) -> None:
        self.seconds = seconds

    def suggest(self, task: TaskDescription, space: SearchSpace, n: int | None) -> WarmStart:
        time.sleep(self.seconds)
        return WarmStart([])


class FixedPolicySelector(PolicySelector):
    """Chooses the policy its parameters name; records what it was told."""

    seen: ClassVar[list[tuple[TaskDescription, float | None]]] = []

    def __init__(
        self,
        resampling: dict | None = None,
        halving: bool = False,
        racing_strategy: str | None = "successive_halving",
    ) -> None:
        self.resampling = resampling or {"cv": 3}
        self.halving = halving
        self.racing_strategy = racing_strategy

    def select(self, task: TaskDescription, time_budget: float | None) -> Policy:
        FixedPolicySelector.seen.append((task, time_budget))
        racing = self.racing_strategy if self.halving else None
        return Policy("fixed", self.resampling, self.halving, {"why": "a test"}, racing)


class MeanSurrogate(Surrogate):
    """Predicts the mean loss everywhere, with unit uncertainty."""

    def fit(self, X: np.ndarray, y: np.ndarray) -> MeanSurrogate:
        self.mean = float(np.mean(y))
        return self

    def predict(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return np.full(len(X), self.mean), np.ones(len(X))


class GreedySurrogateSearch(SearchStrategy):
    """A tiny model-based strategy: the first ``initial`` trials are random, then each ask
    samples 20 candidates and returns the one the surrogate predicts best."""

    def __init__(self, initial: int = 3) -> None:
        self.initial = initial
        self.fitted: list[int] = []

    def setup(self, context: Any) -> None:
        super().setup(context)
        self.rng = np.random.default_rng(context.seed)
        self.observed: list[tuple[dict, float]] = []

    def ask(self) -> Candidate:
        candidates = self.context.space.sample(self.rng, 20)
        finite = [(c, loss) for c, loss in self.observed if np.isfinite(loss)]
        if len(finite) < self.initial or self.context.surrogate_factory is None:
            return Candidate(candidates[0], origin="random")
        model = self.context.surrogate_factory()
        model.fit(
            self.context.space.encode([c for c, _ in finite]),
            np.array([loss for _, loss in finite]),
        )
        self.fitted.append(len(finite))
        mean, _ = model.predict(self.context.space.encode(candidates))
        return Candidate(candidates[int(np.argmin(mean))], origin="model")

    def tell(self, trial: Trial, result: Result) -> None:
        self.observed.append((dict(trial.config), result.loss))


class FailingStrategy(SearchStrategy):
    """Proposes random configurations, then raises on the ``fail_at``-th ask. Records the
    last instance's context and whether it was closed, for the tests to look at."""

    last: ClassVar[FailingStrategy | None] = None

    def __init__(self, fail_at: int = 3) -> None:
        self.fail_at = fail_at
        self.asked = 0
        self.closed = False
        FailingStrategy.last = self

    def setup(self, context: Any) -> None:
        super().setup(context)
        self.rng = np.random.default_rng(context.seed)

    def close(self) -> None:
        self.closed = True

    def ask(self) -> Candidate:
        self.asked += 1
        if self.asked == self.fail_at:
            raise ValueError("strategy bug on purpose")
        return Candidate(self.context.space.sample(self.rng, 1)[0])

    def tell(self, trial: Trial, result: Result) -> None:
        pass


class BestTwoEnsembler(Ensembler):
    """Weights 0.5/0.5 on the first two prediction sets (the two best trials)."""

    def fit(self, predictions: Any, y: np.ndarray, loss: Any) -> np.ndarray:
        weights = np.zeros(len(predictions))
        weights[:2] = 0.5
        return weights


class DoublesPlugin:
    """Registers the test doubles."""

    @hookimpl
    def register_metafeature_providers(self, register: Any) -> None:
        register("row-count", RowCountProvider)

    @hookimpl
    def register_warmstarters(self, register: Any) -> None:
        register("fixed", FixedWarmStarter)

    @hookimpl
    def register_policy_selectors(self, register: Any) -> None:
        register("fixed-policy", FixedPolicySelector)

    @hookimpl
    def register_surrogates(self, register: Any) -> None:
        register("mean", MeanSurrogate)

    @hookimpl
    def register_search_strategies(self, register: Any) -> None:
        register("greedy-surrogate", GreedySurrogateSearch)
        register("failing", FailingStrategy)

    @hookimpl
    def register_ensemblers(self, register: Any) -> None:
        register("best-two", BestTwoEnsembler)


def toy_recipe(**overrides: object) -> dict:
    """A small valid recipe on a real dataset, as a dict to modify."""
    recipe: dict = {
        "name": "toy",
        "task": {
            "dataset": "sklearn:breast_cancer",
            "metric": "balanced_accuracy",
            "resampling": {"holdout": 0.3},
        },
        "space": "toy-classification",
        "search": {"strategy": "random"},
        "budget": {"trials": 6},
        "seed": 3,
    }
    recipe.update(overrides)
    return recipe
