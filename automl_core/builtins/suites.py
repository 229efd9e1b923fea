"""The core's named suites: every ``*.yaml`` file of ``automl_core/suites/``, by file name.

Registered through ``register_suites`` like a plugin's (the table-lookup suites come with
the meta-data plugin that owns those benchmarks); adding a suite is adding a file.
"""

from __future__ import annotations

from pathlib import Path

from automl_core.builtins.recipes import description
from automl_core.hookspecs import RegisterDocument, hookimpl

#: The packaged suite files (package data of automl-core).
SUITES_DIR = Path(__file__).resolve().parent.parent / "suites"


@hookimpl
def register_suites(register: RegisterDocument) -> None:
    """Register ``keel-small``, ``keel-all``, ``keel-mosaic10`` and any other packaged suite."""
    for path in sorted(SUITES_DIR.glob("*.yaml")):
        register(path.stem, path, description(path))
