"""``automl data import-openml``: scikit-learn's saved OpenML responses become the cache
openml-python reads, checked through openml's own public ``get_dataset``; bad folders fail
with errors that say what was expected."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest
import xmltodict
from openml_testdata import (
    SKLEARN_OPENML,
    api,
    dataset_dir,
    feature_columns,
    features,
    nominal_columns,
    quality,
)

from automl_core.errors import DatasetError
from automl_openml.cache import openml_configured
from automl_openml.importer import import_openml, import_openml_command
from automl_openml.sources import load_openml


def copy_responses(dataset_id: int, destination: Path) -> Path:
    """A writable copy of scikit-learn's id_<n> folder (only the response files)."""
    target = destination / f"id_{dataset_id}"
    target.mkdir(parents=True)
    for path in (SKLEARN_OPENML / f"id_{dataset_id}").iterdir():
        if path.name.endswith(".gz"):
            shutil.copy(path, target / path.name)
    return target


def test_import_a_folder_of_folders(empty_cache, capsys, network):
    status = import_openml_command([str(SKLEARN_OPENML)])
    out = capsys.readouterr().out
    folders = sorted(p.name for p in SKLEARN_OPENML.iterdir() if p.name.startswith("id_"))
    assert len(folders) == 15
    imported = sorted(int(p.name) for p in (dataset_dir(empty_cache, 1)).parent.iterdir())
    # every id_<n> folder, plus nothing from id_292's second description ...
    assert imported == sorted(int(name[3:]) for name in folders)
    # ... which is skipped: scikit-learn's api-v1-jd-40981 holds the description of 292
    assert "skipped" in out and "api-v1-jd-40981.json.gz" in out
    assert "describes dataset '292', not 40981" in out
    assert "15 OpenML dataset(s) imported, 1 skipped" in out
    assert status == 1  # something was skipped
    assert "openml:61  iris: 150 rows, description.xml, features.xml, qualities.xml" in out
    # the 10-row copy of adult (48842 rows on OpenML) is pointed out
    assert "NumberOfInstances = 48842 (a truncated copy?)" in out
    # id_1's qualities response is an OpenML error, imported without qualities.xml
    assert "api-v1-jdq-1.json.gz is an OpenML error response (OpenML error 364" in out
    assert not (dataset_dir(empty_cache, 1) / "qualities.xml").exists()
    assert network == []


def test_one_dataset_folder_prints_and_returns_0(empty_cache, capsys):
    assert import_openml_command([str(SKLEARN_OPENML / "id_61")]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == (
        "openml:61  iris: 150 rows, description.xml, features.xml, qualities.xml, dataset.arff"
        f" -> {dataset_dir(empty_cache, 61)}"
    )
    assert sorted(p.name for p in dataset_dir(empty_cache, 61).iterdir()) == [
        "dataset.arff",
        "description.xml",
        "features.xml",
        "qualities.xml",
    ]
    data = gzip.decompress((SKLEARN_OPENML / "id_61" / "data-v1-dl-61.arff.gz").read_bytes())
    assert (dataset_dir(empty_cache, 61) / "dataset.arff").read_bytes() == data


@pytest.mark.parametrize("dataset_id", [61, 62, 3])
def test_public_openml_api_reads_the_imported_cache(empty_cache, network, dataset_id):
    """openml's own get_dataset, asked for everything, finds every file in the cache."""
    import_openml([SKLEARN_OPENML / f"id_{dataset_id}"])
    with openml_configured() as openml:
        dataset = openml.datasets.get_dataset(
            dataset_id,
            download_data=True,
            download_qualities=True,
            download_features_meta_data=True,
        )
        frame, _, nominal, names = dataset.get_data(dataset_format="dataframe")
    assert network == []
    description = api(dataset_id, "jd")["data_set_description"]
    assert dataset.name == description["name"]
    assert dataset.default_target_attribute == description["default_target_attribute"]
    assert dataset.md5_checksum == description["md5_checksum"]
    assert dataset.tag == description["tag"]
    assert dataset.ignore_attribute == (
        [description["ignore_attribute"]] if "ignore_attribute" in description else None
    )
    # features: iris's response packs categories as a JSON string ("nominal_values"), zoo's
    # and kr-vs-kp's list them ("nominal_value"); openml reads both as lists
    expected = features(dataset_id)
    assert [f.name for f in dataset.features.values()] == [f["name"] for f in expected]
    for feature, saved in zip(dataset.features.values(), expected, strict=True):
        assert feature.data_type == saved["data_type"]
        assert feature.number_missing_values == int(saved["number_of_missing_values"])
        if "nominal_values" in saved:
            assert feature.nominal_values == json.loads(saved["nominal_values"])
        elif "nominal_value" in saved:
            assert feature.nominal_values == saved["nominal_value"]
    for key in ("NumberOfInstances", "NumberOfFeatures", "NumberOfClasses"):
        assert dataset.qualities[key] == quality(dataset_id, key)
    assert len(frame) == quality(dataset_id, "NumberOfInstances")
    kept = set(feature_columns(dataset_id))
    assert sorted(n for n, flag in zip(names, nominal, strict=True) if flag and n in kept) == (
        sorted(nominal_columns(dataset_id))
    )


def test_description_xml_is_the_json_element_for_element(empty_cache):
    import_openml([SKLEARN_OPENML / "id_62"])
    text = (dataset_dir(empty_cache, 62) / "description.xml").read_text()
    parsed = xmltodict.parse(text)["oml:data_set_description"]
    saved = api(62, "jd")["data_set_description"]
    assert parsed["@xmlns:oml"] == "http://openml.org/openml"
    assert {k[4:]: v for k, v in parsed.items() if k.startswith("oml:")} == saved


def test_reimport_replaces_the_folder_and_its_stale_pickles(empty_cache, network):
    import_openml([SKLEARN_OPENML / "id_61"])
    load_openml("61")  # openml leaves dataset.pkl.py3 next to dataset.arff
    folder = dataset_dir(empty_cache, 61)
    assert (folder / "dataset.pkl.py3").exists()
    import_openml([SKLEARN_OPENML / "id_61"])
    assert not (folder / "dataset.pkl.py3").exists()
    assert [p.name for p in folder.parent.iterdir()] == ["61"]  # no staging folder left
    assert load_openml("61").n_rows == 150
    assert network == []


def test_plain_json_and_arff_files_are_accepted(empty_cache, tmp_path):
    folder = copy_responses(61, tmp_path)
    for path in list(folder.iterdir()):
        path.with_suffix("").write_bytes(gzip.decompress(path.read_bytes()))
        path.unlink()
    (item,) = import_openml([folder]).imported
    assert (item.dataset_id, item.rows) == (61, 150)


def test_missing_folder_and_folder_without_responses(empty_cache, tmp_path):
    with pytest.raises(DatasetError, match="does not exist"):
        import_openml([tmp_path / "nowhere"])
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(DatasetError) as caught:
        import_openml([empty])
    message = str(caught.value)
    assert f"{empty} holds no OpenML API responses (found: nothing)" in message
    assert "api-v1-jd-<id>.json.gz (description, required)" in message
    assert "data-v1-dl-<file id>.arff.gz" in message
    (empty / "notes.txt").write_text("not an API response")
    (empty / "id_5").mkdir()
    with pytest.raises(DatasetError, match=r"found: id_5, notes\.txt"):
        import_openml([empty])
    with pytest.raises(DatasetError, match="is not a folder"):
        import_openml([empty / "notes.txt"])
    assert not (empty_cache / "openml" / "org").exists()  # nothing written


def test_data_file_that_fails_its_md5_is_not_imported(empty_cache, tmp_path):
    folder = copy_responses(61, tmp_path)
    data = folder / "data-v1-dl-61.arff.gz"
    text = gzip.decompress(data.read_bytes()).replace(b"5.1,3.5,1.4,0.2", b"5.1,3.5,1.4,0.3", 1)
    data.write_bytes(gzip.compress(text))
    with pytest.raises(DatasetError) as caught:
        import_openml([folder])
    message = str(caught.value)
    assert "no OpenML dataset could be imported" in message
    assert "differs from the description's md5_checksum ad484452702105cbf3d30f8deaba39a9" in message
    assert not dataset_dir(empty_cache, 61).exists()


def test_missing_data_file_and_broken_json(empty_cache, tmp_path):
    folder = copy_responses(62, tmp_path)
    (folder / "data-v1-dl-52352.arff.gz").unlink()
    with pytest.raises(DatasetError, match=r"not its data file data-v1-dl-52352\.arff\.gz"):
        import_openml([folder])
    (folder / "api-v1-jd-62.json.gz").write_bytes(gzip.compress(b"{not json"))
    with pytest.raises(DatasetError, match=r"cannot read .*api-v1-jd-62\.json\.gz as"):
        import_openml([folder])


def test_command_usage(capsys):
    assert import_openml_command(["-h"]) == 0
    assert "usage: automl data import-openml" in capsys.readouterr().out
    assert import_openml_command([]) == 2
    assert "the following arguments are required: DIR" in capsys.readouterr().err
