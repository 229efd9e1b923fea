"""The automl-core plugin: registers ``classifier:catboost`` and ``regressor:catboost``.

Found through the ``automl_core`` entry point ``catboost``. The components join every space
built from the registered components whose stages they name: automl-sklearn's
``autosklearn-classification`` and ``autosklearn-regression`` (see
:mod:`automl_catboost.components`).
"""

from __future__ import annotations

from automl_catboost.components import COMPONENTS
from automl_core import hookimpl
from automl_core.hookspecs import RegisterComponent

#: The automl-core plugin API this plugin is written for (automl_core.plugins.PLUGIN_API).
AUTOML_PLUGIN_API = 1

#: What a fitted pipeline of these components holds beyond what skops trusts by itself and
#: what the other stages' plugin declares, as ``skops.io.get_untrusted_types`` names it
#: (``automl_engine.model_trust``): this plugin's estimators and the CatBoost model each keeps
#: in ``model_``. CatBoost's models save as their parameters (strings and numbers) and the
#: model in CatBoost's binary format (bytes), so nothing else is named. Found by saving
#: fitted binary, three-class and regression pipelines at the defaults and at the ends of
#: every range; ``tests/test_model_trust.py`` and this plugin's tests keep it complete.
TRUSTED_MODEL_TYPES: tuple[str, ...] = (
    "automl_catboost.estimators.CatBoostClassifier",
    "automl_catboost.estimators.CatBoostRegressor",
    "catboost.core.CatBoostClassifier",
    "catboost.core.CatBoostRegressor",
)


@hookimpl
def register_components(register: RegisterComponent) -> None:
    for component in COMPONENTS:
        register(component)


@hookimpl
def trusted_model_types() -> tuple[str, ...]:
    return TRUSTED_MODEL_TYPES
