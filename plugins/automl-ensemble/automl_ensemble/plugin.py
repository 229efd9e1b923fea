"""Registers the ``caruana`` ensembler."""

from __future__ import annotations

from automl_core import hookimpl
from automl_core.contracts import Ensembler
from automl_core.hookspecs import RegisterFactory
from automl_ensemble.caruana import CaruanaEnsemble

#: The automl-core plugin API this plugin is written for (automl_core.plugins.PLUGIN_API).
AUTOML_PLUGIN_API = 1


@hookimpl
def register_ensemblers(register: RegisterFactory[Ensembler]) -> None:
    register(
        "caruana",
        CaruanaEnsemble,
        "Caruana et al. 2004 ensemble selection: greedy forward selection with replacement "
        "of `size` members from the best trials' out-of-sample predictions (auto-sklearn's)",
    )
