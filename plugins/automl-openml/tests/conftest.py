"""Shared fixtures: an OpenML cache imported from the real API responses that ship in
scikit-learn's wheel, a forbidden network, and the expected values read straight from those
JSON responses (independently of the importer under test).

Every test runs with the network forbidden (:func:`network`): a test that expects no
connection asserts that the list of attempts is empty; the others see attempts fail at once.
"""

from __future__ import annotations

import socket
import sys
from pathlib import Path
from typing import Any

import pytest

# The plugin is importable before it is installed (pip install -e plugins/automl-openml), and
# so are the helpers beside this file.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from openml_testdata import SESSION_DATASETS, SKLEARN_OPENML

from automl_core.plugins import Plugins, load_plugins
from automl_openml import plugin
from automl_openml.importer import import_openml


@pytest.fixture(autouse=True)
def network(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Forbid name resolution and connections; return the list of attempts made."""
    attempts: list[str] = []

    def forbidden(name: str):
        def refuse(*args: Any, **kwargs: Any) -> Any:
            attempts.append(f"{name}{args[:2]}")
            raise OSError(f"network forbidden in tests ({name})")

        return refuse

    monkeypatch.setattr(socket, "getaddrinfo", forbidden("getaddrinfo"))
    monkeypatch.setattr(socket, "create_connection", forbidden("create_connection"))
    monkeypatch.setattr(socket.socket, "connect", forbidden("connect"))
    return attempts


@pytest.fixture(scope="session")
def openml_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An automl cache root whose OpenML cache was filled by the import."""
    root = tmp_path_factory.mktemp("automl-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("AUTOML_CACHE_DIR", str(root))
        result = import_openml([SKLEARN_OPENML / f"id_{i}" for i in SESSION_DATASETS])
    assert sorted(item.dataset_id for item in result.imported) == sorted(SESSION_DATASETS)
    return root


@pytest.fixture
def cache(openml_cache: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The session's imported cache as this test's $AUTOML_CACHE_DIR."""
    monkeypatch.setenv("AUTOML_CACHE_DIR", str(openml_cache))
    return openml_cache


@pytest.fixture
def empty_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh, empty $AUTOML_CACHE_DIR for tests that write or break files."""
    root = tmp_path / "automl-cache"
    monkeypatch.setenv("AUTOML_CACHE_DIR", str(root))
    return root


@pytest.fixture(scope="session")
def plugins() -> Plugins:
    """The core's defaults and this plugin; no installed plugins."""
    return load_plugins(extra=[plugin], entry_points=False)
