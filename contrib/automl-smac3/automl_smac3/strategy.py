"""SMAC3's hyper-parameter optimisation facade, driven through its ask/tell interface.

The automl-core run loop owns the budget and the evaluations; SMAC only proposes. So SMAC gets a
``Scenario`` whose ``n_trials`` is far beyond any run (its own loop never stops first) and no
target function, and the strategy translates between the two worlds:

* ``ask`` -> ``smac.ask()`` -> a ``TrialInfo``; its configuration becomes a ``Candidate``.
* ``tell`` -> ``smac.tell(info, TrialValue(cost=loss))`` with the ``TrialInfo`` kept for that
  trial, so several asks may be outstanding at once (parallel workers).

Everything else is SMAC's HPO facade as shipped: a random forest on log-scaled costs, expected
improvement, local + sorted random search to maximise it, 20 % interleaved random
configurations, a Sobol initial design, and SMAC's intensifier in its deterministic mode (one
evaluation per configuration). See :mod:`automl_smac3.components` for the three small changes.
"""

from __future__ import annotations

import logging
import math
import shutil
import tempfile
import warnings
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ConfigSpace import Configuration
from smac import HyperparameterOptimizationFacade as Facade
from smac import Scenario
from smac.acquisition.maximizer import LocalAndSortedRandomSearch
from smac.main.config_selector import ConfigSelector
from smac.model.random_forest import RandomForest
from smac.runhistory.dataclasses import TrialInfo, TrialValue
from smac.runhistory.enumerations import StatusType

from automl_core.contracts import SearchContext, SearchStrategy
from automl_core.errors import InvalidConfigurationError
from automl_core.trial import Candidate, Config, Result, Trial
from automl_smac3.adapters import make_adapter
from automl_smac3.components import (
    WARM_START_ORIGIN,
    SnappingConfigSelector,
    WarmStartFirstSobolDesign,
    reproducible,
)

log = logging.getLogger(__name__)

#: SMAC's own loop never ends the run: the automl-core run loop stops asking first.
UNLIMITED_TRIALS = 2**31 - 1
#: How many proposals in a row may repeat earlier ones before ``ask`` gives up.
MAX_REPEATS = 50
#: SMAC's initial design is sized for a run this long when neither the parameter nor the
#: recipe's trial budget says otherwise.
DEFAULT_EXPECTED_TRIALS = 100
#: How often SMAC's selector retries a configuration it already returned (its default).
SELECTOR_RETRIES = 16


class SMAC3(SearchStrategy):
    """SMAC3's HPO facade as a search strategy; see the module docstring.

    ``expected_trials`` sizes SMAC's Sobol initial design the way SMAC would for a run of that
    many trials (``initial_per_hyperparameter`` per hyper-parameter, at most
    ``initial_max_ratio`` of the trials): the run loop, not SMAC, owns the real budget, so it
    defaults to the recipe's trial budget (``SearchContext.trial_budget``), else 100.
    ``random_probability``, ``n_trees``, ``retrain_after``, ``challengers`` and
    ``local_search_iterations`` default to the facade's own values, and
    ``local_search_max_steps`` to SMAC's (no limit). Capping the local search's steps makes
    each model step cheaper: SMAC's local search costs seconds per model step on a 2-core
    machine. ``n_jobs`` is the random forest's threads: SMAC's default, every core, only adds
    thread hand-offs on the few hundred rows of a search (1 gives the same forest).

    Failed trials (infinite loss) are told to SMAC as ``CRASHED`` with ``crash_cost``, or, when
    it is None, with the worst finite loss seen so far: SMAC's log-scaled cost encoding needs
    finite costs, and the worst loss seen ranks a crash last without distorting the scale.
    Failures that arrive before any finite loss are held back and told once one is known.
    """

    surrogate_use = "unused"
    #: the warm start's configurations open SMAC's initial design (WarmStartFirstSobolDesign)
    serves_warm_start = True

    def __init__(
        self,
        expected_trials: int | None = None,
        initial_per_hyperparameter: int = 10,
        initial_max_ratio: float = 0.25,
        random_probability: float = 0.2,
        n_trees: int = 10,
        retrain_after: int = 8,
        challengers: int = 10000,
        local_search_iterations: int = 10,
        local_search_max_steps: int | None = None,
        n_jobs: int = 1,
        crash_cost: float | None = None,
    ) -> None:
        if expected_trials is not None:
            _check_positive("expected_trials", expected_trials)
        for name, value in [
            ("initial_per_hyperparameter", initial_per_hyperparameter),
            ("n_trees", n_trees),
            ("retrain_after", retrain_after),
            ("challengers", challengers),
            ("local_search_iterations", local_search_iterations),
        ]:
            _check_positive(name, value)
        if local_search_max_steps is not None:
            _check_positive("local_search_max_steps", local_search_max_steps)
        if not 0.0 < initial_max_ratio <= 1.0:
            raise ValueError(f"smac3: initial_max_ratio must be in (0, 1], got {initial_max_ratio}")
        if not 0.0 <= random_probability <= 1.0:
            raise ValueError(
                f"smac3: random_probability must be in [0, 1], got {random_probability}"
            )
        if not isinstance(n_jobs, int) or n_jobs == 0 or n_jobs < -1:
            raise ValueError(f"smac3: n_jobs must be -1 or a positive integer, got {n_jobs!r}")
        if crash_cost is not None and not math.isfinite(crash_cost):
            raise ValueError(f"smac3: crash_cost must be finite (or None), got {crash_cost}")
        self.expected_trials = expected_trials
        self.initial_per_hyperparameter = initial_per_hyperparameter
        self.initial_max_ratio = initial_max_ratio
        self.random_probability = random_probability
        self.n_trees = n_trees
        self.retrain_after = retrain_after
        self.challengers = challengers
        self.local_search_iterations = local_search_iterations
        self.local_search_max_steps = local_search_max_steps
        self.n_jobs = n_jobs
        self.crash_cost = crash_cost

    # -- set-up ----------------------------------------------------------------------------------
    def setup(self, context: SearchContext) -> None:
        super().setup(context)
        _quiet_smac_logging()
        self.adapter = make_adapter(context.space)
        self.outstanding: dict[str, TrialInfo] = {}
        self.proposed: set[str] = set()
        self.worst_loss: float | None = None
        self.held_failures: list[TrialInfo] = []
        self.trial_seed: int | None = None
        self.output_directory = Path(tempfile.mkdtemp(prefix="automl-smac3-"))
        # SMAC writes its scenario there; the folder goes with the strategy (or at exit).
        self._cleanup = weakref.finalize(
            self, shutil.rmtree, self.output_directory, ignore_errors=True
        )
        with _smac_noise_silenced():
            self.smac = self._facade(self._scenario(), self._warm_start_configurations())

    def _expected_trials(self) -> int:
        """The parameter, else the run's trial budget, else 100."""
        if self.expected_trials is not None:
            return self.expected_trials
        return self.context.trial_budget or DEFAULT_EXPECTED_TRIALS

    def close(self) -> None:
        """Remove SMAC's output folder now rather than when the strategy is collected."""
        self._cleanup()

    def _warm_start_configurations(self) -> list[Configuration]:
        """The valid warm-start configurations as SMAC ``Configuration``s, each once."""
        warm: list[Configuration] = []
        for config in self.context.warm_start_configs():
            configuration = self.adapter.configuration(config)
            configuration.origin = WARM_START_ORIGIN
            if configuration not in warm:
                warm.append(configuration)
        return warm

    def _scenario(self) -> Scenario:
        return Scenario(
            self.adapter.configspace,
            name="automl-core",
            output_directory=self.output_directory,
            deterministic=True,
            n_trials=UNLIMITED_TRIALS,
            seed=self.context.seed,
        )

    def _facade(self, scenario: Scenario, warm: list[Configuration]) -> Facade:
        n_hyperparameters = len(list(self.adapter.configspace.values()))
        n_initial = min(
            self.initial_per_hyperparameter * n_hyperparameters,
            int(self.initial_max_ratio * self._expected_trials()),
        )
        return Facade(
            scenario,
            None,  # the run loop evaluates; SMAC is only asked and told
            model=self._forest(scenario),
            initial_design=WarmStartFirstSobolDesign(
                scenario, n_configs=max(1, n_initial), additional_configs=warm
            ),
            random_design=Facade.get_random_design(scenario, probability=self.random_probability),
            acquisition_maximizer=reproducible(
                LocalAndSortedRandomSearch(
                    scenario.configspace,
                    challengers=self.challengers,
                    local_search_iterations=self.local_search_iterations,
                    max_steps=self.local_search_max_steps,
                    seed=scenario.seed,
                )
            ),
            config_selector=self._selector(scenario),
            logging_level=False,  # leave the application's logging configuration alone
            overwrite=True,
        )

    def _forest(self, scenario: Scenario) -> RandomForest:
        """The facade's random forest (``get_model``'s settings), with ``n_jobs`` threads."""
        return RandomForest(
            configspace=scenario.configspace,
            log_y=True,
            n_trees=self.n_trees,
            bootstrapping=True,
            ratio_features=1.0,
            min_samples_split=2,
            min_samples_leaf=1,
            max_depth=2**20,
            instance_features=scenario.instance_features,
            seed=scenario.seed,
            n_jobs=self.n_jobs,
        )

    def _selector(self, scenario: Scenario) -> ConfigSelector:
        if not self.adapter.snaps:
            return Facade.get_config_selector(scenario, retrain_after=self.retrain_after)
        return SnappingConfigSelector(
            scenario,
            retrain_after=self.retrain_after,
            max_new_config_tries=SELECTOR_RETRIES,
            snap=self.adapter.snap,
        )

    # -- ask -------------------------------------------------------------------------------------
    def ask(self) -> Candidate | None:
        for _ in range(MAX_REPEATS):
            try:
                with _smac_noise_silenced():
                    info = self.smac.ask()
            except StopIteration:  # nothing left to propose (e.g. every pool candidate)
                return None
            if self.trial_seed is None:
                self.trial_seed = info.seed
            config = self.adapter.config_of(info.config)
            key = self.context.space.key(config)
            if key in self.proposed:  # SMAC re-runs nothing in deterministic mode; be safe
                log.warning("smac3: skipping a repeated proposal of %s", config)
                continue
            self.proposed.add(key)
            self.outstanding[key] = info
            return Candidate(config, origin=_origin(info.config.origin))
        return None

    # -- tell ------------------------------------------------------------------------------------
    def tell(self, trial: Trial, result: Result) -> None:
        key = self.context.space.key(trial.config)
        info = self.outstanding.pop(key, None) or self._replayed(trial.config, key)
        if info is None:
            return
        if result.ok:
            self._tell_success(info, result.loss)
        else:
            self._tell_failure(info)

    def _replayed(self, config: Config, key: str) -> TrialInfo | None:
        """The ``TrialInfo`` of a trial this instance did not ask for (a resumed run replays its
        history): its configuration, on the seed SMAC evaluates everything on."""
        if key in self.proposed:
            log.warning("smac3: a second result for %s is ignored", dict(config))
            return None
        try:
            configuration = self.adapter.configuration(config)
        except InvalidConfigurationError as error:
            log.warning("smac3: ignoring the result of a configuration not in the space: %s", error)
            return None
        self.proposed.add(key)
        self.adapter.claim(config)
        seed = self.trial_seed if self.trial_seed is not None else self.context.seed
        return TrialInfo(configuration, seed=seed)

    def _tell_success(self, info: TrialInfo, loss: float) -> None:
        self.smac.tell(info, TrialValue(cost=float(loss)), save=False)
        first = self.worst_loss is None
        self.worst_loss = loss if self.worst_loss is None else max(self.worst_loss, loss)
        if first:
            held, self.held_failures = self.held_failures, []
            for failed in held:
                self._tell_failure(failed)

    def _tell_failure(self, info: TrialInfo) -> None:
        cost = self.crash_cost if self.crash_cost is not None else self.worst_loss
        if cost is None:  # nothing finite seen yet: no cost can be ranked last
            self.held_failures.append(info)
            return
        self.smac.tell(info, TrialValue(cost=float(cost), status=StatusType.CRASHED), save=False)


def _origin(smac_origin: str | None) -> str:
    """A short origin for the trial store, from the origin SMAC gives its configurations."""
    text = (smac_origin or "").lower()
    if text == WARM_START_ORIGIN:
        return "warmstart"
    if text.startswith("initial design"):
        return "initial"
    if text.startswith("acquisition function maximizer"):
        return "model"
    return "random"


@contextmanager
def _smac_noise_silenced() -> Iterator[None]:
    """Silence warnings SMAC 2.4 causes itself: it calls ConfigSpace's deprecated
    ``get_dictionary`` when it describes a warm-started initial design, and its local search
    logs the mean duration of no steps (NumPy warns about the empty mean) after a search that
    found nothing to improve."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=DeprecationWarning, module=r"smac\.")
        warnings.filterwarnings("ignore", "Mean of empty slice", RuntimeWarning)
        warnings.filterwarnings("ignore", "invalid value encountered in scalar divide")
        yield


def _quiet_smac_logging() -> None:
    """SMAC logs every step at INFO; keep its logger at WARNING unless the user chose a level."""
    logger = logging.getLogger("smac")
    if logger.level == logging.NOTSET:
        logger.setLevel(logging.WARNING)


def _check_positive(name: str, value: int) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError(f"smac3: {name} must be a positive integer, got {value!r}")
