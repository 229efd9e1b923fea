"""A CARP-S task's configuration space as a space our strategies search, and back.

Our strategies search pipeline spaces (encoded rows, a surrogate's columns); a CARP-S task
hands a plain ``ConfigurationSpace`` (BBOB: ``x0`` .. ``x{d-1}`` in [-5, 5]). The task's
space becomes one stage with one component whose hyper-parameters are the task's own, so a
configuration of ours is the task's values under the stage's prefix (``task:x0``). Nothing
here imports CARP-S: the conversion is tested where CARP-S is not installed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ConfigSpace import ConfigurationSpace

from automl_core.space import PipelineComponent, Stage
from automl_spaces.pipeline_space import PipelineSpace

#: The stage (and prefix) under which the task's hyper-parameters are searched.
STAGE = "task"
PREFIX = f"{STAGE}:"


def task_space(configspace: ConfigurationSpace, name: str = "carps-task") -> PipelineSpace:
    """The task's ``configspace`` as a one-stage pipeline space. Conditions and forbidden
    clauses come along with the hyper-parameters; the pipeline space copies them into a space
    of its own, so the task's is never changed."""
    component = PipelineComponent(
        "objective", STAGE, lambda params, context: params, lambda: configspace
    )
    stage = Stage(STAGE, (component,), choice=False)
    return PipelineSpace(name, "regression", (stage,), assemble=lambda config, context: None)


def task_values(config: Mapping[str, Any]) -> dict[str, Any]:
    """The task's values of one of our configurations (the stage's prefix taken off)."""
    return {key.removeprefix(PREFIX): value for key, value in config.items()}


def our_config(values: Mapping[str, Any]) -> dict[str, Any]:
    """One of our configurations for the task's ``values`` (told results of trials the
    task chose, e.g. a replayed history)."""
    return {f"{PREFIX}{key}": value for key, value in values.items()}
