"""Fixtures for the ptem warm-starter's tests; the package is importable from a checkout too."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


@pytest.fixture(autouse=True)
def own_cache(tmp_path, monkeypatch):
    """PTEMs, labels and rankers go to a fresh cache folder per test."""
    monkeypatch.setenv("AUTOML_CACHE_DIR", str(tmp_path / "cache"))
