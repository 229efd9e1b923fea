"""``automl data import-openml DIR``: fill the OpenML cache from saved API responses.

OpenML's JSON API answers (``/api/v1/json/data/<id>``, ``.../data/features/<id>``,
``.../data/qualities/<id>``) and the data file (``/data/v1/download/<file id>``) are what
scikit-learn keeps for its ``fetch_openml`` tests, gzipped and named after the URL::

    id_61/api-v1-jd-61.json.gz       description
    id_61/api-v1-jdf-61.json.gz      features
    id_61/api-v1-jdq-61.json.gz      qualities
    id_61/data-v1-dl-61.arff.gz      data (named by the description's file_id)

openml-python reads the XML form of the same answers (``description.xml``, ``features.xml``,
``qualities.xml``) and ``dataset.arff`` from its cache, so the import converts each JSON
document element for element into that XML (the JSON API is a rendering of the XML one:
repeated elements become lists, an empty element an empty list) and decompresses the data.
The data file's MD5 is checked against the description's ``md5_checksum``, as openml does
after a download. Files ending in plain ``.json`` / ``.arff`` are accepted too.

Each dataset folder is written beside its destination and renamed into place, replacing an
older import as a whole: openml caches parsed data in pickles next to the ARFF file, and a
pickle left from an older file would be read instead of the new one.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import re
import shutil
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import xmltodict

from automl_core.errors import DatasetError
from automl_openml.cache import (
    ARFF_FILE,
    DESCRIPTION_FILE,
    FEATURES_FILE,
    QUALITIES_FILE,
    dataset_folder,
    openml_configured,
)

_NAMESPACE = "http://openml.org/openml"
_DESCRIPTION = re.compile(r"api-v1-jd-(\d+)\.json(\.gz)?")
_FILE_ID_IN_URL = re.compile(r"/download/(\d+)(/|$)")
_ARFF_DATA = re.compile(rb"^\s*@data\b", re.IGNORECASE)
_EXPECTED = (
    "api-v1-jd-<id>.json.gz (description, required), api-v1-jdf-<id>.json.gz (features), "
    "api-v1-jdq-<id>.json.gz (qualities) and data-v1-dl-<file id>.arff.gz (data, required; "
    "<file id> is the description's file_id), as in scikit-learn's "
    "sklearn/datasets/tests/data/openml/id_<n>/"
)


@dataclass
class ImportPlan:
    """One dataset's converted documents and the data file to decompress, before writing."""

    dataset_id: int
    name: str
    source: Path
    documents: dict[str, str]
    data_file: Path
    notes: list[str] = field(default_factory=list)
    instances: int | None = None


@dataclass
class Imported:
    """What one import wrote, for the report."""

    dataset_id: int
    name: str
    folder: Path
    rows: int
    files: list[str]
    notes: list[str]


@dataclass
class ImportResult:
    """The datasets written, and the description files skipped with the reason."""

    imported: list[Imported]
    skipped: list[tuple[Path, str]]


# --- the command -----------------------------------------------------------------------------


IMPORT_HELP = "import saved OpenML API responses (scikit-learn's test-data layout) into the cache"


def configure_import(parser: argparse.ArgumentParser) -> None:
    """The arguments of ``automl data import-openml``."""
    parser.description = (
        "Import OpenML API responses saved on disk into the local OpenML cache, so that "
        "openml:<id> loads without network. DIR is a folder of responses for one dataset "
        "(such as scikit-learn's sklearn/datasets/tests/data/openml/id_61) or a folder of "
        "such folders."
    )
    parser.add_argument("dirs", nargs="+", metavar="DIR", type=Path)


def run_import(arguments: argparse.Namespace) -> int:
    """``automl data import-openml DIR [DIR ...]``: import, print what was imported."""
    result = import_openml(arguments.dirs)
    for item in result.imported:
        print(describe(item))
    for path, reason in result.skipped:
        print(f"skipped {path}: {reason}")
    print(
        f"{len(result.imported)} OpenML dataset(s) imported"
        + (f", {len(result.skipped)} skipped" if result.skipped else "")
        + "; load them as openml:<id>."
    )
    return 1 if result.skipped else 0


def import_openml_command(argv: list[str]) -> int:
    """The command on its own, for scripts: ``import_openml_command(["DIR", ...])``."""
    parser = argparse.ArgumentParser(prog="automl data import-openml")
    configure_import(parser)
    try:
        arguments = parser.parse_args(argv)
    except SystemExit as exit_:  # -h or a usage error: argparse has printed why
        return int(exit_.code or 0)
    return run_import(arguments)


def describe(item: Imported) -> str:
    """One report line (plus notes) for an imported dataset."""
    lines = [
        f"openml:{item.dataset_id}  {item.name}: {item.rows} rows, "
        f"{', '.join(item.files)} -> {item.folder}"
    ]
    lines += [f"  note: {note}" for note in item.notes]
    return "\n".join(lines)


def import_openml(dirs: list[Path]) -> ImportResult:
    """Import every dataset described in ``dirs``.

    A dataset whose files are inconsistent (a description of another id, a data file that
    fails its MD5 check...) is skipped with the reason, so that one bad dataset does not stop
    a folder of good ones; when nothing at all can be imported, :class:`DatasetError` says
    why. A folder with no OpenML responses at all is an error too.
    """
    plans: list[ImportPlan] = []
    skipped: list[tuple[Path, str]] = []
    for directory in dirs:
        for folder, description_path in find_descriptions(Path(directory)):
            try:
                plan = plan_dataset(folder, description_path)
            except DatasetError as error:
                skipped.append((description_path, str(error)))
                continue
            twin = next((p for p in plans if p.dataset_id == plan.dataset_id), None)
            if twin is not None:
                reason = f"dataset {plan.dataset_id} is already imported from {twin.source}"
                skipped.append((description_path, reason))
                continue
            plans.append(plan)
    if not plans:
        reasons = "; ".join(f"{path}: {reason}" for path, reason in skipped)
        raise DatasetError(f"no OpenML dataset could be imported. {reasons}")
    with openml_configured() as openml:
        imported = [write_plan(plan, dataset_folder(openml, plan.dataset_id)) for plan in plans]
    return ImportResult(imported, skipped)


# --- reading a directory ---------------------------------------------------------------------


def find_descriptions(directory: Path) -> list[tuple[Path, Path]]:
    """(folder, description file) of each dataset in ``directory`` itself, or else in its
    sub-folders."""
    if not directory.exists():
        raise DatasetError(f"{directory} does not exist")
    if not directory.is_dir():
        raise DatasetError(f"{directory} is not a folder; expected a folder holding {_EXPECTED}")
    folders = [directory] if _descriptions(directory) else []
    if not folders:
        folders = [d for d in sorted(directory.iterdir()) if d.is_dir() and _descriptions(d)]
    if not folders:
        present = sorted(p.name for p in directory.iterdir())[:8]
        raise DatasetError(
            f"{directory} holds no OpenML API responses (found: "
            f"{', '.join(present) if present else 'nothing'}). Expected, in it or in its "
            f"sub-folders: {_EXPECTED}"
        )
    return [(folder, path) for folder in folders for path in _descriptions(folder)]


def _descriptions(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.is_file() and _DESCRIPTION.fullmatch(p.name))


def plan_dataset(folder: Path, description_path: Path) -> ImportPlan:
    """Read and convert one dataset's responses; find and check its data file."""
    match = _DESCRIPTION.fullmatch(description_path.name)
    assert match is not None
    dataset_id = int(match.group(1))
    description = _api_document(description_path, "data_set_description")
    if str(description.get("id", "")).strip() != str(dataset_id):
        raise DatasetError(
            f"{description_path} describes dataset {description.get('id')!r}, not {dataset_id}"
        )
    for key in ("name", "format", "url", "version"):
        if not description.get(key):
            raise DatasetError(f"{description_path}: the description has no {key!r}")
    documents = {DESCRIPTION_FILE: to_xml("data_set_description", description)}
    notes: list[str] = []
    if str(description.get("status", "active")) != "active":
        notes.append(f"its OpenML status is {description['status']!r}")
    features_path = _optional(folder, f"api-v1-jdf-{dataset_id}.json")
    if features_path is None:
        notes.append("no features response (api-v1-jdf); features.xml not written")
    else:
        features = _api_document(features_path, "data_features", optional=notes)
        if features is not None:
            documents[FEATURES_FILE] = to_xml("data_features", _normalise_features(features))
    instances = None
    qualities_path = _optional(folder, f"api-v1-jdq-{dataset_id}.json")
    if qualities_path is None:
        notes.append("no qualities response (api-v1-jdq); qualities.xml not written")
    else:
        qualities = _api_document(qualities_path, "data_qualities", optional=notes)
        if qualities is not None:
            documents[QUALITIES_FILE] = to_xml("data_qualities", qualities)
            instances = _number_of_instances(qualities)
    data_file = _data_file(folder, description_path, description)
    _check_md5(data_file, description.get("md5_checksum"))
    return ImportPlan(
        dataset_id, str(description["name"]), folder, documents, data_file, notes, instances
    )


def _optional(folder: Path, stem: str) -> Path | None:
    for name in (f"{stem}.gz", stem):
        if (folder / name).is_file():
            return folder / name
    return None


def _open(path: Path) -> IO[bytes]:
    return gzip.open(path, "rb") if path.name.endswith(".gz") else path.open("rb")


def _api_document(
    path: Path, root: str, optional: list[str] | None = None
) -> dict[str, Any] | None:
    """The ``root`` object of a JSON API response. An OpenML error response (``{"error":
    ...}``) raises -- or, for an ``optional`` document, is noted and skipped."""
    try:
        with _open(path) as handle:
            document = json.load(handle)
    except (OSError, EOFError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise DatasetError(f"cannot read {path} as (gzipped) JSON: {error}") from error
    if isinstance(document, dict) and isinstance(document.get("error"), dict):
        error = document["error"]
        what = f"OpenML error {error.get('code')}: {error.get('message')}"
        if optional is None:
            raise DatasetError(f"{path} is an OpenML error response ({what}), not a {root}")
        optional.append(f"{path.name} is an OpenML error response ({what}); skipped")
        return None
    if not isinstance(document, dict) or not isinstance(document.get(root), dict):
        found = list(document)[:5] if isinstance(document, dict) else type(document).__name__
        raise DatasetError(f"{path}: expected a JSON object with {root!r}, found {found}")
    return document[root]


def _normalise_features(features: dict[str, Any]) -> dict[str, Any]:
    """Some saved responses carry a feature's categories as ``nominal_values``, one string
    holding a JSON list; the XML API (and openml's reader) has repeated ``nominal_value``."""
    listed = features.get("feature")
    items = listed if isinstance(listed, list) else [listed]
    normalised = []
    for feature in items:
        feature = dict(feature)
        packed = feature.pop("nominal_values", None)
        if isinstance(packed, str) and "nominal_value" not in feature:
            try:
                feature["nominal_value"] = json.loads(packed)
            except json.JSONDecodeError as error:
                raise DatasetError(
                    f"feature {feature.get('name')!r}: nominal_values {packed[:60]!r} is not "
                    "a JSON list"
                ) from error
        elif packed is not None and "nominal_value" not in feature:
            feature["nominal_value"] = packed
        normalised.append(feature)
    return {**features, "feature": normalised}


def _number_of_instances(qualities: dict[str, Any]) -> int | None:
    listed = qualities.get("quality")
    for quality in listed if isinstance(listed, list) else [listed]:
        if isinstance(quality, dict) and quality.get("name") == "NumberOfInstances":
            try:
                return int(float(quality.get("value")))
            except (TypeError, ValueError):
                return None
    return None


def _data_file(folder: Path, description_path: Path, description: dict[str, Any]) -> Path:
    file_id = str(description.get("file_id") or "").strip()
    if not file_id:
        match = _FILE_ID_IN_URL.search(str(description["url"]))
        file_id = match.group(1) if match else ""
    if not file_id:
        raise DatasetError(
            f"{description_path}: the description names no file_id (nor a /download/<id>/ "
            "url), so the data file cannot be found"
        )
    found = _optional(folder, f"data-v1-dl-{file_id}.arff")
    if found is None:
        raise DatasetError(
            f"{folder} has the description of dataset {description['id']} but not its data "
            f"file data-v1-dl-{file_id}.arff.gz (file_id {file_id})"
        )
    return found


def _check_md5(data_file: Path, expected: Any) -> None:
    if not expected:
        return
    digest = hashlib.md5()
    try:
        with _open(data_file) as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    except (OSError, EOFError) as error:
        raise DatasetError(f"cannot read {data_file}: {error}") from error
    if digest.hexdigest() != str(expected).strip().lower():
        raise DatasetError(
            f"{data_file}: MD5 {digest.hexdigest()} differs from the description's "
            f"md5_checksum {expected}; the file is not the one the description describes"
        )


# --- JSON -> XML -----------------------------------------------------------------------------


def to_xml(root: str, document: dict[str, Any]) -> str:
    """The XML openml-python reads, from the JSON rendering of the same API answer."""
    body = {"@xmlns:oml": _NAMESPACE, **_oml_elements(document)}
    return xmltodict.unparse({f"oml:{root}": body}, pretty=True, indent="  ") + "\n"


def _oml_elements(document: dict[str, Any]) -> dict[str, Any]:
    return {f"oml:{key}": _element(value) for key, value in document.items()}


def _element(value: Any) -> Any:
    if isinstance(value, dict):
        return _oml_elements(value)
    if isinstance(value, list):
        # An empty list is how the JSON API renders an empty element (a quality without a
        # value); a list of values is a repeated element.
        return [_element(v) for v in value] if value else None
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value) if isinstance(value, bool) else str(value)


# --- writing ---------------------------------------------------------------------------------


def write_plan(plan: ImportPlan, destination: Path) -> Imported:
    """Write a dataset folder next to ``destination`` and rename it into place."""
    destination.parent.mkdir(parents=True, exist_ok=True)
    # mkdir, not mkdtemp: the folder keeps the umask's permissions (mkdtemp's are 0700),
    # which matters for a cache shared between users.
    staging = destination.with_name(f".import-{plan.dataset_id}-{uuid.uuid4().hex[:12]}")
    staging.mkdir()
    try:
        for name, text in plan.documents.items():
            (staging / name).write_text(text, encoding="utf8")
        rows = _decompress_counting_rows(plan.data_file, staging / ARFF_FILE)
        _replace_folder(staging, destination)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    notes = list(plan.notes)
    if plan.instances is not None and plan.instances != rows:
        notes.append(
            f"the data file has {rows} rows, but the qualities say NumberOfInstances = "
            f"{plan.instances} (a truncated copy?)"
        )
    files = [*plan.documents, ARFF_FILE]
    return Imported(plan.dataset_id, plan.name, destination, rows, files, notes)


def _decompress_counting_rows(source: Path, target: Path) -> int:
    """Copy the (gzipped) ARFF file to ``target``; count the data lines after ``@data``."""
    rows = 0
    in_data = False
    try:
        with _open(source) as reader, target.open("wb") as writer:
            for line in reader:
                writer.write(line)
                if in_data:
                    stripped = line.strip()
                    rows += bool(stripped) and not stripped.startswith(b"%")
                elif _ARFF_DATA.match(line):
                    in_data = True
    except (OSError, EOFError) as error:
        raise DatasetError(f"cannot decompress {source}: {error}") from error
    if not in_data:
        raise DatasetError(f"{source} is not an ARFF file: it has no @data line")
    return rows


def _replace_folder(staging: Path, destination: Path) -> None:
    old = None
    if destination.exists():
        old = destination.with_name(f".{destination.name}.replaced-{os.getpid()}")
        shutil.rmtree(old, ignore_errors=True)
        os.replace(destination, old)
    os.replace(staging, destination)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
