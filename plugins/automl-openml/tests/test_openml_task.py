"""The ``openml-task:<id>`` source. Task files are generated here in the layout openml
reads (``task.xml`` as the OpenML API writes it, ``datasplits.arff`` with type, rowid,
repeat and fold), for datasets of the imported cache; the splits are scikit-learn's, made
with fixed seeds, so the expected rows are known."""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import yaml
from openml_testdata import SKLEARN_OPENML, dataset_dir, task_dir
from sklearn.model_selection import ShuffleSplit, StratifiedKFold

from automl_core.errors import DatasetError
from automl_engine.cli import main
from automl_engine.history import RunHistory
from automl_engine.run_folder import HISTORY_FILE
from automl_engine.sources import load_dataset
from automl_engine.tasks import split_test
from automl_openml.sources import load_openml, load_openml_task

IRIS_TASK = 990061  # ids far above OpenML's (~400k) so no one mistakes them for real tasks
CPU_TASK = 990561

TASK_XML = """<oml:task xmlns:oml="http://openml.org/openml">
  <oml:task_id>{task_id}</oml:task_id>
  <oml:task_name>Task {task_id}: {name} ({type_name})</oml:task_name>
  <oml:task_type_id>{type_id}</oml:task_type_id>
  <oml:task_type>{type_name}</oml:task_type>
  <oml:input name="source_data">
    <oml:data_set>
      <oml:data_set_id>{dataset_id}</oml:data_set_id>
      <oml:target_feature>{target}</oml:target_feature>
    </oml:data_set>
  </oml:input>
  <oml:input name="estimation_procedure">
    <oml:estimation_procedure>
      <oml:id>{procedure_id}</oml:id>
      <oml:type>{procedure}</oml:type>
      <oml:data_splits_url>https://api.openml.org/api_splits/get/{task_id}/Task_{task_id}_splits.arff</oml:data_splits_url>
      <oml:parameter name="number_repeats">{repeats}</oml:parameter>
      <oml:parameter name="number_folds">{folds}</oml:parameter>
      <oml:parameter name="percentage">{percentage}</oml:parameter>
      <oml:parameter name="stratified_sampling">{stratified}</oml:parameter>
    </oml:estimation_procedure>
  </oml:input>
  <oml:input name="evaluation_measures">
    <oml:evaluation_measures>
      <oml:evaluation_measure>{measure}</oml:evaluation_measure>
    </oml:evaluation_measures>
  </oml:input>
</oml:task>
"""


def write_task(root: Path, task_id: int, splits: list[list[tuple[np.ndarray, np.ndarray]]], **xml):
    """Write task.xml and datasplits.arff; ``splits[repeat][fold] = (train, test)``."""
    folder = task_dir(root, task_id)
    folder.mkdir(parents=True)
    (folder / "task.xml").write_text(TASK_XML.format(task_id=task_id, **xml))
    lines = [
        f"@RELATION Task_{task_id}_splits",
        "",
        "@ATTRIBUTE type {TRAIN,TEST}",
        "@ATTRIBUTE rowid INTEGER",
        "@ATTRIBUTE repeat INTEGER",
        "@ATTRIBUTE fold INTEGER",
        "",
        "@DATA",
    ]
    for repeat, folds in enumerate(splits):
        for fold, (train, test) in enumerate(folds):
            lines += [f"TRAIN,{row},{repeat},{fold}" for row in train]
            lines += [f"TEST,{row},{repeat},{fold}" for row in test]
    (folder / "datasplits.arff").write_text("\n".join(lines) + "\n")
    return folder


def iris_splits() -> list[list[tuple[np.ndarray, np.ndarray]]]:
    """Two repeats of stratified 10-fold cross-validation over iris's 150 rows."""
    y = load_openml("61").y
    return [
        list(StratifiedKFold(10, shuffle=True, random_state=repeat).split(np.zeros(150), y))
        for repeat in range(2)
    ]


IRIS_XML = {
    "name": "iris",
    "type_id": 1,
    "type_name": "Supervised Classification",
    "dataset_id": 61,
    "target": "class",
    "procedure_id": 1,
    "procedure": "crossvalidation",
    "repeats": 2,
    "folds": 10,
    "percentage": "",
    "stratified": "true",
    "measure": "predictive_accuracy",
}


@pytest.fixture
def task_cache(cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the imported iris and cpu datasets, with the generated tasks beside them."""
    root = tmp_path / "automl-cache"
    for dataset_id in (61, 561):
        shutil.copytree(dataset_dir(cache, dataset_id), dataset_dir(root, dataset_id))
    monkeypatch.setenv("AUTOML_CACHE_DIR", str(root))
    return root


def test_classification_task_carries_its_first_split(task_cache, plugins, network):
    splits = iris_splits()
    write_task(task_cache, IRIS_TASK, splits, **IRIS_XML)
    data = load_dataset(plugins, f"openml-task:{IRIS_TASK}")
    assert (data.name, data.task, data.n_rows, data.n_features) == (
        f"openml-task:{IRIS_TASK}",
        "classification",
        150,
        4,
    )
    split = data.info["openml_split"]
    assert (split["task_id"], split["repeat"], split["fold"]) == (IRIS_TASK, 0, 0)
    assert split["estimation_procedure"] == "crossvalidation"
    assert split["parameters"]["number_folds"] == "10"
    assert (split["train_size"], split["test_size"]) == (135, 15)
    train, test = splits[0][0]
    assert data.test_rows.tolist() == sorted(test.tolist())  # repeat 0, fold 0 ...
    assert data.test_rows.tolist() != sorted(splits[1][0][1].tolist())  # ... not repeat 1's
    assert Counter(data.y[data.test_rows].tolist()) == {
        "Iris-setosa": 5,
        "Iris-versicolor": 5,
        "Iris-virginica": 5,
    }
    train_part, test_part = split_test(data, None, seed=0)
    assert (train_part.n_rows, test_part.n_rows) == (135, 15)
    assert train_part.X.equals(data.X.iloc[sorted(train.tolist())].reset_index(drop=True))
    assert data.info["openml_task_id"] == IRIS_TASK and data.info["dataset"] == "openml:61"
    assert network == []


def test_regression_holdout_task(task_cache, network):
    train, test = next(ShuffleSplit(1, test_size=0.33, random_state=0).split(np.zeros(209)))
    xml = {
        **IRIS_XML,
        "name": "cpu",
        "type_id": 2,
        "type_name": "Supervised Regression",
        "dataset_id": 561,
        "target": "class",
        "procedure_id": 2,
        "procedure": "holdout",
        "repeats": 1,
        "folds": 1,
        "percentage": 33,
        "stratified": "false",
        "measure": "mean_absolute_error",
    }
    write_task(task_cache, CPU_TASK, [[(train, test)]], **xml)
    data = load_openml_task(str(CPU_TASK))
    assert data.task == "regression" and data.n_rows == 209
    split = data.info["openml_split"]
    assert (split["train_size"], split["test_size"]) == (140, 69)
    assert data.test_rows.tolist() == sorted(test.tolist())
    assert network == []


def test_task_fixes_target_and_type(task_cache):
    write_task(task_cache, IRIS_TASK, iris_splits(), **IRIS_XML)
    assert load_openml_task(str(IRIS_TASK), target="class", task="classification").n_rows == 150
    with pytest.raises(DatasetError, match=r"the task fixes the target \('class'\)"):
        load_openml_task(str(IRIS_TASK), target="petalwidth")
    with pytest.raises(DatasetError, match=r"the task fixes the task \('classification'\)"):
        load_openml_task(str(IRIS_TASK), task="regression")


def test_split_outside_the_dataset_is_rejected(task_cache):
    bad = [[(np.arange(0, 140), np.arange(140, 151))]]  # iris has rows 0..149
    write_task(task_cache, IRIS_TASK, bad, **IRIS_XML)
    with pytest.raises(DatasetError, match=r"does not fit its dataset \(150 rows\): row ids"):
        load_openml_task(str(IRIS_TASK))


def test_unsupervised_task_type_is_rejected(task_cache):
    xml = {**IRIS_XML, "type_id": 5, "type_name": "Clustering"}
    write_task(task_cache, IRIS_TASK, iris_splits(), **xml)
    with pytest.raises(DatasetError, match=r"is a 'Clustering' task \(type 5\)"):
        load_openml_task(str(IRIS_TASK))


def test_task_without_its_split_file_says_where_and_how(task_cache, network):
    folder = write_task(task_cache, IRIS_TASK, iris_splits(), **IRIS_XML)
    (folder / "datasplits.arff").unlink()
    with pytest.raises(DatasetError) as caught:
        load_openml_task(str(IRIS_TASK))
    message = str(caught.value)
    assert message.startswith(f"OpenML task {IRIS_TASK} is not in the local cache")
    assert f"Searched {folder}/ for task.xml and datasplits.arff" in message
    assert f"tasks/{IRIS_TASK}/" in message and "$AUTOML_CACHE_DIR" in message
    assert len(network) == 1
    assert (folder / "task.xml").exists()  # what was cached is kept
    with pytest.raises(DatasetError, match=r"numeric id, e\.g\. 'openml-task:61'"):
        load_openml_task("iris-cv")


def test_command_line_import_then_run_on_the_tasks_split(empty_cache, tmp_path, capsys):
    """`automl data import-openml` through the core's CLI, then `automl run` on the task: the
    final model is scored on exactly the task's 15 test rows."""
    assert main(["data", "import-openml", str(SKLEARN_OPENML / "id_61")]) == 0
    assert "openml:61" in capsys.readouterr().out
    write_task(empty_cache, IRIS_TASK, iris_splits(), **IRIS_XML)
    recipe = {
        "name": "task",
        "task": {"dataset": f"openml-task:{IRIS_TASK}", "metric": "accuracy"},
        "space": "autosklearn-classification",
        "budget": {"trials": 2},
    }
    path = tmp_path / "recipe.yaml"
    path.write_text(yaml.safe_dump(recipe))
    assert main(["run", str(path), "--out", str(tmp_path / "run"), "--quiet"]) == 0
    assert "test accuracy" in capsys.readouterr().out
    with RunHistory(tmp_path / "run" / HISTORY_FILE) as history:
        assert history.get_meta("dataset")["train_rows"] == 135
    recipe["task"]["test_size"] = 0.2
    path.write_text(yaml.safe_dump(recipe))
    assert main(["run", str(path), "--out", str(tmp_path / "run2"), "--quiet"]) == 2
    assert "defines its own test split (15 rows)" in capsys.readouterr().err
