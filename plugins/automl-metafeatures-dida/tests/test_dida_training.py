"""Training on a corpus of real datasets, split by dataset, with cached checkpoints."""

from __future__ import annotations

import numpy as np
import pytest

from automl_engine.cli import main as automl
from automl_metafeatures_dida.network import Architecture
from automl_metafeatures_dida.patches import PatchSizes, Training, accuracy, sample_pairs
from automl_metafeatures_dida.train import (
    VALIDATION_PAIRS,
    list_checkpoints,
    load_tables,
    split_corpus,
    train,
)

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
    drawn: list = []  # the pairs the held-out accuracy is measured on, and their tables

    def spied(tables, *args):
        pairs = sample_pairs(tables, *args)
        drawn.append((tables, pairs))
        return pairs

    monkeypatch.setattr("automl_metafeatures_dida.train.sample_pairs", spied)
    weights = train(CORPUS, SMALL, QUICK, share=0.5)
    info = weights.info
    assert not set(info["trained_on"]) & set(info["validation"])
    assert info["steps"] == 4
    # the recorded accuracy is the saved network's, on pairs of the held-out datasets only
    ((tables, pairs),) = drawn
    held_out = load_tables(info["validation"])
    assert len(pairs) == VALIDATION_PAIRS and len(tables) == len(held_out)
    for (x, y), (x_held, y_held) in zip(tables, held_out.values(), strict=True):
        assert np.array_equal(x, x_held) and np.array_equal(y, y_held)
    assert info["validation_accuracy"] == accuracy(weights.network(), pairs)
    again = train(CORPUS, SMALL, QUICK, share=0.5)  # from the cache: nothing trains
    assert again.info == info and len(drawn) == 1
    assert [w.info["key"] for _, w in list_checkpoints()] == [info["key"]]
    assert automl(["dida", "list"]) == 0
    assert "2 datasets, 4 steps" in capsys.readouterr().out


def test_ranking_training_on_meta_data_of_the_space_is_cached_and_run_by_the_command(
    tmp_path, monkeypatch, capsys
):
    """Real datasets and pipelines of the default space, with random performances: this
    checks the split, the cache and the command, not that the ranking learns (that is
    benchmarks/dida_ranking.py's, on real meta-data)."""
    pytest.importorskip("automl_sklearn")  # the space the meta-data's pipelines are of
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
    assert train_ranking(metadata, space, SMALL, settings, share=0.5).info == info  # cached
    save_metadata(metadata, tmp_path / "meta")
    assert automl(["dida", "list"]) == 0
    assert "ranking, 2 datasets, 3 steps" in capsys.readouterr().out
    command = ["dida", "train", "--metadata", str(tmp_path / "meta"), "--steps", "1"]
    assert automl([*command, "--threads", "1"]) == 0
    assert "configuration ranking on 2 held-out datasets" in capsys.readouterr().out
    assert automl(["dida", "train", "--metadata", str(tmp_path / "nowhere")]) != 0
    assert "no meta-data" in capsys.readouterr().err
