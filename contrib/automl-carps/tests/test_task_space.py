"""A CARP-S task's space searched by our strategies (no CARP-S needed): every configuration
a strategy proposes is a valid configuration of the task's own space, conditions included."""

from __future__ import annotations

from ConfigSpace import (
    Categorical,
    Configuration,
    ConfigurationSpace,
    EqualsCondition,
    Float,
    Integer,
)

from automl_carps.space import our_config, task_space, task_values
from automl_core.contracts import SearchContext
from automl_core.plugins import load_plugins
from automl_core.trial import Result, Status, Trial


def conditional_space() -> ConfigurationSpace:
    space = ConfigurationSpace(
        {
            "x": Float("x", (-5.0, 5.0)),
            "depth": Integer("depth", (1, 8)),
            "kernel": Categorical("kernel", ["linear", "rbf"]),
            "gamma": Float("gamma", (1e-3, 10.0), log=True),
        }
    )
    space.add(EqualsCondition(space["gamma"], space["kernel"], "rbf"))
    return space


def test_a_strategys_proposals_are_configurations_of_the_tasks_space():
    task = conditional_space()
    strategy = load_plugins().create("search_strategy", "random")
    strategy.setup(SearchContext(space=task_space(task), seed=0))
    kernels = set()
    for i in range(20):
        candidate = strategy.ask()
        values = task_values(candidate.config)
        configuration = Configuration(task, values=values)  # raises if not valid
        configuration.check_valid_configuration()
        kernels.add(values["kernel"])
        assert ("gamma" in values) == (values["kernel"] == "rbf")
        assert our_config(values) == dict(candidate.config)
        strategy.tell(Trial(i, candidate.config), Result(Status.OK, float(values["x"]) ** 2))
    assert kernels == {"linear", "rbf"}


def test_the_tasks_space_is_left_as_it_was():
    task = conditional_space()
    before = list(task.values())
    task_space(task).configspace.add(Float("extra", (0.0, 1.0)))
    assert list(task.values()) == before
