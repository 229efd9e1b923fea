"""The template's own tests: run them with the plugin installed (pip install -e .)."""

from automl_core.contracts import SearchContext
from automl_core.trial import Result, Status, Trial
from automl_hillclimb.strategy import HillClimbing


class LineSpace:
    """Integers 0..99; neighbours are +-1; loss is the distance to 70."""

    def sample(self, rng, n):
        return [{"x": int(v)} for v in rng.integers(0, 100, n)]

    def neighbours(self, config, rng, n=4):
        return [{"x": v} for v in (config["x"] - 1, config["x"] + 1) if 0 <= v < 100]

    def key(self, config):
        return str(config["x"])


def test_climbs_to_the_optimum():
    strategy = HillClimbing(restart_probability=0.0)
    strategy.setup(SearchContext(space=LineSpace(), seed=0))
    for trial_id in range(200):
        best_before = strategy.best
        candidate = strategy.ask()
        if candidate is None:  # every point proposed
            break
        if best_before is not None:  # without restarts, every step is next to the best
            assert candidate.origin == "neighbour"
            assert abs(candidate.config["x"] - best_before[1]["x"]) == 1
        loss = abs(candidate.config["x"] - 70)
        strategy.tell(Trial(trial_id, candidate.config), Result(Status.OK, float(loss)))
        if loss == 0:
            break
    assert strategy.best == (0.0, {"x": 70})
