"""Saved model files cannot choose what runs: a model is rebuilt only from the type and function
names that the core and the plugins declare (``automl_engine.model_trust``), and a full disk is
an error, not a pickle.

The crafted files are real skops files of real objects: a pipeline whose first step calls a
function that runs code or writes a file, as a crafted ``model.skops`` would hold. Each is
refused without ``--trust``, and what it would do is not done.
"""

from __future__ import annotations

import functools
import os
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from numpy.testing._private.utils import measure, runstring
from sklearn.dummy import DummyRegressor
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import FunctionTransformer, LabelEncoder
from threadpoolctl import threadpool_limits

from automl_core import hookimpl
from automl_core.errors import AutoMLError
from automl_core.plugins import load_plugins
from automl_core.space import BuildContext
from automl_engine.cli import main
from automl_engine.model import TrainedModel
from automl_engine.run_folder import (
    MODEL_FILE,
    PICKLED_MODEL_FILE,
    import_skops,
    load_saved_model,
    save_model,
)

FEATURES = ["a"]


def crafted_run(tmp_path: Path, first_step: FunctionTransformer) -> Path:
    """A run folder whose ``model.skops`` holds a regression model whose pipeline starts with
    ``first_step``, written by skops itself (what an attacker can do without the project)."""
    X = pd.DataFrame({"a": [1.0, 2.0]})
    pipeline = Pipeline([("first", first_step), ("model", DummyRegressor().fit(X, [0.0, 1.0]))])
    model = TrainedModel("regression", [pipeline], np.ones(1), None, [{}])
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    import_skops().dump({"model": model, "features": FEATURES, "target": "y"}, run_dir / MODEL_FILE)
    return run_dir


def rows(tmp_path: Path) -> Path:
    path = tmp_path / "rows.csv"
    pd.DataFrame({"a": [1.0, 2.0, 3.0]}).to_csv(path, index=False)
    return path


def test_a_model_holding_a_numpy_function_that_runs_code_is_refused_by_predict(tmp_path, capsys):
    """``numpy.testing``'s ``measure`` compiles and executes a string; ``runstring`` executes
    one. Both are NumPy's, once trusted with all of NumPy: ``automl predict`` ran the code."""
    marker = tmp_path / "code-ran"
    code = f"open({str(marker)!r}, 'w').close()"
    step = FunctionTransformer(
        functools.partial(measure, code, 1), inverse_func=functools.partial(runstring, code, {})
    )
    run_dir = crafted_run(tmp_path, step)
    assert main(["predict", str(run_dir), str(rows(tmp_path))]) == 2
    error = capsys.readouterr().err
    assert "neither automl-core nor an installed plugin declares" in error
    assert "numpy.testing._private.utils.measure" in error
    assert "numpy.testing._private.utils.runstring" in error
    assert "automl predict --trust" in error
    assert not marker.exists()
    # the file is a real attack: trusted, the model runs the code when it predicts
    stored = load_saved_model(run_dir, trust=True)
    with pytest.raises(TypeError):  # after the code ran, the next step gets its float
        stored["model"].predict(pd.DataFrame({"a": [1.0]}))
    assert marker.exists()


def test_a_pipeline_starting_with_a_partial_of_savetxt_is_refused(tmp_path):
    """``FunctionTransformer(func=partial(numpy.savetxt, PATH))`` would write the rows given
    to ``predict`` to PATH: ``functools.partial`` and NumPy were trusted, so it loaded."""
    leaked = tmp_path / "leaked.txt"
    step = FunctionTransformer(functools.partial(np.savetxt, str(leaked)))
    run_dir = crafted_run(tmp_path, step)
    with pytest.raises(AutoMLError, match=r"declares \(.*numpy\.savetxt") as refused:
        load_saved_model(run_dir)
    assert str(run_dir / MODEL_FILE) in str(refused.value)
    assert not leaked.exists()
    assert main(["predict", str(run_dir), str(rows(tmp_path))]) == 2
    assert not leaked.exists()
    stored = load_saved_model(run_dir, trust=True)  # the user's own file: it loads, and writes
    with pytest.raises(TypeError):
        stored["model"].predict(pd.DataFrame({"a": [1.0, 2.0]}))
    assert np.loadtxt(leaked).tolist() == [1.0, 2.0]


def test_a_model_naming_os_system_is_refused_unless_trusted(tmp_path):
    step = FunctionTransformer(functools.partial(os.system, "echo never run"))
    run_dir = crafted_run(tmp_path, step)
    name = f"{os.system.__module__}.system"  # posix.system, as skops names it
    assert name in import_skops().get_untrusted_types(file=run_dir / MODEL_FILE)
    with pytest.raises(AutoMLError, match=rf"declares \(.*{name}.*automl predict --trust"):
        load_saved_model(run_dir)
    # --trust is the user's word that they made the file: it loads (and is not run here)
    stored = load_saved_model(run_dir, trust=True)
    assert stored["model"].estimators[0].steps[0][1].func.func is os.system


# --- every component of both default spaces loads back without trust ----------------------

#: Third-party estimators of the spaces, tested only where their library is installed.
BOOSTED = ("lightgbm", "xgboost", "catboost")


def mixed_frame(n: int, task: str) -> tuple[pd.DataFrame, np.ndarray]:
    """Numeric, object, category and bool columns with missing values; three string classes
    or a numeric target."""
    rng = np.random.default_rng(0)
    number = rng.normal(size=n)
    colour = rng.choice(["red", "green", "blue"], size=n)
    X = pd.DataFrame(
        {
            "number": number,
            "count": rng.integers(0, 10, size=n).astype(float),
            "other": rng.normal(size=n),
            "colour": pd.Series(colour, dtype=object),
            "size": pd.Categorical(rng.choice(["S", "M", "L"], size=n)),
            "flag": rng.random(n) < 0.5,
        }
    )
    for column in ["number", "count", "colour", "size"]:
        X.loc[rng.random(n) < 0.1, column] = np.nan
    score = np.nan_to_num(number) + np.where(colour == "red", 1.5, 0.0)
    if task == "regression":
        return X, score + rng.normal(size=n) * 0.1
    return X, np.array(["a", "b", "c"])[np.digitize(score, np.quantile(score, [1 / 3, 2 / 3]))]


def with_components(space, chosen: dict[str, str]) -> dict:
    """The space's default configuration with the ``chosen`` component (at its defaults) in
    each named stage."""
    config = dict(space.default())
    for stage in space.stages:
        if stage.name not in chosen:
            continue
        before = stage.param_prefix(config[stage.choice_name])
        config = {k: v for k, v in config.items() if not k.startswith(before)}
        config[stage.choice_name] = chosen[stage.name]
        defaults = stage.component(chosen[stage.name]).hyperparameters()
        prefix = stage.param_prefix(chosen[stage.name])
        config.update({prefix + k: v for k, v in defaults.get_default_configuration().items()})
    return space.validate(config)


def covering_configs(space, estimators: list[str]) -> list[dict]:
    """Configurations that hold, between them, each of ``estimators`` and every feature
    preprocessor, rescaling, categorical encoding and category coalescence of ``space``.
    Feature preprocessors are paired with ``sgd``, which no forbidden combination names."""
    final = "classifier" if space.task == "classification" else "regressor"
    stages = {stage.name: stage for stage in space.stages}
    plans = [{final: name} for name in estimators]
    if "sgd" in estimators:
        plans += [
            {"feature_preprocessor": c.name, final: "sgd"}
            for c in stages["feature_preprocessor"].components
        ]
    for i, plan in enumerate(plans):
        for stage in ("rescaling", "categorical_encoding", "category_coalescence"):
            components = stages[stage].components
            plan[stage] = components[i % len(components)].name
    return [with_components(space, plan) for plan in plans]


def round_trip(space, estimators: list[str], tmp_path: Path, monkeypatch) -> None:
    """Fit pipelines of ``estimators`` and every other component of ``space`` (as a run
    refits them, at the smallest iteration counts), save them as one model with
    :func:`save_model`, load it back without trust and compare the predictions."""
    from automl_sklearn import plugin

    X, y = mixed_frame(60, space.task)
    encoder = LabelEncoder().fit(y) if space.task == "classification" else None
    target = encoder.transform(y) if encoder is not None else y
    configs = covering_configs(space, estimators)
    fitted = []
    with warnings.catch_warnings(), threadpool_limits(1):
        warnings.simplefilter("ignore")
        for config in configs:
            pipeline = space.build(config, BuildContext(space.task, seed=0, budget=1e-9))
            fitted.append(pipeline.fit(X, target))
    weights = np.full(len(fitted), 1 / len(fitted))
    model = TrainedModel(space.task, fitted, weights, encoder, configs)
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    recipe = {"task": {"dataset": "csv:data.csv", "target": "y"}, "seed": 0}
    payload = {"model": model, "recipe": recipe, "features": list(X.columns), "target": "y"}
    path = save_model(run_dir, payload)
    assert path == run_dir / MODEL_FILE

    skops_io = import_skops()
    named = skops_io.get_untrusted_types(file=path)
    # the plugins that make the pipelines declare what they hold (the core its own model):
    # automl-sklearn, and automl-catboost for its estimator
    declared = set(plugin.trusted_model_types())
    if "catboost" in estimators:
        from automl_catboost import plugin as catboost_plugin

        declared |= set(catboost_plugin.trusted_model_types())
    assert set(named) - declared == {"automl_engine.model.TrainedModel"}
    handed = []
    load = skops_io.load
    monkeypatch.setattr(
        skops_io, "load", lambda file, trusted: handed.append(trusted) or load(file, trusted)
    )
    stored = load_saved_model(run_dir)  # the installed plugins' declarations, no trust
    assert handed == [named]  # skops is told to trust what it reported, checked, no more

    loaded = stored["model"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for before, after in zip(model.estimators, loaded.estimators, strict=True):
            np.testing.assert_array_equal(before.predict(X), after.predict(X))
            if hasattr(before, "predict_proba"):
                np.testing.assert_allclose(before.predict_proba(X), after.predict_proba(X))
        np.testing.assert_array_equal(model.predict(X), loaded.predict(X))


@pytest.fixture(scope="module")
def spaces():
    from automl_sklearn.plugin import COMPONENTS
    from automl_sklearn.spaces import classification_space, regression_space

    # CatBoost's components (automl-catboost) join both spaces where installed
    components = [*COMPONENTS, *catboost_components()]
    # class weighting the default: its wrappers are in the pipelines too
    return {
        "classification": classification_space(components, balancing="weighting"),
        "regression": regression_space(components),
    }


def catboost_components() -> tuple:
    """automl-catboost's ``classifier:catboost`` and ``regressor:catboost``, if installed."""
    try:
        from automl_catboost.components import COMPONENTS
    except ImportError:
        return ()
    return COMPONENTS


def estimator_names(space) -> list[str]:
    final = "classifier" if space.task == "classification" else "regressor"
    return [c.name for c in space.stage(final).components]


@pytest.mark.parametrize("task", ["classification", "regression"])
def test_every_component_of_the_default_spaces_loads_back_without_trust(
    task, spaces, tmp_path, monkeypatch
):
    space = spaces[task]
    estimators = [name for name in estimator_names(space) if name not in BOOSTED]
    round_trip(space, estimators, tmp_path, monkeypatch)


@pytest.mark.parametrize("task", ["classification", "regression"])
@pytest.mark.parametrize("library", BOOSTED)
def test_the_boosted_trees_of_the_default_spaces_load_back_without_trust(
    library, task, spaces, tmp_path, monkeypatch
):
    pytest.importorskip(library)
    space = spaces[task]
    if library not in estimator_names(space):
        pytest.skip(f"no {library} component in the {space.name} space")
    round_trip(space, [library], tmp_path, monkeypatch)


# --- a disk that cannot take the model ----------------------------------------------------


def small_payload() -> dict:
    X = pd.DataFrame({"a": [1.0, 2.0, 3.0]})
    model = TrainedModel("regression", [DummyRegressor().fit(X, [1.0, 2.0, 3.0])], np.ones(1))
    return {"model": model, "features": FEATURES, "target": "y"}


def full_disk_at(path: Path) -> None:
    """``path`` a link to ``/dev/full``: every write there fails with ENOSPC, for real."""
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full on this system")
    path.symlink_to("/dev/full")


def test_a_full_disk_is_a_clear_error_not_a_pickle(tmp_path):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    full_disk_at(run_dir / MODEL_FILE)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "pickled instead" warning either
        with pytest.raises(AutoMLError) as raised:
            save_model(run_dir, small_payload())
    message = str(raised.value)
    assert f"the model could not be saved to {run_dir / MODEL_FILE}" in message
    assert f"no space left on the disk holding {run_dir}" in message
    assert f"`automl resume {run_dir}` to save the model" in message
    assert not (run_dir / PICKLED_MODEL_FILE).exists()
    assert not (run_dir / MODEL_FILE).is_symlink() and not (run_dir / MODEL_FILE).exists()
    assert list(run_dir.iterdir()) == []


def test_the_pickle_stays_for_what_skops_cannot_take_apart_but_not_for_a_full_disk(tmp_path):
    payload = {**small_payload(), "note": complex(1, 2)}  # skops cannot write a complex
    with pytest.warns(UserWarning, match="could not be saved in skops' format"):
        path = save_model(tmp_path, payload)
    assert path == tmp_path / PICKLED_MODEL_FILE and not (tmp_path / MODEL_FILE).exists()

    run_dir = tmp_path / "full"
    run_dir.mkdir()
    full_disk_at(run_dir / PICKLED_MODEL_FILE)
    with pytest.raises(AutoMLError, match=rf"saved to {run_dir / PICKLED_MODEL_FILE}: no space"):
        save_model(run_dir, payload)
    assert list(run_dir.iterdir()) == []


def test_a_plugin_whose_declaration_fails_declares_nothing():
    from automl_engine.model_trust import CORE_MODEL_TYPES, declared_model_types

    class Raising:
        @hookimpl
        def trusted_model_types(self):
            raise RuntimeError("broken")

    class NotNames:
        @hookimpl
        def trusted_model_types(self):
            return [os.system]  # a function, not its name

    class Declaring:
        @hookimpl
        def trusted_model_types(self):
            return ("package.module.Name",)

    plugins = load_plugins(extra=[Raising(), NotNames(), Declaring()], entry_points=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        declared = declared_model_types(plugins)
    assert declared == CORE_MODEL_TYPES | {"package.module.Name"}
    said = " ".join(str(w.message) for w in caught)
    assert "raised RuntimeError: broken" in said and "must return type names" in said
