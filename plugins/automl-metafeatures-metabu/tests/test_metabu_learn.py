"""Metabu's learning steps: OT target distances, TwoNN, MDS, NDCG@k, FGW training of ψ."""

from __future__ import annotations

import io
import itertools
import math
import pickle
import sys
import warnings
from pathlib import Path

import numpy as np
import ot
import pytest
import sklearn.manifold
import torch

# Importable from a checkout too, before the plugin is installed.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from automl_metafeatures_metabu.learn import (
    FGWSettings,
    MetabuMap,
    cross_ndcg_at_k,
    fgw_objective,
    fit_map,
    intrinsic_dimension,
    ndcg_at_k,
    ot_distance,
    pairwise_distances,
    solve_coupling,
    target_distances,
    target_embedding,
    top_configurations,
    two_nn_slope,
)

# --- Target representation and OT distances -----------------------------------------------------


def test_top_configurations_keeps_the_lowest_finite_losses_best_first() -> None:
    encodings = np.arange(10.0).reshape(5, 2)
    performance = np.array(
        [
            [0.3, 0.1, np.nan, 0.2, np.inf],
            [np.nan, np.nan, 0.5, np.nan, np.nan],
        ]
    )
    first, second = top_configurations(performance, encodings, top=2)
    np.testing.assert_array_equal(first, encodings[[1, 3]])
    np.testing.assert_array_equal(second, encodings[[2]])  # fewer observed than top


def test_top_configurations_names_a_dataset_without_observations() -> None:
    performance = np.array([[0.1, 0.2], [np.nan, np.nan]])
    with pytest.raises(ValueError, match="credit-g"):
        top_configurations(performance, np.eye(2), dataset_names=["iris", "credit-g"])


def _brute_force_assignment(first: np.ndarray, second: np.ndarray) -> float:
    """Uniform weights, equal sizes: OT is an assignment; its cost the best permutation's mean."""
    return min(
        float(np.mean([np.sum((first[i] - second[j]) ** 2) for i, j in enumerate(order)]))
        for order in itertools.permutations(range(len(second)))
    )


def test_ot_distance_is_the_optimal_assignment_cost() -> None:
    line = np.array([[0.0, 0.0], [1.0, 0.0], [2.0, 0.0]])
    shifted = line[::-1] + np.array([0.0, 1.0])  # each point to its copy 1 above: cost 1
    assert ot_distance(line, shifted) == pytest.approx(1.0)

    rng = np.random.default_rng(0)
    first, second = rng.normal(size=(3, 4)), rng.normal(size=(3, 4))
    expected = _brute_force_assignment(first, second)
    assert ot_distance(first, second) == pytest.approx(expected)
    raw = target_distances([first, second, line @ np.ones((2, 4))], normalise=False)
    assert raw[0, 1] == pytest.approx(expected)


def test_target_distances_are_symmetric_zero_diagonal_max_one() -> None:
    rng = np.random.default_rng(1)
    targets = [rng.uniform(size=(size, 3)) for size in (5, 2, 7, 1, 4, 3)]
    distances = target_distances(targets)
    np.testing.assert_array_equal(distances, distances.T)
    np.testing.assert_array_equal(np.diag(distances), 0.0)
    assert distances.max() == pytest.approx(1.0)
    assert (distances[~np.eye(6, dtype=bool)] > 0).all()


# --- TwoNN ------------------------------------------------------------------------------------


def _flat_cloud(seed: int, dimension: int, count: int = 1000, ambient: int = 10) -> np.ndarray:
    """Points uniform on a ``dimension``-cube of side 100, isometrically embedded in R^ambient.

    Side 100: nearest neighbours are ~1 apart or more, so TwoNN's 1e-3 offset is negligible.
    """
    rng = np.random.default_rng(seed)
    basis = np.linalg.qr(rng.normal(size=(ambient, dimension)))[0]
    return rng.uniform(0, 100, size=(count, dimension)) @ basis.T


def test_two_nn_recovers_a_plane_in_r10() -> None:
    distances = pairwise_distances(_flat_cloud(0, 2))
    slope = two_nn_slope(distances)
    assert 1.8 <= slope <= 2.2
    assert intrinsic_dimension(distances) == math.ceil(slope) == 2


def test_two_nn_on_a_5d_cube_is_5_or_6() -> None:
    # Boundary effects of the cube bias TwoNN down a little at 1,000 points: the slope is
    # within ±1 of 5 (4.82 for this seed), and the rule rounds it up.
    distances = pairwise_distances(_flat_cloud(0, 5))
    slope = two_nn_slope(distances)
    assert 4.0 <= slope <= 6.0
    assert intrinsic_dimension(distances) == math.ceil(slope)
    assert intrinsic_dimension(distances) in (5, 6)


def test_two_nn_stays_finite_on_few_points_and_duplicates() -> None:
    # With m <= 10 points floor(0.9 m) + 1 = m: the last F would be 1; the kept count is capped.
    points = np.array([[0.0], [0.0], [1.0], [3.0], [4.0], [8.0], [9.5], [10.0]])
    slope = two_nn_slope(pairwise_distances(points))
    assert np.isfinite(slope)
    assert intrinsic_dimension(pairwise_distances(points)) >= 1


# --- MDS ----------------------------------------------------------------------------------------


@pytest.mark.filterwarnings("error")
def test_target_embedding_is_standardised_and_keeps_neighbours() -> None:
    rng = np.random.default_rng(2)
    configuration = rng.normal(size=(50, 3))
    distances = pairwise_distances(configuration)
    embedding = target_embedding(distances / distances.max(), 3, seed=42)
    assert embedding.shape == (50, 3)
    np.testing.assert_allclose(embedding.mean(axis=0), 0.0, atol=1e-12)
    np.testing.assert_allclose(embedding.std(axis=0), 1.0)
    assert ndcg_at_k(pairwise_distances(embedding), distances, 5) >= 0.9
    np.testing.assert_array_equal(embedding, target_embedding(distances / distances.max(), 3))


def test_target_embedding_of_non_euclidean_distances_is_finite() -> None:
    """Distances whose double-centred squares have fewer positive eigenvalues than the
    dimension asked for (optimal-transport distances can be so): a finite embedding, not
    scikit-learn's NaN start and error."""
    rng = np.random.default_rng(5)
    distances = rng.uniform(0.5, 1.0, size=(12, 12))
    distances = np.triu(distances, 1) + np.triu(distances, 1).T
    if hasattr(sklearn.manifold, "ClassicalMDS"):  # the start that failed on such distances
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # sqrt of negative eigenvalues
            own = sklearn.manifold.ClassicalMDS(n_components=10, metric="precomputed")
            assert np.isnan(own.fit_transform(distances)).any()
    embedding = target_embedding(distances, 10, seed=42)
    assert embedding.shape == (12, 10)
    assert np.isfinite(embedding).all()
    np.testing.assert_array_equal(embedding, target_embedding(distances, 10, seed=42))


# --- NDCG@k -------------------------------------------------------------------------------------


def test_ndcg_is_one_for_identical_distances() -> None:
    distances = pairwise_distances(np.random.default_rng(3).normal(size=(20, 4)))
    assert ndcg_at_k(distances, distances, 5) == pytest.approx(1.0)
    assert ndcg_at_k(distances, distances, 50) == pytest.approx(1.0)  # k capped at m - 1


def test_ndcg_hand_computed() -> None:
    target = pairwise_distances(np.array([[0.0], [1.0], [3.0], [7.0]]))
    predicted = pairwise_distances(np.array([[0.0], [5.0], [1.0], [2.6]]))
    ideal = 1 + 1 / math.log2(3)
    # k = 2. Query 0: relevant {1, 2}, predicted order 2, 3, 1: gains 1, 0.
    # Query 1: relevant {0, 2}, predicted order 3, 2, 0: gains 0, 1.
    # Query 2: relevant {1, 0}, predicted order 0, 3, 1: gains 1, 0.
    # Query 3: relevant {2, 1}, predicted order 2, 1, 0: gains 1, 1.
    expected = (1 / ideal + (1 / math.log2(3)) / ideal + 1 / ideal + 1.0) / 4
    assert ndcg_at_k(predicted, target, 2) == pytest.approx(expected)
    assert ndcg_at_k(predicted, target, 2, queries=[3]) == pytest.approx(1.0)
    assert ndcg_at_k(predicted, target, 2, queries=[1]) == pytest.approx(1 / math.log2(3) / ideal)


def test_ndcg_is_low_for_random_distances() -> None:
    rng = np.random.default_rng(4)
    target = pairwise_distances(rng.normal(size=(30, 3)))
    noise = rng.uniform(size=(30, 30))
    assert ndcg_at_k(noise + noise.T, target, 5) < 0.5


def test_ndcg_over_queries_and_candidates_matches_the_rectangular_form() -> None:
    rng = np.random.default_rng(5)
    points = rng.normal(size=(12, 2))
    target = pairwise_distances(points)
    predicted = pairwise_distances(points + rng.normal(scale=0.5, size=points.shape))
    queries, candidates = [8, 9, 10, 11], list(range(8))
    square = ndcg_at_k(predicted, target, 3, queries=queries, candidates=candidates)
    block = np.ix_(queries, candidates)
    assert square == pytest.approx(cross_ndcg_at_k(predicted[block], target[block], 3))


# --- FGW ----------------------------------------------------------------------------------------


def _brute_force_fgw(source: np.ndarray, target: np.ndarray, coupling: np.ndarray, alpha: float):
    """The 4-index definition: (1-α) Σ γ_ij M_ij + α Σ (C1_ik - C2_jl)² γ_ij γ_kl."""
    cross = ot.dist(source, target)
    within_source, within_target = ot.dist(source, source), ot.dist(target, target)
    structure = 0.0
    for i, k in itertools.product(range(len(source)), repeat=2):
        for j, m in itertools.product(range(len(target)), repeat=2):
            difference = within_source[i, k] - within_target[j, m]
            structure += difference**2 * coupling[i, j] * coupling[k, m]
    return (1 - alpha) * float((coupling * cross).sum()) + alpha * structure


@pytest.mark.parametrize("alpha", [0.0, 0.5, 1.0])
def test_fgw_objective_square_loss_decomposition_equals_the_4_index_sum(alpha: float) -> None:
    rng = np.random.default_rng(6)
    source, target = rng.normal(size=(4, 2)), rng.normal(size=(5, 2))
    coupling = rng.uniform(size=(4, 5))  # any non-negative matrix: its own marginals are used
    value = fgw_objective(
        torch.from_numpy(source), torch.from_numpy(target), torch.from_numpy(coupling), alpha
    )
    assert value.item() == pytest.approx(_brute_force_fgw(source, target, coupling, alpha))


def test_fgw_objective_agrees_with_pot_at_its_coupling() -> None:
    rng = np.random.default_rng(7)
    source, target = rng.normal(size=(8, 2)), rng.normal(size=(8, 2))
    weights = np.full(8, 1 / 8)
    coupling, log = ot.gromov.fused_gromov_wasserstein(
        ot.dist(source, target),
        ot.dist(source, source),
        ot.dist(target, target),
        weights,
        weights,
        loss_fun="square_loss",
        alpha=0.5,
        log=True,
    )
    value = fgw_objective(
        torch.from_numpy(source), torch.from_numpy(target), torch.from_numpy(coupling), 0.5
    )
    assert value.item() == pytest.approx(float(log["fgw_dist"]))
    np.testing.assert_allclose(solve_coupling(source, target, 0.5, coupling), coupling)


def test_proximal_solver_keeps_the_identity_coupling_the_exact_one_leaves_it() -> None:
    # Why FGWSettings(coupling="identity") holds i <-> i: POT's proximal-point solver started
    # there never leaves it; the exact solver moves the mass to match shapes, not datasets.
    rng = np.random.default_rng(8)
    source, target = rng.normal(size=(12, 2)), rng.normal(size=(12, 2))
    weights, identity = np.full(12, 1 / 12), np.eye(12) / 12
    costs = ot.dist(source, target), ot.dist(source, source), ot.dist(target, target)
    with np.errstate(divide="ignore"):  # log(0) off the support: an infinite cost, as meant
        proximal = ot.gromov.entropic_fused_gromov_wasserstein(
            *costs, weights, weights, epsilon=1.0, solver="PPA", max_iter=10, G0=identity
        )
    np.testing.assert_allclose(proximal, identity, atol=1e-12)
    exact = solve_coupling(source, target, 0.5)
    assert np.trace(exact) < 0.5


def _family(seed: int = 0, count: int = 40, width: int = 12) -> tuple[np.ndarray, np.ndarray]:
    """Datasets whose oracle topology is a hidden rotation of basic columns 0 and 1.

    The other 10 columns are noise of the same scale, so that raw Euclidean distances on the
    standardised basic representation rank neighbours poorly.
    """
    rng = np.random.default_rng(seed)
    basic = rng.normal(size=(count, width))
    rotation = np.linalg.qr(rng.normal(size=(2, 2)))[0]
    distances = pairwise_distances(basic[:, :2] @ rotation)
    return basic, distances / distances.max()


def test_fgw_training_learns_the_topology_from_the_informative_columns() -> None:
    basic, distances = _family()
    train, valid = np.arange(30), np.arange(30, 40)
    target = target_embedding(distances[np.ix_(train, train)], 2)
    settings = FGWSettings(ndcg_k=5, patience=100)
    fitted, history = fit_map(
        [basic[i] for i in train],
        target,
        settings,
        validation_basic=basic[valid],
        validation_target_distances=distances[np.ix_(valid, train)],
    )

    def validation_ndcg(rows: np.ndarray) -> float:
        return ndcg_at_k(pairwise_distances(rows), distances, 5, queries=valid, candidates=train)

    standardised = (basic - basic[train].mean(axis=0)) / basic[train].std(axis=0)
    learned = validation_ndcg(fitted.transform(basic))
    assert learned == pytest.approx(max(entry["validation_ndcg"] for entry in history))
    assert learned >= history[0]["validation_ndcg"] + 0.3  # the initial ψ
    assert learned >= validation_ndcg(standardised) + 0.3  # the raw basic representation
    assert learned >= 0.8
    assert history[-1]["objective"] < 0.5 * history[0]["objective"]
    assert set(np.argsort(fitted.importances())[-2:]) == {0, 1}
    assert int(np.argmax(fitted.importances(target=target))) in (0, 1)


def test_fit_map_without_validation_runs_every_epoch_on_replicates_reproducibly() -> None:
    basic, distances = _family(seed=1, count=20)
    rng = np.random.default_rng(9)
    replicates = [row + rng.normal(scale=0.05, size=(3, row.size)) for row in basic]
    target = target_embedding(distances, 2)
    settings = FGWSettings(epochs=25)
    fitted, history = fit_map(replicates, target, settings)
    again, _ = fit_map(replicates, target, settings)
    assert [entry["epoch"] for entry in history] == list(range(26))
    assert all(entry["validation_ndcg"] is None for entry in history)
    assert history[-1]["objective"] < history[0]["objective"]
    np.testing.assert_array_equal(fitted.weights, again.weights)
    np.testing.assert_allclose(fitted.mean, np.vstack(replicates).mean(axis=0))


def test_early_stopping_keeps_the_best_map() -> None:
    basic, distances = _family(seed=1)
    train, valid = np.arange(30), np.arange(30, 40)
    target = target_embedding(distances[np.ix_(train, train)], 2)
    fitted, history = fit_map(
        [basic[i] for i in train],
        target,
        FGWSettings(ndcg_k=5, patience=3),
        validation_basic=basic[valid],
        validation_target_distances=distances[np.ix_(valid, train)],
    )
    assert len(history) < 301
    scores = [entry["validation_ndcg"] for entry in history]
    assert all(score <= max(scores) for score in scores[-3:])
    predicted = pairwise_distances(fitted.transform(basic))
    kept = ndcg_at_k(predicted, distances, 5, queries=valid, candidates=train)
    assert kept == pytest.approx(max(scores))


def test_exact_coupling_trains_too() -> None:
    basic, distances = _family(seed=2, count=15)
    target = target_embedding(distances, 2)
    _, history = fit_map(list(basic), target, FGWSettings(epochs=10, coupling="exact"))
    assert len(history) == 11
    assert history[-1]["objective"] < history[0]["objective"]


def test_settings_reject_an_unknown_coupling() -> None:
    with pytest.raises(ValueError, match="coupling"):
        FGWSettings(coupling="sinkhorn")


# --- Inputs and the fitted map ------------------------------------------------------------------


def test_nan_in_the_basic_representation_names_the_column_and_dataset() -> None:
    basic, distances = _family(count=6)
    basic[4, 7] = np.nan
    names = [f"mf{j}" for j in range(12)]
    with pytest.raises(ValueError, match=r"mf7.*\[4\]"):
        fit_map(list(basic), target_embedding(distances, 2), feature_names=names)


def test_nan_in_rows_to_transform_is_an_error() -> None:
    fitted = MetabuMap(mean=np.zeros(3), scale=np.ones(3), weights=np.eye(2, 3))
    with pytest.raises(ValueError, match=r"column 2"):
        fitted.transform(np.array([[1.0, 2.0, np.nan]]))


def test_transform_standardises_then_applies_psi() -> None:
    fitted = MetabuMap(
        mean=np.array([1.0, 2.0]), scale=np.array([2.0, 4.0]), weights=np.array([[1.0, -1.0]])
    )
    np.testing.assert_allclose(fitted.transform(np.array([[3.0, 6.0], [1.0, 2.0]])), [[0], [0]])
    np.testing.assert_allclose(fitted.transform(np.array([[5.0, 2.0]])), [[2.0]])


def _fitted_map() -> MetabuMap:
    basic, distances = _family(count=10)
    fitted, _ = fit_map(
        list(basic),
        target_embedding(distances, 2),
        FGWSettings(epochs=5),
        feature_names=[f"mf{j}" for j in range(12)],
    )
    return fitted


def test_map_round_trips_through_pickle() -> None:
    fitted = _fitted_map()
    rows = np.random.default_rng(10).normal(size=(7, 12))
    restored = pickle.loads(pickle.dumps(fitted))
    np.testing.assert_array_equal(restored.transform(rows), fitted.transform(rows))
    assert restored.feature_names == fitted.feature_names


def test_map_round_trips_through_plain_arrays_and_npz() -> None:
    fitted = _fitted_map()
    rows = np.random.default_rng(11).normal(size=(7, 12))
    buffer = io.BytesIO()
    np.savez(buffer, **fitted.to_arrays())
    buffer.seek(0)
    with np.load(buffer) as stored:
        restored = MetabuMap.from_arrays(stored)
    np.testing.assert_array_equal(restored.transform(rows), fitted.transform(rows))
    assert restored.feature_names == fitted.feature_names
    assert restored.dimension == 2
