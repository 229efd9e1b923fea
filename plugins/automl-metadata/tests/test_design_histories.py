"""The ``design`` strategy and meta-data built from run folders (``automl data build``)."""

from __future__ import annotations

import numpy as np
import pytest

from automl_core.contracts import MetaFeatureProvider, SearchContext
from automl_core.errors import AutoMLError
from automl_core.trial import Result, Status, Trial
from automl_engine.cli import main as automl
from automl_engine.metastore import load_metadata
from automl_engine.recipe import parse_recipe
from automl_engine.runner import run
from automl_engine.testing import Component, parametrize_with_checks
from automl_engine.testing.spaces import pipeline_space, pool_space
from automl_metadata.design import FixedDesign
from automl_metadata.histories import metadata_from_runs


def proposed(strategy: FixedDesign, space, seed: int = 0) -> list[dict]:
    strategy.setup(SearchContext(space=space, seed=seed))
    configs = []
    while (candidate := strategy.ask()) is not None:
        configs.append(candidate.config)
        strategy.tell(Trial(len(configs), candidate.config), Result(Status.OK, 0.5))
    return configs


def test_the_design_is_each_algorithms_default_then_seeded_random_ones_whatever_the_run():
    space = pipeline_space()
    configs = proposed(FixedDesign(random=5, seed=0), space, seed=0)
    models = [space.active_components(c)["model"] for c in configs[:2]]
    assert models == ["logistic", "tree"]
    assert configs[0] == space.validate(space.restrict(include={"model": ["logistic"]}).default())
    assert len(configs) == 7 and len({space.key(c) for c in configs}) == 7
    assert proposed(FixedDesign(random=5, seed=0), space, seed=9) == configs  # its own seed
    assert proposed(FixedDesign(random=5), space, seed=9) != configs  # else the run's
    assert proposed(FixedDesign(random=5, seed=1), space) != configs


def test_listed_configurations_come_first_and_a_wrong_one_is_named():
    space = pipeline_space()
    listed = space.sample(np.random.default_rng(3), 2)
    configs = proposed(FixedDesign(configs=listed, defaults=False), space)
    assert configs == [space.validate(c) for c in listed]
    with pytest.raises(ValueError, match=r"configs\[1\] is not of the space"):
        proposed(FixedDesign(configs=[listed[0], {"model:__choice__": "nope"}]), space)
    with pytest.raises(ValueError, match="stage 'nope' is not a stage"):
        proposed(FixedDesign(stage="nope"), space)
    assert len(proposed(FixedDesign(random=4), pool_space())) == 4  # a pool has no defaults


# as many random configurations as the kit's pool has candidates: the design then covers it
@parametrize_with_checks([Component("search_strategy", "design", params={"random": 100})])
def test_conformance(component, check):
    check(component)


def design_recipe(dataset: str, seed: int = 0, metric: str = "balanced_accuracy") -> dict:
    return {
        "name": "build",
        "task": {"dataset": dataset, "metric": metric, "resampling": {"holdout": 0.33}},
        "space": {
            "name": "autosklearn-classification",
            "params": {
                "include": {
                    "classifier": ["decision_tree", "gaussian_nb"],
                    "feature_preprocessor": ["no_preprocessing"],
                }
            },
        },
        "search": {"strategy": "design", "params": {"random": 3, "seed": 0}},
        "metafeatures": "handcrafted",
        "budget": {"trials": 10},
        "seed": seed,
    }


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Three real runs of the same design: iris twice (two seeds), wine once."""
    root = tmp_path_factory.mktemp("runs")
    for name, dataset, seed in (
        ("a", "sklearn:iris", 0),
        ("b", "sklearn:iris", 1),
        ("c", "sklearn:wine", 0),
    ):
        run(parse_recipe(design_recipe(dataset, seed)), root / "ablation" / name)
    return root


def test_runs_become_a_table_of_datasets_by_configurations(runs):
    metadata = metadata_from_runs([runs / "ablation"])
    assert metadata.datasets == ["sklearn:iris", "sklearn:wine"]
    assert len(metadata.configs) == 5  # 2 defaults + 3 random, the same in every run
    assert metadata.space == "autosklearn-classification" and metadata.observed_fraction() == 1
    assert np.all((metadata.performance >= 0) & (metadata.performance <= 1))
    assert np.all(metadata.runtimes > 0)
    assert set(metadata.metafeatures.index) == {"sklearn:iris", "sklearn:wine"}
    assert metadata.info["metric"] == "balanced_accuracy" and metadata.info["runs"] == 3
    # iris twice: each cell is the mean of its two runs
    one = metadata_from_runs([runs / "ablation" / "a"])
    two = metadata_from_runs([runs / "ablation" / "b"])
    column = {str(sorted(c.items())): j for j, c in enumerate(metadata.configs)}
    for j, config in enumerate(one.configs):
        k = column[str(sorted(config.items()))]
        mean = (one.performance[0, j] + two.performance[0, two.configs.index(config)]) / 2
        assert metadata.performance[0, k] == pytest.approx(mean)


def test_another_provider_can_describe_the_datasets_again(runs):
    class Sizes(MetaFeatureProvider):
        def compute(self, X, y, task):
            return {"rows": float(len(X)), "classes": float(len(set(y)))}

    metadata = metadata_from_runs([runs], describe=Sizes())
    assert metadata.metafeatures.loc["sklearn:wine"].to_dict() == {"rows": 178.0, "classes": 3.0}


def test_automl_data_build_writes_a_folder_the_folder_source_reads(runs, tmp_path, capsys):
    assert automl(["data", "build", str(runs / "ablation"), "--out", str(tmp_path / "meta")]) == 0
    assert "datasets x configurations: 2 x 5" in capsys.readouterr().out
    loaded = load_metadata(tmp_path / "meta")
    assert np.allclose(loaded.performance, metadata_from_runs([runs]).performance)


def test_what_cannot_be_built_is_said(runs, tmp_path):
    with pytest.raises(AutoMLError, match="no such run or ablation folder"):
        metadata_from_runs([tmp_path / "nothing"])
    (tmp_path / "empty").mkdir()
    with pytest.raises(AutoMLError, match="no run folder"):
        metadata_from_runs([tmp_path / "empty"])
    with pytest.raises(AutoMLError, match="no run on a dataset"):
        metadata_from_runs([runs], space="another-space")
    run(parse_recipe(design_recipe("sklearn:iris", metric="accuracy")), tmp_path / "accuracy")
    with pytest.raises(AutoMLError, match="2 metrics"):
        metadata_from_runs([runs, tmp_path / "accuracy"])


def test_added_configurations_become_columns_and_nothing_measured_is_replaced():
    import pandas as pd

    from automl_core.contracts import MetaData
    from automl_metadata.histories import add_configurations

    def table(datasets, configs, losses, source):
        described = pd.DataFrame({"rows": [float(len(d)) for d in datasets]}, index=datasets)
        return MetaData(
            datasets=datasets,
            configs=[{"model": c} for c in configs],
            performance=np.array(losses, dtype=float),
            runtimes=np.array(losses, dtype=float) * 10,
            metafeatures=described,
            space="s",
            info={"metric": "balanced_accuracy", "source": source, "runs": len(datasets)},
        )

    base = table(["a", "b"], ["rf", "svm"], [[0.1, np.nan], [0.2, 0.3]], "shipped")
    more = table(["b", "c"], ["svm", "catboost"], [[0.9, 0.4], [0.5, 0.6]], "histories")
    joined = add_configurations(base, more)
    assert joined.datasets == ["a", "b", "c"]
    assert [c["model"] for c in joined.configs] == ["rf", "svm", "catboost"]
    expected = [[0.1, np.nan, np.nan], [0.2, 0.3, 0.4], [np.nan, 0.5, 0.6]]
    np.testing.assert_array_equal(joined.performance, np.array(expected))
    np.testing.assert_array_equal(joined.runtimes, np.array(expected) * 10)
    assert list(joined.metafeatures.index) == ["a", "b", "c"]
    assert joined.info["source"] == "shipped" and joined.info["runs"] == 4
    assert joined.info["added_configurations"] == 1

    other_metric = table(["a"], ["lr"], [[0.5]], "x")
    other_metric.info["metric"] = "r2"
    with pytest.raises(AutoMLError, match="two metrics"):
        add_configurations(base, other_metric)
