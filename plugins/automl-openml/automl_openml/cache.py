"""Where the OpenML files live, and how the ``openml`` package is pointed at them.

openml-python keeps one folder per server under its cache root (``org/openml/www`` for
www.openml.org) with ``datasets/<id>/`` and ``tasks/<id>/`` below it. This plugin gives the
package a root inside the framework's cache, ``<automl cache>/openml``, so that
``$AUTOML_CACHE_DIR`` moves it along with everything else and the user's own openml
configuration (``~/.config/openml/config``, their cache) is neither read for paths nor
written.

openml keeps its configuration in module globals, so :func:`openml_configured` sets them
only for the duration of one load and restores them afterwards; a lock serialises the
plugin's own loads (openml's cache functions are not thread-safe anyway).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from automl_engine.cache import cache_dir

#: The server whose files the cache holds; it also names the cache sub-folder openml uses
#: (``org/openml/www``), whatever server the user's own openml configuration names.
OPENML_SERVER = "https://www.openml.org/api/v1/xml"

#: What one dataset folder holds, as openml 0.15 writes and reads it.
DESCRIPTION_FILE = "description.xml"
FEATURES_FILE = "features.xml"
QUALITIES_FILE = "qualities.xml"
ARFF_FILE = "dataset.arff"
#: Tasks: the task description and its splits.
TASK_FILE = "task.xml"
SPLITS_FILE = "datasplits.arff"

_CONFIG_LOCK = threading.RLock()


def openml_root() -> Path:
    """The root handed to openml as its cache directory: ``<automl cache>/openml``."""
    return cache_dir() / "openml"


def parquet_file_name(dataset_id: int) -> str:
    """openml 0.15 stores a downloaded parquet file as ``dataset_<id>.pq``."""
    return f"dataset_{dataset_id}.pq"


@contextlib.contextmanager
def openml_configured(root: Path | None = None, *, retries: int = 1) -> Iterator[Any]:
    """Point the ``openml`` package at ``root`` (default :func:`openml_root`) and the public
    server, with ``retries`` connection attempts; restore its settings on exit.

    Yields the imported ``openml`` module. One attempt by default: the package retries a
    failed connection five times with growing pauses, which only delays the error on a
    machine without network.
    """
    import openml  # imported here: it takes about 1.5 s (it imports scikit-learn)

    with _CONFIG_LOCK:
        config = openml.config
        saved_root = config.get_config_as_dict()["cachedir"]
        saved = (config.server, config.retry_policy, config.connection_n_retries)
        config.set_root_cache_directory(root if root is not None else openml_root())
        config.server = OPENML_SERVER
        config.set_retry_policy("human", retries)
        try:
            yield openml
        finally:
            config.set_root_cache_directory(saved_root)
            config.server = saved[0]
            config.set_retry_policy(saved[1], saved[2])


def dataset_folder(openml: Any, dataset_id: int) -> Path:
    """The folder openml reads dataset ``dataset_id`` from, under the configured root.

    Asked of the package itself (inside :func:`openml_configured`), so the layout is by
    construction the one it reads.
    """
    from openml.datasets.functions import DATASETS_CACHE_DIR_NAME

    return Path(openml.config.get_cache_directory()) / DATASETS_CACHE_DIR_NAME / str(dataset_id)


def task_folder(openml: Any, task_id: int) -> Path:
    """The folder openml reads task ``task_id`` (``task.xml``, ``datasplits.arff``) from."""
    from openml.tasks.functions import TASKS_CACHE_DIR_NAME

    return Path(openml.config.get_cache_directory()) / TASKS_CACHE_DIR_NAME / str(task_id)
