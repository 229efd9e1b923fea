"""What the run loop proposes: the warm start's configurations first, then the strategy's,
never a configuration the run already tried at that budget.

Both rules belong to the loop, not to each strategy (as Optuna's ``enqueue_trial`` and
SMAC's run history do): written once here, a strategy neither queues the warm start nor
guards the run against its own repeats. A strategy that places the warm start itself
(``SearchStrategy.serves_warm_start``: successive halving races it at its lowest budget)
gets nothing served.
"""

from __future__ import annotations

import logging
import traceback
from collections.abc import Sequence
from typing import Any

from automl_core.contracts import WARM_START_ORIGIN, SearchContext, SearchStrategy
from automl_core.errors import AutoMLError
from automl_core.space import SearchSpace
from automl_core.trial import Candidate, Config, Trial

log = logging.getLogger(__name__)

#: Proposals refused in a row (each a configuration already tried) after which the strategy
#: is taken to have nothing new left: the search ends as when ``ask`` returns None.
MAX_REFUSED_IN_A_ROW = 100


class StrategyError(AutoMLError):
    """A plugin component raised inside the loop."""


def call_plugin(what: str, method: str, function: Any, *args: Any) -> Any:
    """``function(*args)``; an exception becomes a :class:`StrategyError` naming ``what``
    raised in ``method``, with its traceback."""
    try:
        return function(*args)
    except Exception as error:
        raise StrategyError(
            f"the {what} raised in {method}(): {type(error).__name__}: {error}\n"
            + "".join(traceback.format_exception(type(error), error, error.__traceback__))
        ) from error


class Proposals:
    """The run's source of candidates: ``served`` configurations first, in order, then the
    strategy's asks; a candidate whose configuration and budget the run already proposed is
    refused (a served one silently, a strategy's with a warning) and the strategy asked
    again.

    ``ended`` says why :meth:`ask` returned None: the strategy had nothing left, or it
    proposed only repeats ``MAX_REFUSED_IN_A_ROW`` times in a row.
    """

    def __init__(
        self, strategy: SearchStrategy, space: SearchSpace, served: Sequence[Config] = ()
    ) -> None:
        self.strategy = strategy
        self.space = space
        self.queue = [Candidate(config, origin=WARM_START_ORIGIN) for config in served]
        self.tried: set[tuple[str, float | None]] = set()
        #: the strategy's proposals refused as repeats, over the run
        self.refused = 0
        self.ended = ""

    def ask(self) -> Candidate | None:
        """The next candidate to run, or None when there is none left."""
        while self.queue:
            candidate = self.queue.pop(0)
            if self._claim(candidate.config, candidate.budget):
                return candidate
        for _ in range(MAX_REFUSED_IN_A_ROW):
            candidate = call_plugin("search strategy", "ask", self.strategy.ask)
            if candidate is None:
                self.ended = "search space exhausted"
                return None
            if self._claim(candidate.config, candidate.budget):
                return candidate
            self._refuse(candidate)
        self.ended = (
            f"search space exhausted: the search strategy proposed {MAX_REFUSED_IN_A_ROW} "
            "configurations in a row that the run had already tried"
        )
        return None

    def mark_tried(self, trial: Trial) -> None:
        """A trial the run ran without asking for it here (a result replayed on resume):
        neither served nor accepted from the strategy again."""
        self._claim(trial.config, trial.budget)

    def _claim(self, config: Config, budget: float | None) -> bool:
        key = (self.space.key(config), budget)
        if key in self.tried:
            return False
        self.tried.add(key)
        return True

    def _refuse(self, candidate: Candidate) -> None:
        self.refused += 1
        if self.refused == 1:
            log.warning(
                "the search strategy %s proposed a configuration the run had already tried "
                "(origin %r); it is asked again (repeats are never run twice)",
                type(self.strategy).__name__,
                candidate.origin,
            )


def start(strategy: SearchStrategy, context: SearchContext) -> Proposals:
    """Set ``strategy`` up on ``context`` and return the run's proposals: the warm start's
    valid configurations first (unless the strategy places them itself; it is told how
    many, ``SearchContext.served_first``), then the strategy's."""
    served = [] if strategy.serves_warm_start else context.warm_start_configs()
    context.served_first = len(served)
    strategy.setup(context)
    return Proposals(strategy, context.space, served)
