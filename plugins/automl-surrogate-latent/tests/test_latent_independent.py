"""independent-gp: one GP per algorithm, nothing shared between algorithms."""

from __future__ import annotations

import numpy as np
from latent_synthetic import family_losses, family_metadata, family_pool
from test_latent_in_searches import lookup_recipe

from automl_engine.history import RunHistory
from automl_engine.metastore import save_metadata
from automl_engine.run_folder import HISTORY_FILE
from automl_engine.runner import run
from automl_surrogate_latent.independent import IndependentGPs


def rows_of(pool, algorithm: int) -> np.ndarray:
    return np.flatnonzero(np.asarray(pool.stage_choices)[:, 1] == algorithm)


def test_an_algorithm_not_observed_is_predicted_at_the_prior_whatever_the_others_show():
    pool = family_pool()
    losses = family_losses(pool)
    seen = rows_of(pool, 0)[:20]
    surrogate = IndependentGPs()
    surrogate.prepare_space(pool)
    surrogate.fit(pool.encodings[seen], losses[seen])
    mean, std = surrogate.predict(pool.encodings[rows_of(pool, 1)])
    assert np.allclose(mean, losses[seen].mean())
    assert np.allclose(std, losses[seen].std())


def test_each_algorithms_gp_learns_its_own_bowl():
    pool = family_pool()
    losses = family_losses(pool)
    seen = np.concatenate([rows_of(pool, m)[:25] for m in range(3)])
    surrogate = IndependentGPs()
    surrogate.prepare_space(pool)
    surrogate.fit(pool.encodings[seen], losses[seen])
    for m in (0, 1):
        held_out = rows_of(pool, m)[25:]
        mean, std = surrogate.predict(pool.encodings[held_out])
        assert np.corrcoef(mean, losses[held_out])[0, 1] > 0.9
        assert np.all(std > 0)


def test_smbo_searches_a_pool_with_it(tmp_path):
    folder = tmp_path / "meta"
    save_metadata(family_metadata(), folder)
    run(lookup_recipe(folder, {"name": "independent-gp"}), tmp_path / "run")
    with RunHistory(tmp_path / "run" / HISTORY_FILE) as history:
        trials = history.trials()
    assert len(trials) == 12 and all(t.status == "ok" for t in trials)
    assert any(t.trial.origin == "acquisition" for t in trials)
