"""Lets the tests run from a checkout without installing the plugin first (the entry-point
tests need it installed). The datasets and the ``system_plugins`` fixture the tests use are in
``contrib/conftest.py``, the checks in ``contrib/system_checks.py``.

AutoGluon itself runs in its own environment (``make autogluon-env``): the tests that need it
ask for ``autogluon_python`` and are skipped, with the reason, where it does not exist. The
others replace the worker's interpreter by ``fake_python``, a shell script: a test double of
the subprocess (it sleeps, fails or records its job), never of AutoGluon's results."""

from __future__ import annotations

import stat
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from automl_autogluon.system import find_python
from automl_core.errors import PluginError

#: The fake interpreter: called as ``fake -I worker.py FOLDER``; $FAKE_MODE says what it does.
FAKE_PYTHON = r"""#!/bin/bash
folder="$3"
case "$FAKE_MODE" in
  sleep)          # a worker that never ends, with a child of its own
    [ -n "$FAKE_IGNORE_TERM" ] && trap '' TERM
    sleep 300 &
    echo $! > "$FAKE_PID_FILE"
    while true; do wait; done ;;
  fail)           # a worker that crashes
    echo "Traceback (most recent call last):" >&2
    echo "  File \"worker.py\", line 1, in <module>" >&2
    echo "$FAKE_MESSAGE" >&2
    exit 1 ;;
  silent)         # a worker that ends well without a result
    echo "done, but no result" >&2
    exit 0 ;;
  record)         # a worker that keeps its job and frames, then fails
    cp "$folder"/job.json "$folder"/train.json "$FAKE_RECORD"/
    echo "recorded" >&2
    exit 1 ;;
esac
echo "unknown FAKE_MODE $FAKE_MODE" >&2
exit 2
"""


@pytest.fixture(scope="module")
def system_distribution() -> str:
    """This distribution, loaded through its entry point by ``system_plugins``."""
    return "automl-autogluon"


@pytest.fixture
def fake_python(tmp_path: Path) -> Path:
    path = tmp_path / "fake-python"
    path.write_text(FAKE_PYTHON)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


@pytest.fixture(scope="session")
def autogluon_python() -> Path:
    """AutoGluon's interpreter; the test is skipped, with the reason, without it."""
    try:
        return find_python()
    except PluginError as error:
        pytest.skip(f"needs AutoGluon's environment: {error}")
