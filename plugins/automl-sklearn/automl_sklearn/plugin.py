"""The automl-core plugin: registers auto-sklearn's pipeline components and its two spaces.

Found through the ``automl_core`` entry point ``sklearn``; every component is registered as
``<stage>:<name>`` (e.g. ``classifier:random_forest``).
"""

from __future__ import annotations

from automl_core import hookimpl
from automl_core.hookspecs import RegisterComponent, RegisterFactory
from automl_core.space import PipelineComponent, SearchSpace
from automl_sklearn.classifiers import CLASSIFIERS
from automl_sklearn.data_preprocessing import (
    BALANCINGS,
    CATEGORICAL_ENCODINGS,
    CATEGORY_COALESCENCES,
    IMPUTATIONS,
    RESCALINGS,
)
from automl_sklearn.feature_preprocessors import FEATURE_PREPROCESSORS
from automl_sklearn.regressors import REGRESSORS
from automl_sklearn.spaces import classification_space, regression_space

#: Every component of this plugin, stage by stage in pipeline order.
COMPONENTS: tuple[PipelineComponent, ...] = (
    *CATEGORICAL_ENCODINGS,
    *CATEGORY_COALESCENCES,
    *IMPUTATIONS,
    *RESCALINGS,
    *BALANCINGS,
    *FEATURE_PREPROCESSORS,
    *CLASSIFIERS,
    *REGRESSORS,
)

#: The automl-core plugin API this plugin is written for (automl_core.plugins.PLUGIN_API).
AUTOML_PLUGIN_API = 1

#: The spaces, by registered name.
SPACES = {
    "autosklearn-classification": classification_space,
    "autosklearn-regression": regression_space,
}


@hookimpl
def register_components(register: RegisterComponent) -> None:
    for component in COMPONENTS:
        register(component)


@hookimpl
def register_spaces(register: RegisterFactory[SearchSpace]) -> None:
    for name, factory in SPACES.items():
        register(name, factory)
