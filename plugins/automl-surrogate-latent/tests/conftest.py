"""Fixtures for the latent surrogate's tests; the package is importable from a checkout too."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


@pytest.fixture(autouse=True)
def own_cache(tmp_path, monkeypatch):
    """PTEMs go to a fresh cache folder per test."""
    monkeypatch.setenv("AUTOML_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture(autouse=True)
def one_torch_thread():
    """Pre-training and fitting on one thread, as a run does them (the surrogate's
    ``threads``): torch's default of every core added in another order (the adversarial
    test's accuracies crossed its threshold when it ran alone on the 2-core VM, after
    passing behind tests that had set one thread), and beside other work on the same cores
    it ran a pre-training 22 times slower (a test hit its 300 s timeout)."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
