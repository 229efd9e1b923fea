"""A saved model's file is written in time linear in the arrays it holds.

skops (0.16) asks its zip archive for a fresh list of every member before writing each numpy
array, so a model of many small arrays (HistGradientBoosting: three per tree) took time
quadratic in them: five bagged fold models of a 10-class problem took 175 s to save, one
took 5 s. ``run_folder.save_model`` has skops write through an archive whose ``namelist`` is
a view of its name index. The tests assert that mechanism (no list of members is built
during a save), not a time, and that the file it writes loads back to the same model.
"""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
from sklearn.datasets import load_digits
from sklearn.ensemble import HistGradientBoostingClassifier

from automl_core.errors import AutoMLError
from automl_engine.run_folder import import_skops, save_model


@pytest.fixture(scope="module")
def boosted_models() -> tuple[np.ndarray, list[HistGradientBoostingClassifier]]:
    """Two small 10-class boosted models: 10 classes x 5 iterations x 3 arrays each."""
    features, labels = load_digits(return_X_y=True)
    models = [
        HistGradientBoostingClassifier(max_iter=5, early_stopping=False, random_state=seed).fit(
            features[:400], labels[:400]
        )
        for seed in (0, 1)
    ]
    return features[400:450], models


def counted_namelist(monkeypatch: pytest.MonkeyPatch) -> list[type]:
    """Record the type of every ``ZipFile.namelist`` answer from now on."""
    answers: list[type] = []
    stock = zipfile.ZipFile.namelist

    def recording(self: zipfile.ZipFile) -> object:
        answer = stock(self)
        answers.append(type(answer))
        return answer

    monkeypatch.setattr(zipfile.ZipFile, "namelist", recording)
    return answers


def test_saving_a_model_builds_no_list_of_the_archives_members(
    tmp_path: Path, boosted_models, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, models = boosted_models
    lists_built = counted_namelist(monkeypatch)
    save_model(tmp_path, {"model": models})
    assert lists_built == [], "skops built the archive's member list while saving"


def test_skops_alone_builds_one_list_per_array_which_the_fix_avoids(
    tmp_path: Path, boosted_models, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The premise of the fix: stock skops asks for the member list once per array."""
    _, models = boosted_models
    lists_built = counted_namelist(monkeypatch)
    import_skops().dump({"model": models}, tmp_path / "stock.skops")
    assert len(lists_built) >= 2 * 10 * 5 and set(lists_built) == {list}


def test_a_model_saved_through_the_indexed_archive_loads_back_the_same(
    tmp_path: Path, boosted_models
) -> None:
    rows, models = boosted_models
    skops_io = import_skops()
    path = save_model(tmp_path, {"model": models})
    loaded = skops_io.load(path, trusted=skops_io.get_untrusted_types(file=path))
    for saved, original in zip(loaded["model"], models, strict=True):
        np.testing.assert_array_equal(saved.predict_proba(rows), original.predict_proba(rows))


def test_skops_archive_class_is_put_back_after_a_save_that_fails(tmp_path: Path) -> None:
    import_skops()
    persist = sys.modules["skops.io._persist"]
    with pytest.raises(AutoMLError, match="could not be saved"):
        save_model(tmp_path / "missing-folder", {"model": 1})
    assert persist.ZipFile is zipfile.ZipFile
