"""The sources' tests convert the raw packages themselves, once per test session.

``MetaDataSource.load()`` reads a folder converted earlier when there is one, and on a
machine that has run anything before there always is: the tests would then check the cache,
never ``build()``. They run instead against a cache of their own, empty of conversions, that
shares the downloaded packages (downloading is not what is under test, and the network
reaches only package registries).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from automl_engine.cache import CACHE_DIR_ENV, cache_dir


@pytest.fixture(scope="session")
def fresh_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A cache root with no converted meta-data, its ``packages/`` the real cache's."""
    packages = cache_dir() / "packages"
    packages.mkdir(parents=True, exist_ok=True)
    root = tmp_path_factory.mktemp("automl-cache")
    (root / "packages").symlink_to(packages, target_is_directory=True)
    return root


@pytest.fixture(scope="module", autouse=True)
def converting_afresh(fresh_cache: Path):
    """Every test of this folder uses the fresh cache (module by module, so that the tests
    of other plugins in the same session keep the real one)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(CACHE_DIR_ENV, str(fresh_cache))
        yield
