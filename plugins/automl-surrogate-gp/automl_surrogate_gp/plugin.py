"""The module named by the ``automl_core`` entry point ``surrogate-gp``: it only registers."""

from __future__ import annotations

from automl_core import hookimpl, lazy
from automl_core.contracts import Surrogate
from automl_core.hookspecs import RegisterFactory

#: The automl-core plugin API this plugin is written for (automl_core.plugins.PLUGIN_API).
AUTOML_PLUGIN_API = 1


@hookimpl
def register_surrogates(register: RegisterFactory[Surrogate]) -> None:
    register(
        "gp",
        lazy("automl_surrogate_gp.surrogate:GPSurrogate"),
        description="Exact Gaussian process (gpytorch): constant mean, ARD Matern-5/2 kernel, "
        "one-hot categoricals, hyper-parameters by marginal likelihood",
    )
