"""Lets the tests run from a checkout without installing the plugin first (the entry-point
tests need it installed). The datasets and the ``system_plugins`` fixture the tests use are in
``contrib/conftest.py``, the checks in ``contrib/system_checks.py``."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


@pytest.fixture(scope="module")
def system_distribution() -> str:
    """This distribution, loaded through its entry point by ``system_plugins``."""
    return "automl-tpot"


@pytest.fixture(autouse=True)
def _dask_learns_its_address_without_the_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """TPOT's in-process Dask cluster names its addresses after the machine's IP, which Dask
    learns by pointing a UDP socket at 8.8.8.8; the tests allow no socket off the loopback
    interface (pytest-socket), so the address is the one Dask falls back to offline."""
    monkeypatch.setattr("distributed.comm.inproc.get_ip", lambda *args, **kwargs: "127.0.0.1")
