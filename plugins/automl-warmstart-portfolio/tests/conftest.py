"""Every test of this folder caches portfolios in a cache of its own.

The portfolio cache is part of what is under test (a second build must come from it), and
tests must neither read portfolios a user's runs left in the real cache nor leave theirs
there. The converted meta-data and downloaded packages are the real cache's, shared by
links: converting Oboe or LCDB again is not what is under test.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from automl_engine.cache import CACHE_DIR_ENV, cache_dir
from automl_warmstart_portfolio import starter


@pytest.fixture(autouse=True)
def own_portfolio_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh cache root whose ``metadata/`` and ``packages/`` are the real cache's, and
    an empty in-memory cache."""
    real = cache_dir()
    root = tmp_path / "automl-cache"
    root.mkdir()
    for shared in ("metadata", "packages"):
        (real / shared).mkdir(parents=True, exist_ok=True)
        (root / shared).symlink_to(real / shared, target_is_directory=True)
    monkeypatch.setenv(CACHE_DIR_ENV, str(root))
    monkeypatch.setattr(starter, "_MEMORY", {})
    return root
