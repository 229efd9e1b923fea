"""Training on a corpus of real datasets, split by dataset, with cached checkpoints."""

from __future__ import annotations

import pytest

from automl_core.cli import main as automl
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
