"""automl-bench's plugin module (entry point ``bench``): its hook specs, the ``ablate`` and
``compare`` commands, and the packaged suites."""

from __future__ import annotations

from pathlib import Path

from automl_bench import cli, hookspecs
from automl_core import hookimpl
from automl_core.hookspecs import AddHookspecs, RegisterCommand, RegisterDocument

#: The automl-core plugin API this plugin is written for (automl_core.plugins.PLUGIN_API).
AUTOML_PLUGIN_API = 1

#: The packaged suite files, registered by file name.
SUITES_DIR = Path(__file__).resolve().parent / "suite_files"


@hookimpl
def add_hookspecs(add: AddHookspecs) -> None:
    add(hookspecs)


@hookimpl
def register_commands(register: RegisterCommand) -> None:
    register(
        "ablate",
        cli.configure_ablate,
        cli.cmd_ablate,
        help="run a recipe's variants (and peer systems) on every task of a suite and seed",
    )
    register(
        "compare",
        cli.configure_compare,
        cli.cmd_compare,
        help="report of an ablation: ranks, tests, curves, critical differences",
    )


@hookimpl
def register_suites(register: RegisterDocument) -> None:
    """Register ``keel-small``, ``keel-all``, ``keel-mosaic10``, ``quality-classification``
    and any other packaged suite file (its description: the file's first comment line)."""
    for path in sorted(SUITES_DIR.glob("*.yaml")):
        register(path.stem, path, _first_comment(path))


def _first_comment(path: Path) -> str:
    with path.open(encoding="utf-8") as lines:
        first = lines.readline().strip()
    return first.lstrip("#").strip() if first.startswith("#") else ""
