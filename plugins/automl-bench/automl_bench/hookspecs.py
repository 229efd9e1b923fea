"""The hooks automl-bench adds (through the core's ``add_hookspecs``): a core installed
without automl-bench knows nothing of suites or systems.

Plugins that register suites or systems without depending on automl-bench (the meta-data
plugin's table-lookup suites) mark their implementation ``@hookimpl(optionalhook=True)``.
"""

from __future__ import annotations

from automl_bench.contracts import System
from automl_core.hookspecs import RegisterDocument, RegisterFactory, registration


@registration("system")
def register_systems(register: RegisterFactory[System]) -> None:
    """Register :class:`~automl_bench.contracts.System` factories: whole AutoML systems run
    as baselines beside the recipes of an ablation (``automl ablate --peer flaml``)."""


@registration("suite", document=True)
def register_suites(register: RegisterDocument) -> None:
    """Register named suites: ``register(name, suite, description="")``, where ``suite`` is
    a mapping (a suite's YAML content: its ``tasks``) or the path of a YAML file, read when
    registered. ``automl ablate --suite NAME`` runs a recipe on every task of the suite; see
    :mod:`automl_bench.suites`."""
