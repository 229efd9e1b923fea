"""What every test of the repository shares: the developer's environment does not reach it.

``AUTOML_LOAD_PLUGINS`` restricts which installed plugins load (a developer trying their
plugin alone sets it); left set, it would make every test that loads the installed plugins
see fewer of them and fail or skip for no fault of the code. Tests that need it set it
themselves (``monkeypatch.setenv``)."""

from __future__ import annotations

import pytest

from automl_core.plugins import LOAD_PLUGINS_ENV


@pytest.fixture(autouse=True)
def _no_plugin_filter_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(LOAD_PLUGINS_ENV, raising=False)
