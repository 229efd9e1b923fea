"""DeepPipe in the searches that take a surrogate: smbo and mcts on a pool (a table-lookup
run; smbo's EI over the whole pool) and smbo on a pipeline space."""

from __future__ import annotations

import numpy as np
import pytest

from automl_core.contracts import SearchContext
from automl_core.plugins import load_plugins
from automl_core.trial import Result, Status, Trial
from automl_engine.history import RunHistory
from automl_engine.metastore import metadata_fingerprint, save_metadata
from automl_engine.recipe import parse_recipe
from automl_engine.run_folder import HISTORY_FILE
from automl_engine.runner import run
from automl_engine.testing.spaces import loss_of, pipeline_space
from automl_surrogate_deeppipe.metatrain import list_checkpoints
from automl_surrogate_deeppipe.surrogate import DeepPipeSurrogate

SMALL = {"width_factor": 2, "steps": 20}


def lookup_recipe(family, tmp_path, dataset: str, search: dict, trials: int):
    """A table-lookup run on ``dataset`` of the family, saved as a meta-data folder at
    ``tmp_path / "meta"``."""
    folder = tmp_path / "meta"
    save_metadata(family, folder)
    return parse_recipe(
        {
            "name": "deeppipe",
            "task": {
                "benchmark": {"name": "table", "params": {"path": str(folder)}},
                "dataset": dataset,
            },
            "search": search,
            "budget": {"trials": trials},
            "seed": 0,
        }
    )


@pytest.mark.parametrize(
    ("strategy", "params"),
    [("smbo", {"initial_design": 3}), ("mcts", {})],
)
def test_a_lookup_run_searches_the_pool_with_it(family, tmp_path, strategy, params):
    search = {
        "strategy": strategy,
        "params": params,
        "surrogate": {"name": "deeppipe", "params": SMALL},
    }
    summary = run(lookup_recipe(family, tmp_path, "t15", search, trials=9), tmp_path / "run")
    with RunHistory(tmp_path / "run" / HISTORY_FILE) as history:
        trials = history.trials()
    assert len(trials) == 9 and all(t.status == "ok" for t in trials)
    model_based = [t for t in trials if t.trial.origin not in ("initial", "random", "default")]
    assert model_based  # the surrogate proposed some of them
    assert summary.benchmark["normalised_regret"] >= 0
    assert len({t.trial.config["candidate"] for t in trials}) == 9  # no pipeline twice


def test_a_transfer_lookup_run_names_its_meta_data_folder(family, tmp_path):
    search = {
        "strategy": "smbo",
        "params": {"initial_design": 3},
        "surrogate": {
            "name": "deeppipe",
            "params": {"metadata": str(tmp_path / "meta"), "preset": "quick"},
        },
    }
    run(lookup_recipe(family, tmp_path, "t16", search, trials=6), tmp_path / "run")
    with RunHistory(tmp_path / "run" / HISTORY_FILE) as history:
        assert history.count() == 6
    # meta-trained on the folder's training split through the run's own resolver, and cached
    ((_, checkpoint),) = list_checkpoints()
    assert checkpoint.info["fingerprint"] == metadata_fingerprint(family)
    assert checkpoint.info["train_tasks"] == 12 and checkpoint.info["preset"] == "quick"


def test_smbo_on_a_pipeline_space_uses_the_component_blocks():
    space = pipeline_space()
    strategy = load_plugins().create("search_strategy", "smbo", {"initial_design": 4})
    made: list[DeepPipeSurrogate] = []

    def factory() -> DeepPipeSurrogate:
        made.append(DeepPipeSurrogate(**SMALL))
        return made[-1]

    strategy.setup(SearchContext(space=space, seed=0, surrogate_factory=factory))
    for _ in range(8):
        candidate = strategy.ask()
        trial_loss = loss_of(space, candidate.config)
        strategy.tell(Trial(0, candidate.config), Result(Status.OK, trial_loss))
    layout = made[0].layout
    assert layout is not None and layout.stage_names == tuple(s.name for s in space.blocks().stages)
    assert len(layout.components()) == sum(len(s.components) for s in space.blocks().stages)
    mean, std = made[0].predict(space.sample_vectors(np.random.default_rng(0), 5))
    assert np.isfinite(mean).all() and (std > 0).all()


def test_on_auto_sklearn_s_space_the_choice_columns_give_the_decoded_components():
    """The selector reads each stage's choice column (a stage of one component, such as
    imputation, has none: position 0) and agrees with decoding every row, on 300 samples."""
    from automl_core.space import vector_space
    from automl_surrogate_deeppipe.layout import Selector

    space = vector_space(load_plugins().create("space", "autosklearn-classification"))
    fast = Selector(space)
    assert fast._choice_columns is not None and None in fast._choice_columns
    decoding = Selector(space)
    decoding._choice_columns, decoding._space = None, space
    rows = np.asarray(space.encode(space.sample(np.random.default_rng(0), 300)))
    chosen = fast(rows)
    assert np.array_equal(chosen, decoding(rows))
    assert len(np.unique(chosen[:, -1])) == len(space.blocks().stages[-1].components)
