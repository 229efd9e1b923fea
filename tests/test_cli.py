"""The ``automl`` command, called in-process through its entry function."""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import pytest
import yaml
from sklearn.datasets import load_diabetes, load_iris
from toy_plugin import toy_recipe

from automl_core import hookimpl
from automl_engine.cli import main
from automl_engine.run_folder import load_saved_model

QUICK = {
    "name": "cli",
    "task": {"dataset": "keel:iris", "metric": "accuracy", "test_size": 0.3},
    "space": {
        "name": "autosklearn-classification",
        "params": {"include": {"classifier": ["decision_tree", "k_nearest_neighbors"]}},
    },
    "search": "random",
    "budget": {"trials": 4},
    "seed": 0,
}


def write(tmp_path, data, name="recipe.yaml"):
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data))
    return path


def test_plugins_json_lists_builtins_and_sklearn_components_with_versions(capsys):
    assert main(["plugins", "--json"]) == 0
    listing = json.loads(capsys.readouterr().out)
    entries = {(c["kind"], c["name"]): c for c in listing["components"]}
    assert entries[("search_strategy", "random")]["distribution"] == "automl-core"
    assert entries[("executor", "sequential")]["version"] == "0.1.0"
    forest = entries[("component", "classifier:random_forest")]
    assert forest["distribution"] == "automl-sklearn" and forest["version"]
    assert ("space", "autosklearn-regression") in entries
    assert listing["broken"] == []


def test_plugins_kind_filter(capsys):
    assert main(["plugins", "--kind", "executor", "--json"]) == 0
    kinds = {c["kind"] for c in json.loads(capsys.readouterr().out)["components"]}
    assert kinds == {"executor"}


def test_validate_accepts_a_good_recipe_and_rejects_a_bad_one(tmp_path, capsys):
    assert main(["validate", str(write(tmp_path, QUICK))]) == 0
    assert "valid" in capsys.readouterr().out
    code = main(["validate", str(write(tmp_path, QUICK)), "--set", "search=randm"])
    assert code == 2
    assert "search: got 'randm'" in capsys.readouterr().err


def test_run_then_show_on_a_real_keel_dataset(tmp_path, capsys):
    out = tmp_path / "run"
    assert (
        main(
            [
                "run",
                str(write(tmp_path, QUICK)),
                "--out",
                str(out),
                "--quiet",
                "--set",
                "budget.trials=5",
            ]
        )
        == 0
    )
    printed = capsys.readouterr().out
    assert "trials: 5 (trial budget reached" in printed and "test accuracy:" in printed
    assert main(["show", str(out), "--top", "3"]) == 0
    shown = capsys.readouterr().out
    assert "5 trials on keel:iris" in shown
    assert len([line for line in shown.splitlines() if "random" in line]) == 3
    assert "\nfinal model: trial " in shown and " 1.00; the best trial" in shown


def test_show_on_a_folder_without_a_run(tmp_path, capsys):
    assert main(["show", str(tmp_path)]) == 2
    assert "is not a run folder" in capsys.readouterr().err


def test_bad_data_is_a_clear_error(tmp_path, capsys):
    csv = tmp_path / "one_class.csv"
    csv.write_text("a,b,label\n1,2,x\n3,4,x\n")
    recipe = toy_recipe(
        task={"dataset": f"csv:{csv}", "target": "label"}, space="autosklearn-classification"
    )
    assert main(["run", str(write(tmp_path, recipe)), "--out", str(tmp_path / "r"), "--quiet"]) == 2
    assert "at least 2 classes" in capsys.readouterr().err


# --- named recipes ---------------------------------------------------------------------------


def test_plugins_lists_the_named_recipes_with_their_descriptions(capsys):
    assert main(["plugins", "--kind", "recipe"]) == 0
    lines = capsys.readouterr().out.splitlines()
    for name in ("default-classification", "default-regression"):
        (line,) = [line for line in lines if line.strip().startswith(name)]
        assert "automl 0.1.0" in line and "The estimators' default" in line


class QuickRecipe:
    """Registers QUICK as the named recipe ``quick``."""

    @hookimpl
    def register_recipes(self, register):
        register("quick", QUICK, "four random trials on KEEL's iris")


@pytest.fixture
def quick_recipe(monkeypatch):
    from automl_core import plugins as plugin_module

    monkeypatch.setattr(
        "automl_engine.cli.load_plugins",
        lambda: plugin_module.load_plugins(extra=[QuickRecipe()]),
    )


def test_run_and_validate_a_named_recipe(tmp_path, capsys, quick_recipe):
    assert main(["validate", "quick"]) == 0
    assert "quick: valid (strategy random" in capsys.readouterr().out
    out = tmp_path / "run"
    assert main(["run", "quick", "--out", str(out), "--quiet", "--set", "budget.trials=2"]) == 0
    assert "trials: 2 (trial budget reached" in capsys.readouterr().out
    assert yaml.safe_load((out / "recipe.yaml").read_text())["name"] == "cli"


def test_a_file_wins_over_a_named_recipe(tmp_path, capsys, quick_recipe, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path, {**QUICK, "search": "randm"}, name="quick")
    assert main(["validate", "quick"]) == 2
    assert "search: got 'randm'" in capsys.readouterr().err


def test_an_unknown_recipe_is_neither_a_file_nor_a_name(capsys):
    assert main(["run", "no-such-recipe", "--quiet"]) == 2
    error = capsys.readouterr().err
    assert "no-such-recipe: got 'no-such-recipe', expected an existing recipe file" in error
    assert "registered recipes: default-classification, default-regression" in error


def test_a_default_recipe_on_the_command_line_asks_for_a_dataset(tmp_path, capsys):
    code = main(["run", "default-classification", "--out", str(tmp_path / "r"), "--quiet"])
    assert code == 2
    error = capsys.readouterr().err
    assert "'memory:data' is data held in memory" in error
    assert "--set task.dataset=csv:FILE" in error


# --- predict ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def iris_run(tmp_path_factory):
    """A run on a CSV file of iris (target ``species``), and that file."""
    folder = tmp_path_factory.mktemp("predict")
    frame = load_iris(as_frame=True).frame.rename(columns={"target": "species"})
    frame["species"] = frame["species"].map(dict(enumerate(["setosa", "versicolor", "virginica"])))
    data = folder / "iris.csv"
    frame.to_csv(data, index=False)
    recipe = {**QUICK, "task": {"dataset": f"csv:{data}", "target": "species"}}
    assert main(["run", str(write(folder, recipe)), "--out", str(folder / "run"), "--quiet"]) == 0
    return folder / "run", data, frame


def read_output(text):
    return pd.read_csv(io.StringIO(text))


def test_predict_writes_labels_and_probabilities(iris_run, capsys, tmp_path):
    run_dir, data, frame = iris_run
    capsys.readouterr()
    assert main(["predict", str(run_dir), str(data)]) == 0
    labels = read_output(capsys.readouterr().out)
    assert list(labels.columns) == ["species"] and len(labels) == 150
    assert (labels["species"] == frame["species"]).mean() > 0.9
    assert (
        main(["predict", str(run_dir), str(data), "--proba", "--out", str(tmp_path / "p.csv")]) == 0
    )
    assert "150 predictions written to" in capsys.readouterr().err
    proba = pd.read_csv(tmp_path / "p.csv")
    assert list(proba.columns) == ["setosa", "versicolor", "virginica"]
    assert np.allclose(proba.sum(axis=1), 1)
    model = load_saved_model(run_dir)["model"]
    assert np.allclose(proba.to_numpy(), model.predict_proba(frame.drop(columns="species")))


def test_predict_takes_the_columns_in_any_order_without_the_target(iris_run, capsys, tmp_path):
    run_dir, _, frame = iris_run
    shuffled = frame.drop(columns="species")[list(reversed(frame.columns[:-1]))]
    shuffled.to_csv(tmp_path / "features.csv", index=False)
    assert main(["predict", str(run_dir), str(tmp_path / "features.csv")]) == 0
    shuffled_predictions = read_output(capsys.readouterr().out)
    assert len(shuffled_predictions) == 150
    frame.drop(columns="species").to_csv(tmp_path / "in_order.csv", index=False)
    assert main(["predict", str(run_dir), str(tmp_path / "in_order.csv")]) == 0
    assert shuffled_predictions.equals(read_output(capsys.readouterr().out))


def test_predict_names_missing_and_extra_columns(iris_run, capsys, tmp_path):
    run_dir, _, frame = iris_run
    wrong = frame.drop(columns=["petal width (cm)"]).assign(colour="red")
    wrong.to_csv(tmp_path / "wrong.csv", index=False)
    assert main(["predict", str(run_dir), str(tmp_path / "wrong.csv")]) == 2
    error = capsys.readouterr().err
    assert "lacks the training features ['petal width (cm)']" in error
    assert "has columns the model was not trained on ['colour']" in error
    assert "the target 'species' may be present and is ignored" in error


def test_predict_errors_for_folders_files_and_tasks(iris_run, capsys, tmp_path):
    run_dir, data, _ = iris_run
    assert main(["predict", str(tmp_path / "nothing"), str(data)]) == 2
    assert "holds no model (model.skops is missing): no such folder" in capsys.readouterr().err
    assert main(["predict", str(tmp_path), str(data)]) == 2
    assert "not a run folder" in capsys.readouterr().err
    assert main(["predict", str(run_dir), str(tmp_path / "none.csv")]) == 2
    assert "cannot read csv file" in capsys.readouterr().err
    regression = tmp_path / "regression"
    recipe = {
        **QUICK,
        "task": {"dataset": "sklearn:diabetes"},
        "space": {
            "name": "autosklearn-regression",
            "params": {"include": {"regressor": ["decision_tree"]}},
        },
        "budget": {"trials": 2},
    }
    assert main(["run", str(write(tmp_path, recipe)), "--out", str(regression), "--quiet"]) == 0
    features = tmp_path / "diabetes.csv"
    load_diabetes(as_frame=True).frame.to_csv(features, index=False)
    capsys.readouterr()
    assert main(["predict", str(regression), str(features), "--proba"]) == 2
    assert "--proba needs a classification model" in capsys.readouterr().err
    assert main(["predict", str(regression), str(features)]) == 0
    values = read_output(capsys.readouterr().out)
    assert list(values.columns) == ["target"] and values["target"].std() > 0


def test_predict_with_an_estimators_run_folder(tmp_path, capsys):
    """A fit with output_dir leaves a run folder `automl predict` reads: the columns are
    the DataFrame's."""
    from automl_engine.estimator import AutoMLClassifier

    frame = load_iris(as_frame=True).frame
    X, y = frame.drop(columns="target"), frame["target"]
    recipe = {k: v for k, v in QUICK.items() if k != "task"}
    model = AutoMLClassifier(recipe=recipe, max_trials=2, ensemble_size=1, output_dir=tmp_path)
    model.fit(X, y)
    X.to_csv(tmp_path / "X.csv", index=False)
    assert main(["predict", str(model.run_dir_), str(tmp_path / "X.csv"), "--proba"]) == 0
    proba = read_output(capsys.readouterr().out)
    assert list(proba.columns) == ["0", "1", "2"]
    assert np.allclose(proba.to_numpy(), model.predict_proba(X))
