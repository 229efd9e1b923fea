"""The ranker's labels: BO runs on a pseudo-target from each source's PTEM, scored and
cached."""

from __future__ import annotations

import pytest
from ptem_synthetic import kinds_metadata

from automl_engine.metastore import metadata_fingerprint, save_metadata
from automl_metadata.lookup import TableBenchmark
from automl_warmstart_ptem import labels
from automl_warmstart_ptem.labels import (
    LabelRuns,
    LabelStore,
    checkpoint_trials,
    leave_one_out_scores,
    pair_score,
)

#: small label runs: 12 trials (4 random first), a quickly fitted surrogate and PTEM
SMALL = LabelRuns(
    trials=12,
    runs=2,
    checkpoints=4,
    search={
        "strategy": "smbo",
        "params": {"initial_design": 4},
        "surrogate": {"name": "latent", "params": {"steps": 30, "pretrain_epochs": 200}},
    },
)


def test_checkpoints_are_evenly_spaced_and_end_at_the_last_trial():
    assert checkpoint_trials(30, LabelRuns()) == [2, 5, 8, 11, 14, 17, 20, 23, 26, 29]
    assert checkpoint_trials(12, LabelRuns(trials=12, checkpoints=4)) == [2, 5, 8, 11]
    assert checkpoint_trials(4, LabelRuns(trials=12, checkpoints=4)) == [2, 3]  # a short run


def test_label_settings_are_checked():
    with pytest.raises(ValueError, match="label trials"):
        LabelRuns(trials=0)
    with pytest.raises(ValueError, match="needs a surrogate"):
        LabelRuns(search={"strategy": "smbo"})


def test_a_pair_is_scored_by_real_runs_as_a_mean_regret_the_same_every_time(tmp_path):
    """BO runs on the pseudo-target d1 from d3's PTEM, by table lookup: the score is a
    normalised regret, the seeded runs give it again, and the runs' surrogate pre-trained
    d3's PTEM (the one in the cache)."""
    metadata = kinds_metadata()
    folder = tmp_path / "meta"
    save_metadata(metadata, folder)
    benchmark = TableBenchmark(metadata)
    tiny = LabelRuns(trials=6, runs=1, checkpoints=3, search=SMALL.search)
    score = pair_score(benchmark, (str(folder), {}), "d1", "d3", tiny)
    assert 0 <= score <= 1
    assert pair_score(benchmark, (str(folder), {}), "d1", "d3", tiny) == score
    pretrained = list((tmp_path / "cache" / "latent").rglob("*.npz"))
    assert [p.name.split("-")[0] for p in pretrained] == ["d3"]


def test_scores_are_stored_as_measured_and_not_measured_again(tmp_path, monkeypatch):
    metadata = kinds_metadata(n=4)
    calls = []

    def measured(benchmark, reference, target, source, settings, plugins=None):
        calls.append((target, source))
        return float(int(target[1:]) * 10 + int(source[1:]))

    monkeypatch.setattr(labels, "pair_score", measured)
    store = LabelStore(metadata_fingerprint(metadata), "kinds", SMALL)
    sources = ["d0", "d1", "d2"]
    first = leave_one_out_scores(None, ("x", {}), sources, SMALL, store)  # type: ignore[arg-type]
    assert len(calls) == 6 and first["d2"] == {"d0": 20.0, "d1": 21.0}
    assert store.path.exists()
    calls.clear()
    again = LabelStore(metadata_fingerprint(metadata), "kinds", SMALL)
    assert leave_one_out_scores(None, ("x", {}), sources, SMALL, again) == first  # type: ignore[arg-type]
    assert calls == []
    other = LabelStore(metadata_fingerprint(metadata), "kinds", LabelRuns(trials=13))
    assert other.path != store.path and other.get("d2", "d0") is None
