"""automl-core's search strategies as a CARP-S optimizer.

CARP-S drives an optimizer by ask and tell (``carps.optimizers.optimizer.Optimizer``): its own
runner, seeds, budgets, loggers and analysis then treat our strategies exactly as they treat
SMAC3, Optuna or HEBO. :class:`AutoMLCoreOptimizer` builds the strategy named in its CARP-S
configuration (``automl_carps/configs/optimizer/automl/*.yaml``) from the installed plugins,
with a surrogate where it takes one, over the task's space (:mod:`automl_carps.space`), and
relays each ask and tell::

    python -m carps.run 'hydra.searchpath=[pkg://automl_carps/configs]' \\
        +optimizer/automl=smbo-rf +task/BBOB=cfg_8_1_0 seed=1

A failed evaluation (a status other than success) is told as a crash, which our strategies
count as the worst loss seen. Multi-fidelity tasks give a strategy that races budgets the
task's fidelity range, and every other strategy their maximum fidelity; a strategy that races
budgets on a task without one is refused.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from carps.optimizers.optimizer import Optimizer
from carps.utils.trials import StatusType, TrialInfo, TrialValue
from ConfigSpace import Configuration, ConfigurationSpace

from automl_carps.space import task_space, task_values
from automl_core.contracts import Fidelity, SearchContext, SearchStrategy
from automl_core.plugins import load_plugins
from automl_core.trial import Config, Result, Status, Trial


class AutoMLCoreOptimizer(Optimizer):
    """One of our search strategies (``strategy``, with ``params`` and the ``surrogate``
    named, if any) asked and told by CARP-S's runner on ``task``."""

    def __init__(
        self,
        task: Any,
        strategy: str = "random",
        surrogate: str | None = None,
        params: Mapping[str, Any] | None = None,
        surrogate_params: Mapping[str, Any] | None = None,
        loggers: list[Any] | None = None,
    ) -> None:
        fidelities = task.input_space.fidelity_space.is_multifidelity
        super().__init__(task, loggers, expects_fidelities=fidelities)
        self.configspace: ConfigurationSpace = task.objective_function.configspace
        self.strategy_name, self.surrogate_name = strategy, surrogate
        self.params, self.surrogate_params = dict(params or {}), dict(surrogate_params or {})
        #: our configuration of each trial asked and not yet told, by its CARP-S name
        self.asked: dict[str, tuple[Trial, str]] = {}
        self.incumbent: tuple[TrialInfo, TrialValue] | None = None
        #: every trial told, with its origin and result (CARP-S's trial log keeps the origin
        #: only on black-box tasks: its runner rebuilds a multi-fidelity trial's info without it)
        self.history: list[tuple[Trial, str, Result]] = []
        self.trials = 0

    # -- CARP-S's contract -------------------------------------------------------------------
    def _setup_optimizer(self) -> SearchStrategy:
        plugins = load_plugins()
        strategy: SearchStrategy = plugins.create(
            "search_strategy", self.strategy_name, self.params
        )
        surrogate_factory = None
        if self.surrogate_name is not None:
            name, params = self.surrogate_name, self.surrogate_params
            surrogate_factory = lambda: plugins.create("surrogate", name, params)  # noqa: E731
        strategy.setup(
            SearchContext(
                space=task_space(self.configspace, name=str(self.task.name)),
                seed=int(self.task.seed if self.task.seed is not None else 0),
                surrogate_factory=surrogate_factory,
                fidelity=self._fidelity(strategy),
            )
        )
        return strategy

    def ask(self) -> TrialInfo:
        candidate = self.solver.ask()
        if candidate is None:
            raise RuntimeError(
                f"{self.strategy_name} has nothing left to propose after {self.trials} trials "
                "(a finite space exhausted)"
            )
        trial = Trial(self.trials, candidate.config, candidate.budget)
        name = f"trial-{trial.id}"
        self.asked[name] = (trial, candidate.origin)
        self.trials += 1
        return TrialInfo(
            config=self._task_configuration(candidate.config),
            budget=self._task_budget(candidate.budget),
            name=name,
            additional_info={"origin": candidate.origin},
        )

    def tell(self, trial_info: TrialInfo, trial_value: TrialValue) -> None:
        trial, origin = self.asked.pop(str(trial_info.name))
        cost = float(trial_value.cost)  # type: ignore[arg-type]  # one objective
        if trial_value.status == StatusType.SUCCESS:
            result = Result(Status.OK, cost)
        else:
            result = Result.failure(Status.CRASHED, f"CARP-S status {trial_value.status.name}")
        self.solver.tell(trial, result)
        self.history.append((trial, origin, result))
        full = trial_info.budget is None or trial_info.budget >= self._max_fidelity()
        if result.ok and full and (self.incumbent is None or cost < self.incumbent[1].cost):
            self.incumbent = (trial_info, trial_value)

    def get_current_incumbent(self) -> tuple[TrialInfo, TrialValue] | None:
        return self.incumbent

    def convert_configspace(self, configspace: ConfigurationSpace) -> Any:
        return task_space(configspace)

    def convert_to_trial(self, config: Config) -> TrialInfo:  # type: ignore[override]
        return TrialInfo(config=self._task_configuration(config))

    # -- helpers -----------------------------------------------------------------------------
    def _task_configuration(self, config: Config) -> Configuration:
        return Configuration(self.configspace, values=task_values(config))

    def _task_budget(self, budget: float | None) -> float | None:
        """The budget CARP-S evaluates at: a strategy that does not race budgets asks for
        none, which on a multi-fidelity task means its maximum (CARP-S's runner counts a
        multi-fidelity trial by its share of the maximum, so it needs one)."""
        if budget is None and self.task.input_space.fidelity_space.is_multifidelity:
            return self._max_fidelity()
        return budget

    def _fidelity(self, strategy: SearchStrategy) -> Fidelity | None:
        space = self.task.input_space.fidelity_space
        if not strategy.races_budgets:
            return None
        if not space.is_multifidelity:
            raise ValueError(
                f"{self.strategy_name} races budgets: it needs a multi-fidelity task, and "
                f"{self.task.name} has no fidelity"
            )
        return Fidelity(str(space.fidelity_type), space.min_fidelity, space.max_fidelity)

    def _max_fidelity(self) -> float:
        space = self.task.input_space.fidelity_space
        return float(space.max_fidelity) if space.is_multifidelity else float("inf")
