"""A dataset's aliases name its OpenML twin, so that warm-starters leave it out."""

from __future__ import annotations

import pandas as pd
import pytest
from toy_plugin import FixedWarmStarter, toy_recipe

from automl_core.contracts import TaskDescription
from automl_engine.builtins.sources import KEEL_OPENML_NAMES, load_keel, load_sklearn
from automl_engine.compose import prepare
from automl_engine.dataset import Dataset
from automl_engine.metastore import left_out_datasets
from automl_engine.recipe import parse_recipe
from automl_engine.tasks import DataTask, dataset_aliases


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


@pytest.mark.parametrize(
    ("reference", "aliases"),
    [
        ("keel:pima", ("pima", "diabetes")),  # the KEEL source's own info, not a hand-made one
        ("keel:iris", ("iris",)),  # named as on OpenML: one alias
        ("sklearn:breast_cancer", ("breast_cancer", "wdbc")),
        ("sklearn:digits", ("digits",)),  # not OpenML's optdigits
    ],
)
def test_the_sources_record_the_openml_name_the_aliases_come_from(reference, aliases):
    source, _, name = reference.partition(":")
    dataset = load_keel(name) if source == "keel" else load_sklearn(name)
    assert dataset_aliases(dataset) == aliases


def test_data_in_memory_is_not_named_by_its_callers_name():
    data = Dataset("memory:pima", pd.DataFrame({"a": [0, 1]}), [0, 1], "classification", {})
    assert dataset_aliases(data, named_by_source=False) == ()


def test_data_in_memory_keeps_the_openml_name_its_info_carries(plugins):
    """The name its caller chose says nothing (``memory:pima`` is not pima); the OpenML
    name in its info does, so that a warm start still leaves the dataset out."""
    task = {"dataset": "memory:pima", "resampling": {"holdout": 0.3}}
    recipe = parse_recipe(toy_recipe(task=task))
    data = DataTask.given(recipe, plugins, load_sklearn("breast_cancer"))
    assert data.dataset.name == "memory:pima" and data.description.aliases == ("wdbc",)
    assert data.fingerprint is not None


def test_the_run_hands_the_aliases_to_the_warm_starter(plugins):
    recipe = parse_recipe(toy_recipe(warmstart={"starter": "fixed", "configs": 2}))
    FixedWarmStarter.seen_tasks.clear()
    setup = prepare(recipe, plugins)
    assert setup.task.description.aliases == ("breast_cancer", "wdbc")
    assert FixedWarmStarter.seen_tasks[-1].aliases == ("breast_cancer", "wdbc")


def test_left_out_datasets_match_the_name_and_the_aliases_case_insensitively():
    task = TaskDescription(
        "keel:pima", "classification", 768, 8, "accuracy", aliases=("pima", "diabetes")
    )
    datasets = ["Diabetes", "credit-g", "KEEL:PIMA", "iris", "vote"]
    assert left_out_datasets(datasets, task, ["VOTE"], exclude_self=True) == [
        "Diabetes",
        "KEEL:PIMA",
        "vote",
    ]
    assert left_out_datasets(datasets, task, ["vote"], exclude_self=False) == ["vote"]
