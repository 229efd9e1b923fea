"""What every test of the repository shares: the developer's environment does not reach it.

``AUTOML_LOAD_PLUGINS`` restricts which installed plugins load (a developer trying their
plugin alone sets it); left set, it would make every test that loads the installed plugins
see fewer of them and fail or skip for no fault of the code. Tests that need it set it
themselves (``monkeypatch.setenv``)."""

from __future__ import annotations

import pytest

from automl_core.plugins import LOAD_PLUGINS_ENV

pytest_plugins = ("pytester",)  # tests/test_conftest.py runs this file's rules in a sandbox


@pytest.fixture(autouse=True)
def _no_plugin_filter_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(LOAD_PLUGINS_ENV, raising=False)


#: How ``pytest.importorskip`` words the skip of a package it could not import; the
#: repository's own packages are named ``automl_*``.
OWN_PACKAGE_MISSING = "could not import 'automl_"


def _turn_own_package_skip_into_failure(report: pytest.CollectReport | pytest.TestReport) -> None:
    """A test or module skipped because a package of this repository cannot be imported is a
    failure: the tests run where ``make install`` installed every package, so a missing or
    broken one is a broken install, which must not look green. Third-party packages (optional
    peers such as flaml or smac) may still skip."""
    if report.skipped and OWN_PACKAGE_MISSING in str(report.longrepr):
        report.outcome = "failed"
        report.longrepr = (
            f"{report.longrepr}\nA package of this repository could not be imported: the "
            "install is incomplete or broken (make install)"
        )


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):  # type: ignore[no-untyped-def]
    outcome = yield
    _turn_own_package_skip_into_failure(outcome.get_result())


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector):  # type: ignore[no-untyped-def]
    outcome = yield
    _turn_own_package_skip_into_failure(outcome.get_result())
