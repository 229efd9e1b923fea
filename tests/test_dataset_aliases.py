"""A KEEL dataset's aliases name its OpenML twin, so that warm-starters leave it out."""

from __future__ import annotations

import pandas as pd
import pytest

from automl_core.builtins.sources import KEEL_OPENML_NAMES
from automl_core.dataset import Dataset
from automl_core.runner import dataset_aliases


@pytest.mark.parametrize(
    ("keel", "openml"),
    [
        # twins that are rows of auto-sklearn's meta-data tables under the OpenML name
        ("bands", "cylinder-bands"),
        ("monk-2", "monks-problems-2"),
        ("led7digit", "led-display-domain-7digit"),
        ("pima", "diabetes"),
    ],
)
def test_keel_datasets_whose_openml_twin_is_named_otherwise_are_mapped(keel, openml):
    assert KEEL_OPENML_NAMES.get(keel, keel) == openml


def test_aliases_are_the_source_name_and_the_openml_name():
    data = Dataset(
        "keel:monk-2",
        pd.DataFrame({"a": [0, 1, 0, 1]}),
        [0, 1, 0, 1],
        "classification",
        {"openml_name": KEEL_OPENML_NAMES.get("monk-2", "monk-2")},
    )
    assert dataset_aliases(data) == ("monk-2", "monks-problems-2")
