"""`automl validate` knows what DeepPipe's meta-data can do (issue 46): meta-data over another
space is refused before any run, and validating never downloads meta-data to find out."""

from __future__ import annotations

import yaml

from automl_engine.cli import main
from automl_engine.metastore import save_metadata


def recipe_file(folder, metadata: str):
    path = folder / "recipe.yaml"
    surrogate = {"name": "deeppipe", "params": {"metadata": metadata, "preset": "quick"}}
    path.write_text(
        yaml.safe_dump(
            {
                "name": "dp",
                "task": {"dataset": "sklearn:iris", "metric": "accuracy"},
                "space": "autosklearn-classification",
                "search": {"name": "smbo", "surrogate": surrogate},
                "budget": {"wall_time": 20},
            }
        )
    )
    return path


def test_meta_data_over_another_space_is_refused_by_validate(family, tmp_path, capsys):
    folder = tmp_path / "family"
    save_metadata(family, folder)  # a pool of synthetic pipelines, not auto-sklearn's space
    assert main(["validate", str(recipe_file(tmp_path, str(folder)))]) == 2
    error = capsys.readouterr().err
    assert "search.surrogate: got 'deeppipe'" in error
    assert "is meta-data over another space" in error and "this run's" in error


def test_a_source_not_converted_here_is_left_for_the_run_to_check(tmp_path, monkeypatch, capsys):
    """On an empty cache PMF is not converted: validate does not download it (the tests give
    pip no index: a download would fail) and leaves the layout check to the run."""
    monkeypatch.setenv("AUTOML_CACHE_DIR", str(tmp_path / "empty-cache"))
    assert main(["validate", str(recipe_file(tmp_path, "pmf"))]) == 0
    assert "valid" in capsys.readouterr().out
    assert not (tmp_path / "empty-cache" / "packages").exists()
