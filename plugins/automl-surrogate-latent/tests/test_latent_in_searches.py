"""The latent surrogate in searches: smbo on a table lookup (EI over the whole pool), with
and without a PTEM, and handed a PTEM by a warm start."""

from __future__ import annotations

import numpy as np
import pytest
from latent_synthetic import family_metadata

from automl_core.contracts import SearchContext, WarmStart
from automl_engine.history import RunHistory
from automl_engine.metastore import save_metadata
from automl_engine.recipe import parse_recipe
from automl_engine.run_folder import HISTORY_FILE
from automl_engine.runner import run
from automl_spaces.acquisition import prepared_surrogate
from automl_surrogate_latent.pretrain import PTEM
from automl_surrogate_latent.surrogate import LatentSurrogate


def lookup_recipe(folder, surrogate: dict, trials: int = 12):
    return parse_recipe(
        {
            "name": "latent",
            "task": {
                "benchmark": {"name": "table", "params": {"path": str(folder)}},
                "dataset": "d5",
            },
            "search": {"strategy": "smbo", "params": {"initial_design": 6}, "surrogate": surrogate},
            "budget": {"trials": trials},
            "seed": 0,
        }
    )


@pytest.mark.parametrize("pretrained", [False, True])
def test_smbo_searches_a_pool_with_it(tmp_path, pretrained):
    folder = tmp_path / "meta"
    save_metadata(family_metadata(), folder)
    params = {"steps": 30}
    if pretrained:
        params |= {"metadata": str(folder), "source": "d0", "pretrain_epochs": 50}
    summary = run(lookup_recipe(folder, {"name": "latent", "params": params}), tmp_path / "run")
    with RunHistory(tmp_path / "run" / HISTORY_FILE) as history:
        trials = history.trials()
    assert len(trials) == 12 and all(t.status == "ok" for t in trials)
    assert any(t.trial.origin == "acquisition" for t in trials)
    assert len({t.trial.config["candidate"] for t in trials}) == 12
    assert summary.benchmark["normalised_regret"] >= 0


def test_a_warm_starts_ptem_reaches_the_surrogate(tmp_path):
    """What a warm-starter hands over as ``surrogate_state`` becomes the start of every fit."""
    metadata = family_metadata()
    source = LatentSurrogate(metadata=metadata, source="d1", pretrain_epochs=30)
    source.prepare_space(metadata.pool)
    ptem = source._start
    assert isinstance(ptem, PTEM)
    context = SearchContext(space=metadata.pool, seed=0, warm_start=WarmStart(surrogate_state=ptem))
    surrogate = prepared_surrogate(lambda: LatentSurrogate(steps=10), metadata.pool, context)
    assert surrogate._start is ptem
    rows = metadata.pool.encodings[:10]
    surrogate.fit(rows, metadata.performance[3, :10])
    assert np.all(np.isfinite(surrogate.predict(rows)[0]))


def test_a_warm_start_naming_a_source_is_pre_trained_with_the_surrogates_settings():
    """A warm-starter that does not import this plugin (``ptem``) hands over the meta-data
    and the source: the surrogate pre-trains that PTEM with its own settings (cached)."""
    metadata = family_metadata()
    state = {"metadata": metadata, "metadata_params": {}, "source": "d2"}
    warm_start = WarmStart(surrogate_state=state)
    context = SearchContext(space=metadata.pool, seed=0, warm_start=warm_start)
    surrogate = prepared_surrogate(
        lambda: LatentSurrogate(steps=10, pretrain_epochs=30), metadata.pool, context
    )
    ptem = surrogate._start
    assert isinstance(ptem, PTEM) and ptem.info["dataset"] == "d2"
    named = LatentSurrogate(metadata=metadata, source="d2", pretrain_epochs=30)
    named.prepare_space(metadata.pool)
    assert named._start.info == ptem.info  # the same PTEM, from the cache
    with pytest.raises(ValueError, match="got keys"):
        surrogate.warm_start({"source": "d2"})
    with pytest.raises(TypeError, match="PTEM or a mapping"):
        surrogate.warm_start([1, 2])
