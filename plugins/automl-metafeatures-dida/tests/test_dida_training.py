"""Training on a corpus of real datasets, split by dataset, with cached checkpoints."""

from __future__ import annotations

import pytest

from automl_engine.cli import main as automl
from automl_metafeatures_dida.network import Architecture
from automl_metafeatures_dida.patches import PatchSizes, Training
from automl_metafeatures_dida.train import list_checkpoints, split_corpus, train

CORPUS = ["sklearn:iris", "sklearn:wine", "sklearn:breast_cancer", "sklearn:digits"]
SMALL = Architecture(per_feature=4, first=8, second=0, pooled=8, dense=(8, 4, 4), neighbours=10)
QUICK = Training(steps=4, batch=4, sizes=PatchSizes(rows=(20, 40), features=(2, 4)))


def test_the_corpus_is_split_by_dataset_the_same_for_a_seed():
    fitted, held_out = split_corpus(CORPUS, 0.2, seed=0)
    assert len(held_out) == 2 and sorted(fitted + held_out) == sorted(CORPUS)
    assert split_corpus(CORPUS, 0.2, seed=0) == (fitted, held_out)
    with pytest.raises(ValueError, match="too few"):
        split_corpus(CORPUS[:3], 0.2, seed=0)


def test_a_trained_network_is_cached_and_listed(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("AUTOML_CACHE_DIR", str(tmp_path))
    weights = train(CORPUS, SMALL, QUICK, share=0.5)
    info = weights.info
    assert not set(info["trained_on"]) & set(info["validation"])
    assert 0 <= info["validation_accuracy"] <= 1 and info["steps"] == 4
    again = train(CORPUS, SMALL, QUICK, share=0.5)  # from the cache: nothing trains
    assert again.info == info
    assert [w.info["key"] for _, w in list_checkpoints()] == [info["key"]]
    assert automl(["dida", "list"]) == 0
    assert "2 datasets, 4 steps" in capsys.readouterr().out


def test_ranking_training_on_real_meta_data_is_cached_and_run_by_the_command(
    tmp_path, monkeypatch, capsys
):
    pytest.importorskip("automl_sklearn")  # the space the meta-data's pipelines are of
    import numpy as np

    from automl_core.contracts import MetaData
    from automl_core.plugins import load_plugins
    from automl_core.space import pipeline_space
    from automl_engine.metastore import save_metadata
    from automl_metafeatures_dida.ranking import RankingTraining
    from automl_metafeatures_dida.train import train_ranking

    monkeypatch.setenv("AUTOML_CACHE_DIR", str(tmp_path / "cache"))
    space = pipeline_space(load_plugins().create("space", "autosklearn-classification"))
    assert space is not None
    configs = space.sample(np.random.default_rng(0), 6)
    rng = np.random.default_rng(1)
    metadata = MetaData(
        datasets=CORPUS,
        configs=configs,
        performance=rng.uniform(0.1, 0.5, (len(CORPUS), len(configs))),
        space="autosklearn-classification",
    )
    settings = RankingTraining(steps=3, batch=4, sizes=QUICK.sizes)
    weights = train_ranking(metadata, space, SMALL, settings, share=0.5)
    info = weights.info
    assert info["task"] == "ranking" and info["steps"] == 3
    assert not set(info["trained_on"]) & set(info["validation"])
    assert 0 <= info["validation_accuracy"] <= 1
    assert train_ranking(metadata, space, SMALL, settings, share=0.5).info == info  # cached
    save_metadata(metadata, tmp_path / "meta")
    assert automl(["dida", "list"]) == 0
    assert "ranking, 2 datasets, 3 steps" in capsys.readouterr().out
    command = ["dida", "train", "--metadata", str(tmp_path / "meta"), "--steps", "1"]
    assert automl([*command, "--threads", "1"]) == 0
    assert "configuration ranking on 2 held-out datasets" in capsys.readouterr().out
    assert automl(["dida", "train", "--metadata", str(tmp_path / "nowhere")]) != 0
    assert "no meta-data" in capsys.readouterr().err
