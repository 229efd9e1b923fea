"""The ``initial-ids`` warm-starter: a meta-dataset's own initial pipelines for the dataset
(DeepPipe's protocol), in their order, on a real table-lookup run."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from automl_core.contracts import TaskDescription
from automl_core.errors import AutoMLError
from automl_engine.history import RunHistory
from automl_engine.metastore import save_metadata
from automl_engine.recipe import parse_recipe
from automl_engine.run_folder import HISTORY_FILE
from automl_engine.runner import run
from automl_engine.testing.data_checks import kit_metadata
from automl_engine.testing.spaces import pool_space
from automl_metadata.initial import InitialIds


@pytest.fixture
def metadata():
    data = kit_metadata()
    info = {"init_ids": {"test": {"d3": [7, 2, 11, 5, 0]}, "train": {"d1": [4, 1]}}}
    return dataclasses.replace(data, info=info, splits={"train": ["d1"], "test": ["d3"]})


def task(dataset: str) -> TaskDescription:
    return TaskDescription(dataset, "benchmark", 0, 0, "error", benchmark="table")


def test_the_dataset_s_ids_in_their_order_as_candidates(metadata):
    start = InitialIds(metadata=metadata).suggest(task("table:d3"), pool_space(), None)
    assert start.configs == [{"candidate": i} for i in (7, 2, 11, 5, 0)]
    assert InitialIds(metadata=metadata).suggest(task("table:d3"), pool_space(), 2).configs == [
        {"candidate": 7},
        {"candidate": 2},
    ]
    assert InitialIds(metadata=metadata, split="train").suggest(
        task("d1"), pool_space(), None
    ).configs[0] == {"candidate": 4}


def test_an_id_without_a_score_on_the_dataset_is_left_out_and_said(metadata):
    metadata = dataclasses.replace(metadata, performance=metadata.performance.copy())
    metadata.performance[metadata.row("d3"), 2] = np.nan
    start = InitialIds(metadata=metadata).suggest(task("table:d3"), pool_space(), None)
    assert start.configs == [{"candidate": i} for i in (7, 11, 5, 0)]
    assert start.info["unscored"] == [2]


def test_an_id_the_space_does_not_offer_is_left_out_and_said(metadata):
    """A benchmark that drops a component (DeepPipe's Experiment 4) drops the initial
    pipelines that use it: ids 2, 11 and 5 choose model 2."""
    without_model_2 = pool_space().restrict(exclude={"model": ["2"]})
    start = InitialIds(metadata=metadata).suggest(task("table:d3"), without_model_2, None)
    assert start.configs == [{"candidate": 7}, {"candidate": 0}]
    assert start.info["not_offered"] == [2, 11, 5]
    assert (
        "not_offered"
        not in InitialIds(metadata=metadata).suggest(task("table:d3"), pool_space(), None).info
    )


def test_a_dataset_without_initial_pipelines_is_named(metadata):
    with pytest.raises(AutoMLError, match="no initial pipelines for dataset 'd4'"):
        InitialIds(metadata=metadata).suggest(task("table:d4"), pool_space(), None)
    with pytest.raises(AutoMLError, match="in split 'train'"):
        InitialIds(metadata=metadata, split="train").suggest(task("table:d3"), pool_space(), None)
    bare = dataclasses.replace(metadata, info={})
    with pytest.raises(AutoMLError, match="has no init_ids"):
        InitialIds(metadata=bare).suggest(task("table:d3"), pool_space(), None)


def test_a_lookup_run_starts_from_them(metadata, tmp_path):
    folder = tmp_path / "meta"
    save_metadata(metadata, folder)
    recipe = parse_recipe(
        {
            "name": "init",
            "task": {
                "benchmark": {"name": "table", "params": {"path": str(folder)}},
                "dataset": "d3",
            },
            "search": {"strategy": "smbo", "surrogate": "rf", "params": {"initial_design": 5}},
            "warmstart": {"starter": "initial-ids", "params": {"metadata": str(folder)}},
            "budget": {"trials": 8},
            "seed": 0,
        }
    )
    run(recipe, tmp_path / "run")
    with RunHistory(tmp_path / "run" / HISTORY_FILE) as history:
        trials = [t.trial for t in history.trials()]
    assert [t.config["candidate"] for t in trials[:5]] == [7, 2, 11, 5, 0]
    assert {t.origin for t in trials[:5]} == {"warmstart"} and len(trials) == 8
