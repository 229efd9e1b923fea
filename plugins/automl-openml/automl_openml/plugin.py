"""The automl-core plugin: the ``openml`` and ``openml-task`` dataset sources and the
``import-openml`` data command.

Found through the ``automl_core`` entry point ``openml``. Nothing here imports the
``openml`` package: it is imported on the first load, because it takes about 1.5 s.
"""

from __future__ import annotations

from collections.abc import Callable

from automl_core import hookimpl
from automl_core.errors import DatasetError
from automl_core.hookspecs import RegisterCommand, RegisterFactory
from automl_engine.dataset import Dataset
from automl_engine.sources import CheckedSource
from automl_openml.importer import IMPORT_HELP, configure_import, run_import
from automl_openml.sources import load_openml, load_openml_task, parse_id

#: The automl-core plugin API this plugin is written for (automl_core.plugins.PLUGIN_API).
AUTOML_PLUGIN_API = 1


@hookimpl
def register_dataset_sources(register: RegisterFactory[Dataset]) -> None:
    """Register ``openml`` (a dataset by id) and ``openml-task`` (a task by id)."""
    register(
        "openml",
        CheckedSource(load_openml, _id_problem("openml", "dataset")),
        "an OpenML dataset by id, with its default target, read from the local openml cache",
    )
    register(
        "openml-task",
        CheckedSource(load_openml_task, _id_problem("openml-task", "task")),
        "an OpenML task by id: its dataset and target; its first split in info['openml_split']",
    )


def _id_problem(source: str, kind: str) -> Callable[[str], str | None]:
    """``automl validate``'s check of a reference: an OpenML id (whether the data is cached
    or can be downloaded is found when the run loads it)."""

    def problem(reference: str) -> str | None:
        try:
            parse_id(reference, source, kind)
        except DatasetError as error:
            return str(error)
        return None

    return problem


@hookimpl
def register_commands(register: RegisterCommand) -> None:
    """Register ``automl data import-openml DIR``."""
    register("data import-openml", configure_import, run_import, help=IMPORT_HELP)
