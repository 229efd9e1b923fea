"""The k-nearest-datasets warm start: distances on a table small enough to compute by hand,
the order it offers configurations in, what it leaves out, and the starter on synthetic and
real meta-data (auto-sklearn's table; Oboe's matrix through a table-lookup run)."""

from __future__ import annotations

import logging
from importlib import metadata as importlib_metadata

import numpy as np
import pandas as pd
import pytest

import automl_warmstart_knd.plugin
from automl_core.contracts import MetaData, TaskDescription, WarmStarter
from automl_core.errors import AutoMLError
from automl_core.plugins import ENTRY_POINT_GROUP, load_plugins
from automl_engine.history import RunHistory
from automl_engine.metastore import left_out_datasets
from automl_engine.recipe import parse_recipe
from automl_engine.run_folder import HISTORY_FILE
from automl_engine.runner import run
from automl_spaces.pool_space import PoolSpace
from automl_warmstart_knd import (
    KNearestDatasets,
    autosklearn_folder,
    knd_order,
    nearest_datasets,
    task_features,
)

# -- nearest_datasets on a hand-built table ---------------------------------------------------
#
#        x    y        scaled with the new dataset (3, 20): x over [0, 10], y over [10, 30]
#   a    0   10        a (0.0, 0.0)   L1: (0.3 + 0.5) / 2 = 0.40   L2: sqrt(0.17)  = 0.412
#   b    4   30        b (0.4, 1.0)   L1: (0.1 + 0.5) / 2 = 0.30   L2: sqrt(0.13)  = 0.361
#   c   10   20        c (1.0, 0.5)   L1: (0.7 + 0.0) / 2 = 0.35   L2: sqrt(0.245) = 0.495
#   new (0.3, 0.5)

TABLE = pd.DataFrame({"x": [0.0, 4.0, 10.0], "y": [10.0, 30.0, 20.0]}, index=["a", "b", "c"])
NEW = {"x": 3.0, "y": 20.0}


def test_l1_distances_and_order_are_the_hand_computed_ones():
    nearest = nearest_datasets(NEW, TABLE)
    assert [d for d, _ in nearest] == ["b", "c", "a"]
    assert [d for _, d in nearest] == pytest.approx([0.30, 0.35, 0.40])


def test_l2_is_the_root_mean_squared_difference_and_can_order_otherwise():
    nearest = nearest_datasets(NEW, TABLE, distance="l2")
    assert [d for d, _ in nearest] == ["b", "a", "c"]
    assert [d for _, d in nearest] == pytest.approx(np.sqrt([0.13, 0.17, 0.245]))


def test_ties_keep_the_table_order():
    table = pd.DataFrame({"x": [2.0, 0.0, 2.0]}, index=["p", "q", "r"])
    assert nearest_datasets({"x": 1.0}, table) == [("p", 0.5), ("q", 0.5), ("r", 0.5)]


def test_columns_not_shared_or_not_finite_or_constant_are_ignored():
    table = TABLE.assign(only_here=[1.0, 2.0, 3.0], constant=5.0)
    new = {**NEW, "only_task": 7.0, "constant": 5.0, "nan_in_task": float("nan")}
    assert nearest_datasets(new, table.assign(nan_in_task=[0.0, 1.0, 2.0])) == (
        nearest_datasets(NEW, TABLE)
    )


def test_missing_values_are_left_out_of_the_mean_not_counted_as_near():
    table = pd.concat(
        [TABLE, pd.DataFrame({"x": [3.0, np.nan], "y": [np.nan, np.nan]}, index=["d", "e"])]
    )
    nearest = dict(nearest_datasets(NEW, table))
    assert nearest["d"] == 0.0  # only x is comparable, and it is equal
    assert "e" not in nearest  # nothing comparable: left out
    # d's missing y does not move the scaling of y, nor a..c's distances
    assert [nearest[k] for k in "bca"] == pytest.approx([0.30, 0.35, 0.40])


def test_a_task_feature_that_is_nan_is_not_compared():
    nearest = nearest_datasets({"x": 3.0, "y": float("nan")}, TABLE)
    # x alone, scaled over [0, 10]: b 0.1, a 0.3, c 0.7
    assert [d for d, _ in nearest] == ["b", "a", "c"]
    assert [d for _, d in nearest] == pytest.approx([0.1, 0.3, 0.7])


def test_excluded_datasets_leave_the_scaling_too():
    # without c, x is scaled over [0, 4]: a 0, b 1, new 0.75; y as before
    nearest = nearest_datasets(NEW, TABLE, exclude=["C"])
    assert [d for d, _ in nearest] == ["b", "a"]
    assert [d for _, d in nearest] == pytest.approx([0.375, 0.625])


def test_no_shared_meta_feature_is_an_error_naming_both_sides():
    with pytest.raises(ValueError, match=r"task has \['rows'\].*table has \['x', 'y'\]"):
        nearest_datasets({"rows": 3.0}, TABLE)
    with pytest.raises(ValueError, match="distance"):
        nearest_datasets(NEW, TABLE, distance="cosine")


# -- the order of configurations ---------------------------------------------------------------

PERFORMANCE = np.array(
    [
        [0.3, 0.1, np.nan, 0.2],  # best first: 1, 3, 0
        [0.5, 0.4, 0.1, np.nan],  # 2, 1, 0
        [np.nan, np.nan, np.nan, np.nan],  # nothing to offer
    ]
)


def test_knd_order_takes_the_best_of_each_then_the_next_of_each():
    assert list(knd_order(PERFORMANCE, [1, 0, 2])) == [
        (1, 2),
        (0, 1),
        (1, 1),
        (0, 3),
        (1, 0),
        (0, 0),
    ]
    assert list(knd_order(PERFORMANCE, [0, 1], per_dataset=2))[:4] == [
        (0, 1),
        (0, 3),
        (1, 2),
        (1, 1),
    ]


def test_left_out_datasets_match_aliases_and_names_case_insensitively():
    task = TaskDescription(
        "keel:pima", "classification", 768, 8, "accuracy", aliases=("pima", "diabetes")
    )
    datasets = ["Diabetes", "iris", "keel:pima", "wine"]
    assert left_out_datasets(datasets, task, ["WINE"], True) == ["Diabetes", "keel:pima", "wine"]
    assert left_out_datasets(datasets, task, [], False) == []


# -- the starter on synthetic meta-data --------------------------------------------------------


def toy_metadata() -> MetaData:
    """Five datasets; one best configuration each, as in auto-sklearn's table, on a pool of
    four candidates (candidate 3 is not offered by the space below, and dataset e's best is
    a repeat of c's)."""
    datasets = ["a", "b", "c", "d", "e"]
    configs = [{"candidate": j} for j in (0, 1, 2, 3, 2)]
    performance = np.full((5, 5), np.nan)
    for i in range(5):
        performance[i, i] = 0.1 * (i + 1)
    metafeatures = pd.DataFrame(
        {"x": [0.0, 1.0, 2.0, 3.0, 4.0], "y": [0.0, 0.0, 0.0, 0.0, 1.0]},
        index=datasets,
    )
    return MetaData(datasets, configs, performance, metafeatures=metafeatures, space="toy")


def toy_space() -> PoolSpace:
    return PoolSpace("toy", np.eye(4), available=np.array([True, True, True, False]))


def task(features=None, dataset="new", aliases=()) -> TaskDescription:
    return TaskDescription(
        dataset, "classification", 100, 2, "accuracy", features or {}, tuple(aliases)
    )


def test_the_nearest_datasets_best_configurations_come_first():
    starter = KNearestDatasets(metadata=toy_metadata())
    start = starter.suggest(task({"x": 0.2, "y": 0.0}), toy_space(), None)
    # distances: a 0.1, b 0.4, c 0.9, d 1.4, e 1.9+1 (over x's range [0, 4] and y's [0, 1]);
    # d's candidate 3 is not offered, e's repeats c's
    assert start.configs == [{"candidate": 0}, {"candidate": 1}, {"candidate": 2}]
    assert start.info["invalid"] == 1 and start.info["duplicates"] == 1
    assert [d["dataset"] for d in start.info["datasets"]] == ["a", "b", "c"]
    assert start.info["datasets"][0]["distance"] == pytest.approx(0.05 / 2)
    assert start.info["features"] == ["x", "y"] and start.info["features_from"] == "task"


def test_n_k_and_per_dataset_limit_the_suggestion():
    metadata = toy_metadata()
    close = task({"x": 4.0, "y": 1.0})  # e, d, c, b, a
    assert KNearestDatasets(metadata=metadata).suggest(close, toy_space(), 2).configs == [
        {"candidate": 2},
        {"candidate": 1},
    ]
    only_two = KNearestDatasets(metadata=metadata, k=2).suggest(close, toy_space(), None)
    assert only_two.configs == [{"candidate": 2}]  # e's; d's is not offered
    assert only_two.info["invalid"] == 1


def test_exclude_and_exclude_self_leave_datasets_out():
    metadata = toy_metadata()
    near_a = {"x": 0.0, "y": 0.0}
    own = task(near_a, dataset="openml:A", aliases=("a",))
    left = KNearestDatasets(metadata=metadata, exclude=["B"]).suggest(own, toy_space(), 1)
    assert left.configs == [{"candidate": 2}] and left.info["excluded"] == ["a", "b"]
    kept = KNearestDatasets(metadata=metadata, exclude_self=False).suggest(own, toy_space(), 1)
    assert kept.configs == [{"candidate": 0}] and kept.info["excluded"] == []


def test_features_restricts_the_comparison():
    metadata = toy_metadata()
    start = KNearestDatasets(metadata=metadata, features=["y"]).suggest(
        task({"x": 0.0, "y": 1.0}), toy_space(), 1
    )
    assert start.configs == [{"candidate": 2}]  # e by y alone (its config is c's)
    with pytest.raises(ValueError, match=r"features: \['z'\] are not meta-features"):
        KNearestDatasets(metadata=metadata, features=["z"]).suggest(task(NEW), toy_space(), 1)


def test_datasets_without_metafeatures_or_results_are_skipped():
    base = toy_metadata()
    performance = base.performance.copy()
    performance[0] = np.nan  # a was never run
    metadata = MetaData(
        base.datasets,
        base.configs,
        performance,
        metafeatures=base.metafeatures.drop(index="b"),  # b has no meta-features
        space="toy",
    )
    start = KNearestDatasets(metadata=metadata).suggest(task({"x": 0.0}), toy_space(), None)
    # c, d and e remain, nearest in that order: d's candidate is not offered, e's repeats c's
    assert [d["dataset"] for d in start.info["datasets"]] == ["c"]
    assert start.configs == [{"candidate": 2}]
    assert start.info["skipped"] == {"no_metafeatures": 1, "no_performance": 1}


def test_a_task_without_features_uses_its_own_row_of_the_table():
    metadata = toy_metadata()
    assert task_features(task(dataset="x", aliases=("C",)), metadata.metafeatures) == (
        {"x": 2.0, "y": 0.0},
        "meta-data row 'C'",
    )
    start = KNearestDatasets(metadata=metadata).suggest(task(dataset="b"), toy_space(), 2)
    # b's own row, b left out: a and c are equally near (x 1 apart), a first by table order
    assert start.configs == [{"candidate": 0}, {"candidate": 2}]
    assert start.info["features_from"] == "meta-data row 'b'"
    with pytest.raises(ValueError, match="no meta-features"):
        KNearestDatasets(metadata=metadata).suggest(task(dataset="zzz"), toy_space(), 2)


def test_no_shared_meta_feature_fails_the_suggestion_clearly():
    with pytest.raises(ValueError, match="no meta-feature is shared"):
        KNearestDatasets(metadata=toy_metadata()).suggest(task({"rows": 5.0}), toy_space(), 3)


@pytest.mark.parametrize(
    ("params", "name"),
    [
        ({"k": 0}, "k"),
        ({"k": True}, "k"),
        ({"per_dataset": 0}, "per_dataset"),
        ({"distance": "cosine"}, "distance"),
        ({"features": "x"}, "features"),
        ({"features": []}, "features"),
        ({"exclude": "abc"}, "exclude"),
        ({"exclude_self": "yes"}, "exclude_self"),
        ({"metadata": 3}, "metadata"),
        ({"metadata_params": [1]}, "metadata_params"),
    ],
)
def test_bad_parameters_are_refused_naming_them(params, name):
    with pytest.raises(ValueError, match=f"^{name}: got"):
        KNearestDatasets(**params)


def test_the_default_table_follows_the_metric_and_task(caplog):
    def described(metric: str, kind: str = "classification", **features: float) -> TaskDescription:
        return TaskDescription("d", kind, 10, 2, metric, features)

    assert autosklearn_folder(described("balanced_accuracy")) == (
        "balanced_accuracy_binary.classification_dense"
    )
    assert autosklearn_folder(described("roc_auc", NumberOfClasses=3.0)) == (
        "roc_auc_multiclass.classification_dense"
    )
    assert autosklearn_folder(described("rmse", "regression")) == (
        "root_mean_squared_error_regression_dense"
    )
    with caplog.at_level(logging.WARNING):
        assert autosklearn_folder(described("brier")) == (
            "balanced_accuracy_binary.classification_dense"
        )
    assert "no meta-data for metric 'brier'" in caplog.text
    with pytest.raises(AutoMLError, match="set the warm-starter's `metadata`"):
        autosklearn_folder(described("error", "benchmark"))


# -- the plugin --------------------------------------------------------------------------------


def test_registered_as_knd_through_the_entry_point():
    points = {p.name: p.value for p in importlib_metadata.entry_points(group=ENTRY_POINT_GROUP)}
    assert points.get("warmstart-knd") == "automl_warmstart_knd.plugin"
    plugins = load_plugins(extra=[automl_warmstart_knd.plugin], entry_points=False)
    starter = plugins.create("warmstarter", "knd", {"k": 3, "distance": "l2"})
    assert isinstance(starter, WarmStarter) and starter.k == 3
    assert plugins.get("warmstarter", "knd").parameters()["per_dataset"] == 1


# -- real meta-data ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def autosklearn():
    pytest.importorskip("automl_metadata")
    pytest.importorskip("automl_sklearn")
    from automl_metadata.autosklearn import AutoSklearnMetaData

    metadata = AutoSklearnMetaData("balanced_accuracy_binary.classification_dense").load()
    space = load_plugins().create("space", "autosklearn-classification", {})
    return metadata, space


def test_auto_sklearn_wdbc_gets_its_own_best_only_without_leave_one_out(autosklearn):
    metadata, space = autosklearn
    own_best = space.validate(
        metadata.configs[int(np.nanargmin(metadata.performance[metadata.row("wdbc")]))]
    )
    wdbc = TaskDescription(
        "sklearn:breast_cancer",
        "classification",
        569,
        30,
        "balanced_accuracy",
        metadata.metafeatures.loc["wdbc"].to_dict(),
        ("breast_cancer", "wdbc"),
    )
    kept = KNearestDatasets(metadata=metadata, exclude_self=False).suggest(wdbc, space, 25)
    assert kept.configs[0] == own_best and kept.info["datasets"][0] == {
        "dataset": "wdbc",
        "distance": 0.0,
        "configs": 1,
    }
    assert len(kept.configs) == 25 and len(kept.info["features"]) > 20
    left = KNearestDatasets(metadata=metadata).suggest(wdbc, space, 25)
    assert own_best not in left.configs and left.info["excluded"] == ["wdbc"]
    assert "wdbc" not in {d["dataset"] for d in left.info["datasets"]}
    assert left.configs[:24] == kept.configs[1:25]


def test_an_oboe_lookup_run_starts_with_the_neighbours_best_without_its_own(tmp_path):
    pytest.importorskip("automl_metadata")
    from automl_engine.metastore import resolve_metadata

    oboe = resolve_metadata("oboe", None, load_plugins())
    table = oboe.metafeatures

    def expected(dataset: str, exclude_self: bool) -> list[int]:
        nearest = nearest_datasets(
            table.loc[dataset].to_dict(), table, exclude=[dataset] if exclude_self else []
        )
        order, seen = [], set()
        for _, column in knd_order(oboe.performance, [oboe.row(d) for d, _ in nearest]):
            if column not in seen:
                seen.add(column)
                order.append(column)
                if len(order) == 5:
                    break
        return order

    # a dataset whose own best configuration is not its nearest neighbour's
    dataset = next(d for d in oboe.datasets if expected(d, False)[0] not in expected(d, True))
    recipe = parse_recipe(
        {
            "name": "knd-oboe",
            "task": {"benchmark": "oboe", "dataset": dataset},
            "search": "random",
            # no metadata: a table-lookup task's default is its own benchmark's, oboe's
            "warmstart": {"starter": "knd", "configs": 5},
            "budget": {"trials": 7},
            "seed": 0,
        }
    )
    run(recipe, tmp_path / "run", plugins=load_plugins())
    with RunHistory(tmp_path / "run" / HISTORY_FILE) as history:
        trials = history.trials()
    assert [t.trial.origin for t in trials[:5]] == ["warmstart"] * 5
    assert trials[5].trial.origin == "random"
    assert [t.trial.config["candidate"] for t in trials[:5]] == expected(dataset, True)
