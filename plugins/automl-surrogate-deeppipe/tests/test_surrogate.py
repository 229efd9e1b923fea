"""DeepPipe as a surrogate: fitted predictions, determinism, transfer from meta-training,
checkpoints, a new algorithm after meta-training, and the errors users meet."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import torch
from synthetic import family_metadata

from automl_surrogate_deeppipe.metatrain import (
    Checkpoint,
    checkpoint_dir,
    meta_train,
)
from automl_surrogate_deeppipe.surrogate import DeepPipeSurrogate

SMALL = {"width_factor": 2, "steps": 40}


def observed(metadata, dataset: str, n: int, seed: int = 0):
    """``n`` observed pipelines of ``dataset`` (rows, losses) and the rest."""
    losses = metadata.performance[metadata.row(dataset)]
    seen = np.flatnonzero(np.isfinite(losses))
    order = np.random.default_rng(seed).permutation(seen)
    pool = metadata.pool.encodings
    return (pool[order[:n]], losses[order[:n]]), (pool[order[n:]], losses[order[n:]])


def prepared(surrogate: DeepPipeSurrogate, pool) -> DeepPipeSurrogate:
    surrogate.prepare(pool.columns())
    surrogate.prepare_space(pool)
    return surrogate


def gaussian_nll(mean, std, y) -> float:
    return float(np.mean(0.5 * np.log(2 * np.pi * std**2) + (y - mean) ** 2 / (2 * std**2)))


def test_a_fitted_model_predicts_a_finite_mean_and_std_per_row(family):
    (X, y), (rest, _) = observed(family, "t15", 20)
    surrogate = prepared(DeepPipeSurrogate(**SMALL), family.pool).fit(X, y)
    mean, std = surrogate.predict(rest)
    assert mean.shape == std.shape == (len(rest),)
    assert np.isfinite(mean).all() and np.isfinite(std).all() and (std > 0).all()


def test_the_same_seed_gives_the_same_predictions(family):
    (X, y), (rest, _) = observed(family, "t15", 20)
    first = prepared(DeepPipeSurrogate(seed=3, **SMALL), family.pool).fit(X, y).predict(rest)
    second = prepared(DeepPipeSurrogate(seed=3, **SMALL), family.pool).fit(X, y).predict(rest)
    other = prepared(DeepPipeSurrogate(seed=4, **SMALL), family.pool).fit(X, y).predict(rest)
    assert np.array_equal(first[0], second[0]) and np.array_equal(first[1], second[1])
    assert not np.allclose(first[0], other[0])


def test_meta_training_lowers_held_out_nll_below_the_non_transfer_model(family):
    """On the held-out tasks, after 10 observations each, the meta-trained model predicts
    the other pipelines' losses with a lower NLL than the same network trained from scratch."""
    checkpoint = meta_train(
        family, family.pool, settings="quick", architecture=None, seed=0, cache=False
    )
    assert checkpoint.info["train_tasks"] == 12 and checkpoint.info["validation_tasks"] == 3
    path = checkpoint_dir() / "family.pt"
    checkpoint.save(path)
    transfer, scratch = [], []
    for dataset in family.splits["test"]:
        (X, y), (rest, truth) = observed(family, dataset, 10)
        for checkpoint_path, scores in ((path, transfer), (None, scratch)):
            surrogate = DeepPipeSurrogate(checkpoint=checkpoint_path, steps=100, fine_tune="kernel")
            mean, std = prepared(surrogate, family.pool).fit(X, y).predict(rest)
            scores.append(gaussian_nll(mean, std, truth))
    assert np.mean(transfer) < np.mean(scratch), (transfer, scratch)


def test_meta_training_keeps_the_best_validation_checkpoint_and_round_trips(family, tmp_path):
    checkpoint = meta_train(family, family.pool, settings="quick", seed=1, cache=False)
    curve = checkpoint.info["curve"]
    assert len(curve) == checkpoint.info["epochs_run"] == 5
    assert (
        checkpoint.info["validation_nll"] == min(row[2] for row in curve)
        or checkpoint.info["best_epoch"] == 0
    )
    checkpoint.save(tmp_path / "c.pt")
    loaded = Checkpoint.load(tmp_path / "c.pt")
    assert loaded.layout == checkpoint.layout and loaded.architecture == checkpoint.architecture
    assert loaded.info["validation_nll"] == checkpoint.info["validation_nll"]
    assert all(torch.equal(loaded.state[k], v) for k, v in checkpoint.state.items())
    (X, y), (rest, _) = observed(family, "t16", 15)
    a = (
        prepared(DeepPipeSurrogate(checkpoint=tmp_path / "c.pt"), family.pool)
        .fit(X, y)
        .predict(rest)
    )
    surrogate = DeepPipeSurrogate()
    surrogate.prepare(family.pool.columns())
    surrogate._use_space(family.pool)
    surrogate._meta = checkpoint
    b = surrogate.fit(X, y).predict(rest)
    assert np.allclose(a[0], b[0]) and np.allclose(a[1], b[1])


def test_the_training_device_is_named_and_a_bad_one_refused(family):
    checkpoint = meta_train(family, family.pool, settings="quick", cache=False, device="cpu")
    assert checkpoint.info["device"] == "cpu"
    with pytest.raises(ValueError, match="device 'tpu:x'"):
        meta_train(family, family.pool, settings="quick", cache=False, device="tpu:x")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="device 'cuda': torch sees no GPU here"):
            meta_train(family, family.pool, settings="quick", cache=False, device="cuda")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="torch sees no GPU here")
def test_meta_training_on_a_gpu_gives_the_cpus_model_on_the_cpu(family):
    """The same seeded training on the GPU and on the CPU: weights that come back on the
    CPU, and the same validation curve up to rounding (float64 GP, float32 network)."""
    on_gpu = meta_train(family, family.pool, settings="quick", cache=False, device="cuda")
    on_cpu = meta_train(family, family.pool, settings="quick", cache=False, device="cpu")
    assert all(value.device.type == "cpu" for value in on_gpu.state.values())
    assert on_gpu.info["device"] != "cpu"
    np.testing.assert_allclose(
        [row[2] for row in on_gpu.info["curve"]],
        [row[2] for row in on_cpu.info["curve"]],
        rtol=1e-3,
    )
    (X, y), (rest, _) = observed(family, "t16", 15)
    predictions = []
    for checkpoint in (on_gpu, on_cpu):
        surrogate = DeepPipeSurrogate()
        surrogate.prepare(family.pool.columns())
        surrogate._use_space(family.pool)
        surrogate._meta = checkpoint
        predictions.append(surrogate.fit(X, y).predict(rest)[0])
    np.testing.assert_allclose(predictions[0], predictions[1], rtol=1e-2, atol=1e-2)


def test_a_cached_checkpoint_is_loaded_not_trained_again(family):
    first = meta_train(family, family.pool, settings="quick")
    files = list(checkpoint_dir().glob("*.pt"))
    assert len(files) == 1
    second = meta_train(family, family.pool, settings="quick")
    assert second.info["seconds"] == first.info["seconds"]  # read back, not measured again
    assert len(list(checkpoint_dir().glob("*.pt"))) == 1
    other = meta_train(family, family.pool, settings="quick", seed=5)
    assert other.info["key"] != first.info["key"] and len(list(checkpoint_dir().glob("*.pt"))) == 2


def test_a_cache_that_cannot_be_written_costs_a_warning_not_the_training(family, monkeypatch):
    def refuse(self, path):
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(Checkpoint, "save", refuse)
    with pytest.warns(UserWarning, match="could not cache the checkpoint"):
        checkpoint = meta_train(family, family.pool, settings="quick")
    assert checkpoint.info["epochs_run"] == 5 and not list(checkpoint_dir().glob("*.pt"))


def test_meta_data_named_outside_a_run_must_be_given_as_an_object(family):
    """A run resolves a named source through its own registry (the task's); a surrogate
    used in code has no run, and says so."""
    surrogate = DeepPipeSurrogate(metadata="pmf", preset="quick")
    surrogate.prepare(family.pool.columns())
    with pytest.raises(ValueError, match="pass a MetaData object"):
        surrogate.prepare_space(family.pool)


def test_a_surrogate_naming_meta_data_meta_trains_through_meta_fit(family):
    surrogate = DeepPipeSurrogate(preset="quick")
    surrogate.meta_fit(family, family.pool)
    surrogate.prepare(family.pool.columns())
    (X, y), (rest, _) = observed(family, "t15", 12)
    mean, _ = surrogate.fit(X, y).predict(rest)
    assert surrogate.meta_checkpoint is not None and np.isfinite(mean).all()


def test_runs_with_other_seeds_share_the_meta_trained_checkpoint(family):
    """The run's seed is not meta-training's: a search with seed 7 reads the checkpoint a
    seed-0 search trained; ``meta_seed`` names another."""
    first = DeepPipeSurrogate(preset="quick", seed=0)
    first.meta_fit(family, family.pool)
    second = DeepPipeSurrogate(preset="quick", seed=7)
    second.meta_fit(family, family.pool)
    assert second.meta_checkpoint.info["key"] == first.meta_checkpoint.info["key"]
    assert len(list(checkpoint_dir().glob("*.pt"))) == 1
    other = DeepPipeSurrogate(preset="quick", meta_seed=7)
    other.meta_fit(family, family.pool)
    assert other.meta_checkpoint.info["key"] != first.meta_checkpoint.info["key"]


def test_kernel_only_fine_tuning_leaves_the_network_as_meta_trained(family):
    checkpoint = meta_train(family, family.pool, settings="quick")
    (X, y), _ = observed(family, "t15", 12)
    surrogate = DeepPipeSurrogate(preset="quick", fine_tune="kernel")
    surrogate.meta_fit(family, family.pool)
    surrogate.fit(X, y)
    fitted = surrogate._model.state_dict()
    network = [k for k in checkpoint.state if k.startswith("embedder.")]
    assert network and all(torch.equal(fitted[k], checkpoint.state[k]) for k in network)
    kernel = [k for k in checkpoint.state if k.startswith("covar_module.") and "raw" in k]
    assert any(not torch.equal(fitted[k], checkpoint.state[k]) for k in kernel)
    everything = DeepPipeSurrogate(preset="quick", fine_tune="all")
    everything.meta_fit(family, family.pool)
    everything.fit(X, y)
    moved = everything._model.state_dict()
    assert any(not torch.equal(moved[k], checkpoint.state[k]) for k in network)


def test_a_frozen_network_embeds_each_row_once_and_predicts_as_if_it_ran_each_time(family):
    """Kernel-only fine-tuning reads stored embeddings: the same fit and predictions as a
    model that runs the network at every step, and a row is embedded at its first request."""
    (X, y), (rest, _) = observed(family, "t15", 15)
    cached = DeepPipeSurrogate(preset="quick", fine_tune="kernel")
    cached.meta_fit(family, family.pool)
    cached.prepare(family.pool.columns())
    mean, std = cached.fit(X, y).predict(rest)
    assert cached._model.reads_embeddings and len(cached._embeddings) == len(X) + len(rest)
    cached.fit(X[:10], y[:10])  # nothing new to embed
    assert len(cached._embeddings) == len(X) + len(rest)
    cached.fit(X, y)
    running = DeepPipeSurrogate(preset="quick", fine_tune="kernel")
    running.meta_fit(family, family.pool)
    running.prepare(family.pool.columns())
    running._network_frozen = lambda: False  # the network runs on every row, every time
    expected = running.fit(X, y).predict(rest)
    assert not running._model.reads_embeddings
    assert np.allclose(mean, expected[0]) and np.allclose(std, expected[1])
    again = pickle.loads(pickle.dumps(cached))
    assert np.allclose(again.predict(rest)[0], mean)


def test_a_new_algorithm_trains_only_its_own_encoder(family):
    """The paper's Experiment 4: the model algorithm 1 is left out of meta-training; at test
    time its encoder is drawn afresh and trained with the kernel, everything else frozen."""
    omit = {"model": ["1"]}
    surrogate = DeepPipeSurrogate(preset="quick", omit=omit, new_components=omit)
    surrogate.meta_fit(family, family.pool)
    assert surrogate.meta_checkpoint.info["omit"] == {"model": ["1"]}
    (X, y), (rest, _) = observed(family, "t15", 20)
    surrogate.fit(X, y)
    meta, fitted = surrogate.meta_checkpoint.state, surrogate._model.state_dict()
    layout = surrogate.layout
    neurons = surrogate._new_neurons(surrogate._model)
    encoder = surrogate._model.embedder.encoders[0]
    new_weights = neurons[encoder.rows]
    values = fitted["embedder.encoders.0.values"]
    assert not torch.equal(values[new_weights], meta["embedder.encoders.0.values"][new_weights])
    assert torch.equal(values[~new_weights], meta["embedder.encoders.0.values"][~new_weights])
    assert all(
        torch.equal(fitted[k], meta[k]) for k in meta if k.startswith("embedder.aggregation")
    )
    assert layout.index("model", "1") == 3
    assert np.isfinite(surrogate.predict(rest)[0]).all()


def test_the_surrogate_pickles_with_its_predictions(family):
    (X, y), (rest, _) = observed(family, "t15", 15)
    surrogate = prepared(DeepPipeSurrogate(**SMALL), family.pool).fit(X, y)
    copy = pickle.loads(pickle.dumps(surrogate))
    assert np.allclose(copy.predict(rest)[0], surrogate.predict(rest)[0])


def test_a_checkpoint_of_another_space_is_refused_naming_both(family, tmp_path):
    checkpoint = meta_train(family, family.pool, settings="quick")
    checkpoint.save(tmp_path / "c.pt")
    from automl_engine.testing.spaces import pool_space

    other = pool_space()
    with pytest.raises(ValueError, match="another space's layout"):
        prepared(DeepPipeSurrogate(checkpoint=tmp_path / "c.pt"), other)


def test_meta_data_over_another_space_is_refused_before_any_meta_training(family, monkeypatch):
    """A run's pipeline space and meta-data over another space's pipelines: refused at once,
    naming both layouts (it used to meta-train for minutes, then fail on the layouts)."""
    from automl_core.errors import AutoMLError
    from automl_engine.testing.spaces import pipeline_space
    from automl_surrogate_deeppipe import surrogate as module

    monkeypatch.setattr(module, "meta_train", lambda *a, **k: pytest.fail("meta-trained"))
    space = pipeline_space()
    with pytest.raises(AutoMLError, match=r"meta-data over another space .* than this run's"):
        prepared(DeepPipeSurrogate(metadata=family), space)


def test_a_file_that_is_no_checkpoint_is_refused_naming_it(family, tmp_path):
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"not a checkpoint")
    with pytest.raises(ValueError, match=r"bad\.pt is not a usable checkpoint"):
        prepared(DeepPipeSurrogate(checkpoint=bad), family.pool)


def test_a_split_the_meta_data_lacks_is_named(family):
    with pytest.raises(ValueError, match="no split 'fold9'"):
        meta_train(family, family.pool, split="fold9", settings="quick")


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"preset": "huge"}, "preset"),
        ({"fine_tune": "some"}, "fine_tune"),
        ({"steps": 0}, "steps"),
        ({"encoder_layers": 5}, "encoder_layers"),
        ({"metadata": "pmf", "checkpoint": "x.pt"}, "give one"),
        ({"metadata": 3}, "metadata"),
    ],
)
def test_bad_parameters_are_refused_naming_them(params, match):
    with pytest.raises(ValueError, match=match):
        DeepPipeSurrogate(**params)


def test_without_a_space_it_is_a_deep_kernel_over_the_whole_row():
    rng = np.random.default_rng(0)
    X = rng.random((30, 4))
    y = (X**2).sum(axis=1)
    surrogate = DeepPipeSurrogate(**SMALL).fit(X, y)
    mean, std = surrogate.predict(rng.random((5, 4)))
    assert mean.shape == (5,) and np.isfinite(std).all()


def test_meta_data_families_differ_by_seed():
    assert not np.allclose(
        np.nan_to_num(family_metadata(seed=0).performance),
        np.nan_to_num(family_metadata(seed=1).performance),
    )


def test_the_embedding_cache_embeds_repeated_rows_once_and_keeps_their_order():
    from automl_surrogate_deeppipe.surrogate import EmbeddingCache

    calls = []

    def embed(rows):
        calls.append(len(rows))
        return rows.sum(axis=1, keepdims=True)

    cache = EmbeddingCache(embed, limit=4)
    X = np.array([[1.0, 2.0], [3.0, 4.0], [1.0, 2.0]])
    assert cache(X).ravel().tolist() == [3.0, 7.0, 3.0] and calls == [2]
    assert cache(X[::-1]).ravel().tolist() == [3.0, 7.0, 3.0] and calls == [2]
    more = np.array([[5.0, 0.0], [6.0, 0.0], [7.0, 0.0]])  # past the limit: embedded, not kept
    assert cache(more).ravel().tolist() == [5.0, 6.0, 7.0] and len(cache) == 2


def test_meta_training_leaves_the_tasks_own_dataset_out(family):
    """A search on a meta-training dataset (here t3, under an alias) meta-trains without it,
    into a checkpoint of its own; ``exclude_self: false`` keeps it."""
    from automl_core.contracts import TaskDescription

    task = TaskDescription("other-name", "classification", 100, 5, "error", aliases=("T3",))
    surrogate = DeepPipeSurrogate(preset="quick", exclude=["t4"])
    surrogate.prepare(family.pool.columns())
    surrogate._task = task
    surrogate.meta_fit(family, family.pool)
    info = surrogate.meta_checkpoint.info
    assert info["exclude"] == ["t3", "t4"] and info["train_tasks"] == 10
    on_test = DeepPipeSurrogate(preset="quick")  # a test dataset: the usual checkpoint
    on_test._task = TaskDescription("t16", "classification", 100, 5, "error")
    on_test.meta_fit(family, family.pool)
    plain = meta_train(family, family.pool, settings="quick")
    assert on_test.meta_checkpoint.info["key"] == plain.info["key"]
    keeping = DeepPipeSurrogate(preset="quick", exclude_self=False)
    keeping._task = task
    keeping.meta_fit(family, family.pool)
    assert keeping.meta_checkpoint.info["exclude"] == []
    assert keeping.meta_checkpoint.info["key"] != info["key"]
    with pytest.raises(ValueError, match="exclude_self"):
        DeepPipeSurrogate(exclude_self="yes")


def test_a_pools_rows_are_packed_once_and_read_back_for_any_of_its_rows(family, monkeypatch):
    """Consecutive BO steps score the pool less the rows proposed so far: the whole pool is
    packed at the first call, and every later set of its rows is read from it."""
    from automl_surrogate_deeppipe import surrogate as module

    pool = family.pool
    (rows, losses), (offered, _) = observed(family, "t15", 20)
    calls = []
    pack = module.pack
    monkeypatch.setattr(module, "pack", lambda X, s: calls.append(len(X)) or pack(X, s))
    model = prepared(DeepPipeSurrogate(**SMALL), pool).fit(rows, losses)
    first = model.predict(offered)
    fewer = model.predict(offered[1:][::-1].copy())  # another array, other rows, reordered
    assert calls == [len(pool.encodings)]
    # equal up to float32 rounding: batches of other sizes take other BLAS kernels on some CPUs
    np.testing.assert_allclose(fewer[0], first[0][1:][::-1], rtol=1e-6)
    direct = pack(model._layout.transform(offered), model._selector(offered))
    assert torch.equal(model._pack(offered), direct)
    with pytest.raises(ValueError, match="row 1 is not a candidate of the pool"):
        model.predict(np.vstack([offered[:1], offered[:1] + 0.5]))


def test_depth_sets_the_layers_before_the_projection(family):
    pool = family.pool
    (rows, losses), _ = observed(family, "t15", 12)
    model = prepared(DeepPipeSurrogate(encoder_layers=0, depth=3, **SMALL), pool)
    model.fit(rows, losses)
    assert len(model._model.embedder.aggregation) == 3
    with pytest.raises(ValueError, match=r"encoder_layers.*0 to 2"):
        DeepPipeSurrogate(encoder_layers=3, depth=3)
