"""Three small subclasses of SMAC3 components, each plugged in through the facade's arguments.

* :class:`WarmStartFirstSobolDesign` -- the warm start before the Sobol points, not after.
* :class:`OrderedStartLocalSearch` -- local search whose result does not depend on
  ``PYTHONHASHSEED`` (so the same seed proposes the same configurations in every process).
* :class:`SnappingConfigSelector` -- on a pool, turns every configuration SMAC selects into the
  nearest candidate not yet proposed, *before* SMAC records it as a trial.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from ConfigSpace import Configuration
from smac.acquisition.maximizer import LocalAndSortedRandomSearch, LocalSearch
from smac.initial_design import SobolInitialDesign
from smac.main.config_selector import ConfigSelector

#: The origin SMAC's initial design carries for the warm start's configurations.
WARM_START_ORIGIN = "automl-core warm start"


class WarmStartFirstSobolDesign(SobolInitialDesign):
    """SMAC's Sobol initial design, with its ``additional_configs`` (the warm start) evaluated
    *before* the Sobol points instead of after them: a warm start is the best guess there is,
    and it should not wait behind a space-filling design."""

    def select_configurations(self) -> list[Configuration]:
        configs = super().select_configurations()
        warm = [c for c in configs if c.origin == WARM_START_ORIGIN]
        return warm + [c for c in configs if c.origin != WARM_START_ORIGIN]


class OrderedStartLocalSearch(LocalSearch):
    """SMAC's local search with its start points in a reproducible order.

    SMAC 2.4 de-duplicates the start points through a ``set`` of configurations (since SMAC3
    pull request #1244), whose order follows string hashes and so changes with
    ``PYTHONHASHSEED``: the searches then draw from the random generator in another order and
    the same seed proposes different configurations in two processes. Sorting the points by
    their text makes the order depend on the configurations alone.
    """

    def _get_initial_points(self, *args: Any, **kwargs: Any) -> list[Configuration]:
        return sorted(super()._get_initial_points(*args, **kwargs), key=repr)


def reproducible(maximizer: LocalAndSortedRandomSearch) -> LocalAndSortedRandomSearch:
    """``maximizer`` with its local search's start points in a reproducible order."""
    local_search = getattr(maximizer, "_local_search", None)
    if type(local_search) is LocalSearch:  # only the class whose behaviour is known
        local_search.__class__ = OrderedStartLocalSearch
    return maximizer


class SnappingConfigSelector(ConfigSelector):
    """SMAC's configuration selector, with every selected configuration passed through ``snap``.

    On a pool, ``snap`` claims the nearest candidate not yet proposed and returns its encoding
    as a configuration of the box (``None`` once every candidate is claimed, which ends the
    selection). Doing this inside the selector means that ``smac.ask()`` already hands out the
    candidate, so SMAC's run history, random forest and incumbent all see the points that were
    really evaluated, and ``tell`` closes exactly the trial that was asked. (Telling a different
    configuration than the one asked leaves the asked trial "running" forever: SMAC has no way
    to withdraw it, and its intensifier compares every queued configuration with every running
    one on each ask, a cost that grows with the square of the trials.)
    """

    def __init__(
        self,
        *args: Any,
        snap: Callable[[Configuration], Configuration | None],
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self._snap = snap

    def __iter__(self) -> Iterator[Configuration]:
        for proposal in super().__iter__():
            snapped = self._snap(proposal)
            if snapped is None:
                return
            snapped.origin = proposal.origin
            yield snapped
