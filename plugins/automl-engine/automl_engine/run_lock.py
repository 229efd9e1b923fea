"""One writer per run folder: an operating-system lock on a file inside it.

Two runs into one folder would interleave their trials in one history, and a ``resume`` of a
run that is still going would evaluate its trials twice. A run therefore holds an exclusive
``flock`` on :data:`LOCK_FILE` from before it looks at the folder until it has saved its
model. The operating system drops the lock when the process ends in any way (``kill -9``
included), so a crashed run can always be resumed: the file left behind is not the lock, the
lock is. The file holds who took it (pid, host, start time, command) for the refusal's
message only.

Child processes forked while the lock is held (the ``processes`` executor's workers) get a
copy of its descriptor; each child closes its copy at once, so a trial still running after
its driver was killed cannot keep the folder locked.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sys
import time
from pathlib import Path
from types import TracebackType

from automl_core.errors import AutoMLError

try:  # POSIX; elsewhere runs are not locked (see RunFolderLock)
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

LOCK_FILE = "run.lock"

#: Descriptors of the locks this process holds, closed in every forked child.
_HELD: set[int] = set()


def _close_in_child() -> None:
    for descriptor in list(_HELD):
        with contextlib.suppress(OSError):
            os.close(descriptor)
    _HELD.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_close_in_child)


class RunFolderBusy(AutoMLError):
    """Another live process holds the run folder."""


class RunFolderLock:
    """``with RunFolderLock(run_dir):`` the caller is the folder's only writer, or
    :class:`RunFolderBusy` says who is. The folder is created if needed."""

    def __init__(self, run_dir: str | Path) -> None:
        self.run_dir = Path(run_dir)
        self.path = self.run_dir / LOCK_FILE
        self._descriptor: int | None = None

    def acquire(self) -> RunFolderLock:
        if fcntl is None:  # pragma: no cover - no flock: one writer is the user's to keep
            return self
        self.run_dir.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(descriptor)
            raise RunFolderBusy(
                f"{self.run_dir} is in use by another run ({holder(self.run_dir)}); a run "
                "folder has one writer. Wait for that run to end (or stop it), then resume "
                "it; or run into another folder (--out)"
            ) from None
        except OSError:
            os.close(descriptor)
            raise
        os.ftruncate(descriptor, 0)
        os.write(descriptor, json.dumps(_who()).encode())
        self._descriptor = descriptor
        _HELD.add(descriptor)
        return self

    def release(self) -> None:
        """Give the folder up (the file stays: it is not the lock)."""
        if self._descriptor is None:
            return
        _HELD.discard(self._descriptor)
        os.close(self._descriptor)  # closing the last descriptor drops the flock
        self._descriptor = None

    @property
    def held(self) -> bool:
        return self._descriptor is not None

    def __enter__(self) -> RunFolderLock:
        return self.acquire()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.release()


def _who() -> dict[str, object]:
    return {
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "started": time.strftime("%Y-%m-%d %H:%M:%S %z"),
        "command": " ".join(sys.argv)[:300],
    }


def holder(run_dir: str | Path) -> str:
    """Who holds (or last held) the folder's lock, as the lock file says."""
    try:
        who = json.loads((Path(run_dir) / LOCK_FILE).read_text())
        return f"pid {who['pid']} on {who['host']}, started {who['started']}"
    except (OSError, ValueError, KeyError, TypeError):
        return "holder unknown"
