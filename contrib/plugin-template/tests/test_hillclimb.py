"""The template's own tests: run them with the plugin installed (pip install -e .)."""

import numpy as np
import pytest

from automl_core.contracts import SearchContext
from automl_core.trial import Result, Status, Trial
from automl_engine.testing import Component, parametrize_with_checks
from automl_hillclimb.strategy import HillClimbing
from automl_spaces.pool_space import PoolSpace


def line() -> PoolSpace:
    """Points 0..99 on a line, as a pool: a point's nearest neighbours are +-1; the loss
    (below) is the distance to 70."""
    return PoolSpace("line", np.arange(100.0)[:, None])


def test_climbs_to_the_optimum():
    strategy = HillClimbing(restart_probability=0.0)
    strategy.setup(SearchContext(space=line(), seed=0))
    for trial_id in range(200):
        best_before = strategy.best
        candidate = strategy.ask()
        if candidate is None:  # every point proposed
            break
        if best_before is not None:  # without restarts, every step is next to the best
            assert candidate.origin == "neighbour"
            assert abs(candidate.config["candidate"] - best_before[1]["candidate"]) == 1
        loss = abs(candidate.config["candidate"] - 70)
        strategy.tell(Trial(trial_id, candidate.config), Result(Status.OK, float(loss)))
        if loss == 0:
            break
    assert strategy.best == (0.0, {"candidate": 70})


def test_a_space_without_the_typed_protocol_is_refused_with_what_it_lacks():
    class ConfigsOnly:
        def sample(self, rng, n):
            return [{"x": int(v)} for v in rng.integers(0, 100, n)]

    with pytest.raises(TypeError, match=r"hillclimb .* lacks columns"):
        HillClimbing().setup(SearchContext(space=ConfigsOnly(), seed=0))


# The conformance kit: every rule of the SearchStrategy contract the run loop relies on.
@parametrize_with_checks([Component("search_strategy", "hillclimb", factory=HillClimbing)])
def test_conformance(component, check):
    check(component)
