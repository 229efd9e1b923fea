"""Declaring pipeline components next to the function that builds them."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable
from typing import Any

from ConfigSpace import ConfigurationSpace

from automl_core.space import BuildContext, Iterations, PipelineComponent

Build = Callable[[dict[str, Any], BuildContext], Any]

TASKS = frozenset({"classification", "regression"})


class ComponentList(list[PipelineComponent]):
    """The components of one stage, filled by decorating build functions::

    CLASSIFIERS = ComponentList("classifier", {"classification"})

    @CLASSIFIERS.add("gaussian_nb")
    def gaussian_nb(params, context):
        '''Gaussian naive Bayes.'''   # the first line becomes the description
        return GaussianNB()
    """

    def __init__(self, stage: str, tasks: Iterable[str] = TASKS) -> None:
        super().__init__()
        self.stage = stage
        self.tasks = frozenset(tasks)

    def add(
        self,
        name: str,
        hyperparameters: Callable[[], ConfigurationSpace] = ConfigurationSpace,
        *,
        tasks: Iterable[str] | None = None,
        iterations: Iterations | None = None,
    ) -> Callable[[Build], Build]:
        def declare(build: Build) -> Build:
            description = (inspect.getdoc(build) or "").split("\n\n")[0].replace("\n", " ")
            self.append(
                PipelineComponent(
                    name=name,
                    stage=self.stage,
                    build=build,
                    hyperparameters=hyperparameters,
                    tasks=frozenset(tasks) if tasks is not None else self.tasks,
                    description=description,
                    iterations=iterations,
                )
            )
            return build

        return declare

    def names(self) -> list[str]:
        return [component.name for component in self]
