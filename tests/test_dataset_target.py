"""The two target helpers every source shares: the column check and the target array."""

import numpy as np
import pandas as pd
import pytest

from automl_core.errors import DatasetError
from automl_engine.dataset import check_target_column, target_array


def test_a_present_target_column_passes():
    check_target_column("data.csv", "label", ["age", "label"])


def test_a_typo_names_the_closest_column():
    with pytest.raises(DatasetError, match=r"data.csv has no target column 'lable'; did you mean"):
        check_target_column("data.csv", "lable", ["age", "label"])


def test_another_case_is_suggested_even_when_the_spelling_is_far():
    with pytest.raises(DatasetError, match=r"did you mean 'PH'\?"):
        check_target_column("data.csv", "ph", ["PH", "temperature"])


def test_no_close_column_lists_them_all():
    with pytest.raises(DatasetError, match=r"'zzz'\. Columns: age, label$"):
        check_target_column("data.csv", "zzz", ["age", "label"])


def test_a_regression_target_becomes_floats():
    y = target_array("d", "price", pd.Series([1, 2, 3]), "regression")
    assert y.dtype == float and y.tolist() == [1.0, 2.0, 3.0]


@pytest.mark.parametrize("values", [["a", "b", "a"], [True, False, True]])
def test_a_non_numeric_regression_target_is_refused_with_examples(values):
    with pytest.raises(DatasetError, match=r"d: target column 'y' is not numeric .*values such as"):
        target_array("d", "y", pd.Series(values), "regression")


def test_classification_labels_keep_their_type():
    strings = target_array(
        "d", "y", pd.Series(["no", "yes", "no"], dtype="string"), "classification"
    )
    assert strings.dtype == object and strings.tolist() == ["no", "yes", "no"]
    integers = target_array("d", "y", pd.Series([-1, 1, -1]), "classification")
    assert integers.dtype.kind == "i" and np.array_equal(integers, [-1, 1, -1])
