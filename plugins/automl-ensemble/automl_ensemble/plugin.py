"""Registers the ``caruana`` ensembler."""

from __future__ import annotations

from collections.abc import Callable

from automl_core import hookimpl
from automl_ensemble.caruana import CaruanaEnsemble


@hookimpl
def register_ensemblers(register: Callable[..., None]) -> None:
    register(
        "caruana",
        CaruanaEnsemble,
        "Caruana et al. 2004 ensemble selection: greedy forward selection with replacement "
        "of `size` members from the best trials' out-of-sample predictions (auto-sklearn's)",
    )
