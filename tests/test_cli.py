"""The ``automl`` command, called in-process through its entry function."""

from __future__ import annotations

import json

import yaml
from toy_plugin import toy_recipe

from automl_core.cli import main

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
    assert "search.strategy: got 'randm'" in capsys.readouterr().err


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
