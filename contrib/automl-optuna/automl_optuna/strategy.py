"""Optuna's TPE sampler, driven through its ask/tell interface on an in-memory study.

``ask`` -> ``study.ask()`` -> an Optuna trial whose suggestions make the configuration;
``tell`` -> ``study.tell(trial, loss)``. Several asks may be outstanding at once: each run-loop
trial keeps its Optuna trial until its result comes (Optuna 5's TPE penalises running trials,
its "constant liar", so parallel asks spread out).

Three situations need a rule, because Optuna's study and the run loop see trials differently:

* A sampled configuration that a forbidden clause excludes (``space.validate`` raises): the
  Optuna trial is closed as ``FAIL`` (every Optuna sampler ignores failed trials) and TPE is
  asked again, at most ``max_retries`` times in a row, then a random valid configuration is
  enqueued instead.
* A configuration proposed before: its Optuna trial gets the loss already known (or the one
  still to come) -- a real observation of a deterministic objective -- and TPE is asked again.
* A failed evaluation (infinite loss): told as the worst finite loss seen so far, not as
  ``FAIL``. TPE ignores failed trials, so it would keep sampling where pipelines crash; the
  worst loss puts the trial in TPE's "bad" density, which steers it away. Failures before any
  finite loss are held back (still "running" for Optuna) and told once one is known.
"""

from __future__ import annotations

import logging
import math
import warnings
from typing import Any

import numpy as np
import optuna
from optuna.exceptions import ExperimentalWarning
from optuna.samplers import TPESampler
from optuna.trial import Trial as OptunaTrial
from optuna.trial import TrialState

from automl_core.contracts import SearchContext, SearchStrategy
from automl_core.errors import InvalidConfigurationError
from automl_core.trial import Candidate, Config, Result, Trial
from automl_optuna.adapters import PipelineAdapter, PoolAdapter, make_adapter

log = logging.getLogger(__name__)

#: Random configurations drawn at once when TPE keeps sampling forbidden or known ones.
FALLBACK_SAMPLES = 64


class OptunaTPE(SearchStrategy):
    """Optuna's ``TPESampler(seed=context.seed)``; see the module docstring.

    ``n_startup_trials``, ``multivariate``, ``group`` and ``constant_liar`` are passed to the
    sampler and default to Optuna 5's own values (``multivariate=None`` lets Optuna choose:
    the multivariate TPE for one objective). ``max_retries`` bounds how many forbidden or
    repeated configurations TPE may sample in a row before a random one is taken.

    On a :class:`~automl_spaces.pool_space.PoolSpace`, TPE searches the box of the pool's encodings
    and each proposal is snapped to the nearest candidate not yet proposed. Optuna is told the
    candidate's own point: the proposal's trial is closed as ``FAIL`` and the candidate's
    point is enqueued and asked at once, so the trial TPE learns from sits where the loss was
    measured.
    """

    surrogate_use = "unused"

    def __init__(
        self,
        n_startup_trials: int = 10,
        multivariate: bool | None = None,
        group: bool = False,
        constant_liar: bool = True,
        max_retries: int = 100,
    ) -> None:
        if not isinstance(n_startup_trials, int) or n_startup_trials < 0:
            raise ValueError(
                f"optuna-tpe: n_startup_trials must be a non-negative integer, "
                f"got {n_startup_trials!r}"
            )
        if not isinstance(max_retries, int) or max_retries < 1:
            raise ValueError(
                f"optuna-tpe: max_retries must be a positive integer, got {max_retries!r}"
            )
        if group and multivariate is False:
            raise ValueError("optuna-tpe: group=True needs the multivariate TPE")
        self.n_startup_trials = n_startup_trials
        self.multivariate = multivariate
        self.group = group
        self.constant_liar = constant_liar
        self.max_retries = max_retries

    # -- set-up ----------------------------------------------------------------------------------
    def setup(self, context: SearchContext) -> None:
        super().setup(context)
        optuna.logging.set_verbosity(optuna.logging.WARNING)  # Optuna logs each trial at INFO
        self.adapter = make_adapter(context.space)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ExperimentalWarning)  # ``group`` is experimental
            sampler = TPESampler(
                seed=context.seed,
                n_startup_trials=self.n_startup_trials,
                multivariate=self.multivariate,
                group=self.group,
                constant_liar=self.constant_liar,
            )
        self.study = optuna.create_study(direction="minimize", sampler=sampler)
        self.rng = np.random.default_rng(context.seed)
        self.pending: dict[str, list[OptunaTrial]] = {}
        self.losses: dict[str, float] = {}
        self.proposed: set[str] = set()
        self.worst_loss: float | None = None
        self.held: list[OptunaTrial] = []

    # -- ask -------------------------------------------------------------------------------------
    def ask(self) -> Candidate | None:
        if isinstance(self.adapter, PoolAdapter):
            return self._ask_pool(self.adapter)
        return self._ask_pipeline(self.adapter)

    def _ask_pool(self, adapter: PoolAdapter) -> Candidate | None:
        origin = self._origin()
        proposal = self.study.ask(adapter.fixed_distributions)
        config = adapter.snap(proposal.params)
        self.study.tell(proposal, state=TrialState.FAIL)  # replaced by the candidate's trial
        if config is None:  # every candidate proposed
            return None
        return self._propose(config, self._enqueued_trial(adapter.params_of(config)), origin)

    def _ask_pipeline(self, adapter: PipelineAdapter) -> Candidate | None:
        for _ in range(self.max_retries):
            origin = self._origin()
            trial = self.study.ask()
            values = adapter.suggest(trial)
            try:
                config = self.context.space.validate(values)
            except InvalidConfigurationError:  # a forbidden combination
                self.study.tell(trial, state=TrialState.FAIL)
                continue
            key = self._key(config)
            if key not in self.proposed:
                return self._propose(config, trial, origin)
            self._observe_again(key, trial)
        return self._ask_random()

    def _ask_random(self) -> Candidate | None:
        """A random configuration not proposed yet, when TPE keeps sampling others."""
        for config in self.context.space.sample(self.rng, FALLBACK_SAMPLES):
            if self._key(config) not in self.proposed:
                return self._propose(config, self._trial_for(config), "random")
        return None

    def _propose(self, config: dict[str, Any], trial: OptunaTrial, origin: str) -> Candidate:
        key = self._key(config)
        self.proposed.add(key)
        self.pending[key] = [trial]
        return Candidate(config, origin=origin)

    def _trial_for(self, config: Config) -> OptunaTrial:
        """An Optuna trial whose parameters are those of ``config`` (enqueued, then asked)."""
        trial = self._enqueued_trial(self.adapter.params_of(config))
        if isinstance(self.adapter, PipelineAdapter):
            self.adapter.suggest(trial)  # define-by-run: the enqueued values are suggested
        else:
            self.adapter.claim(config)
        return trial

    def _enqueued_trial(self, params: dict[str, Any]) -> OptunaTrial:
        self.study.enqueue_trial(params)
        return self.study.ask(self.adapter.fixed_distributions)

    def _origin(self) -> str:
        """``random`` while TPE is still in its start-up phase, else ``model``."""
        complete = self.study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
        return "random" if len(complete) < self.n_startup_trials else "model"

    def _key(self, config: Config) -> str:
        return self.context.space.key(config)

    # -- tell ------------------------------------------------------------------------------------
    def tell(self, trial: Trial, result: Result) -> None:
        key = self._key(trial.config)
        trials = self.pending.pop(key, None)
        if trials is None:
            trials = self._replayed(trial.config, key)
        if not trials:
            return
        loss = float(result.loss) if result.ok else math.inf
        self.losses[key] = loss
        first_finite = result.ok and self.worst_loss is None
        if result.ok:
            self.worst_loss = loss if self.worst_loss is None else max(self.worst_loss, loss)
        for optuna_trial in trials:
            self._tell_loss(optuna_trial, loss)
        if first_finite:
            held, self.held = self.held, []
            for optuna_trial in held:
                self._tell_loss(optuna_trial, math.inf)

    def _replayed(self, config: Config, key: str) -> list[OptunaTrial]:
        """Optuna trials for a result this instance did not ask for (a resumed run replays its
        history); none for a second result of the same configuration."""
        if key in self.proposed:
            log.warning("optuna-tpe: a second result for %s is ignored", dict(config))
            return []
        try:
            valid = self.context.space.validate(config)
        except InvalidConfigurationError as error:
            log.warning("optuna-tpe: ignoring a result outside the space: %s", error)
            return []
        self.proposed.add(key)
        return [self._trial_for(valid)]

    def _observe_again(self, key: str, trial: OptunaTrial) -> None:
        """TPE sampled a configuration proposed before: tell it the known loss, or tell it
        with the first when that comes."""
        if key in self.losses:
            self._tell_loss(trial, self.losses[key])
        else:
            self.pending[key].append(trial)

    def _tell_loss(self, trial: OptunaTrial, loss: float) -> None:
        if math.isfinite(loss):
            self.study.tell(trial, loss)
        elif self.worst_loss is not None:
            self.study.tell(trial, self.worst_loss)
        else:
            self.held.append(trial)
