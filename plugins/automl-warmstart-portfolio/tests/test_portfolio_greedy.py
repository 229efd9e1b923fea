"""The greedy portfolio (Algorithm 1 of Auto-sklearn 2.0) against brute force, where greedy is
known to be optimal, and against its 1 - 1/e guarantee where it is not."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from automl_warmstart_portfolio import (
    greedy_portfolio,
    loss_curve,
    normalise_per_dataset,
    portfolio_loss,
)


def best_by_brute_force(losses: np.ndarray, size: int) -> float:
    """The lowest portfolio loss of any ``size`` configurations (every subset tried)."""
    return min(
        portfolio_loss(losses, members)
        for members in itertools.combinations(range(losses.shape[1]), size)
    )


def random_losses(seed: int, datasets: int = 7, configs: int = 8, nan: float = 0.0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    losses = rng.random((datasets, configs))
    losses[rng.random(losses.shape) < nan] = np.nan
    return losses


# -- normalisation -----------------------------------------------------------------------------


def test_each_dataset_is_scaled_over_its_own_finite_range():
    losses = np.array(
        [
            [0.2, 0.4, 0.3],
            [5.0, np.nan, 7.0],
            [0.3, 0.3, 0.3],  # constant: every configuration is as good as the best
            [np.nan, np.nan, np.nan],
            [np.inf, 1.0, 2.0],  # an infinite loss is not a result either
        ]
    )
    expected = np.array(
        [
            [0.0, 1.0, 0.5],
            [0.0, np.nan, 1.0],
            [0.0, 0.0, 0.0],
            [np.nan, np.nan, np.nan],
            [np.nan, 0.0, 1.0],
        ]
    )
    np.testing.assert_allclose(normalise_per_dataset(losses), expected)
    np.testing.assert_allclose(normalise_per_dataset(normalise_per_dataset(losses)), expected)
    with pytest.raises(ValueError, match="datasets x configurations"):
        normalise_per_dataset(np.zeros(3))


# -- optimality where greedy is optimal ---------------------------------------------------------


@pytest.mark.parametrize("seed", range(10))
def test_a_portfolio_of_one_is_the_best_single_configuration(seed):
    losses = random_losses(seed, nan=0.2)
    (chosen,) = greedy_portfolio(losses, 1)
    assert portfolio_loss(losses, [chosen]) == pytest.approx(best_by_brute_force(losses, 1))


def modular_losses(seed: int) -> np.ndarray:
    """Each configuration is the best (0) on a block of datasets of its own and the worst (1)
    elsewhere, the blocks disjoint and of different sizes: a portfolio's loss is then
    ``1 - (datasets its members' blocks cover) / datasets``, a modular function, and taking
    the largest remaining block each time (what greedy does) is optimal for every size."""
    rng = np.random.default_rng(seed)
    sizes = rng.permutation([6, 5, 4, 3, 2, 1, 0])  # one configuration is best nowhere
    owners = np.repeat(np.arange(len(sizes)), sizes)
    losses = np.ones((len(owners), len(sizes)))
    losses[np.arange(len(owners)), owners] = 0.0
    scale = rng.uniform(0.1, 3.0, size=(len(owners), 1))  # raw losses on varied scales
    return (losses * scale + rng.uniform(0, 1, size=(len(owners), 1)))[rng.permutation(len(owners))]


@pytest.mark.parametrize("seed", range(5))
def test_on_disjoint_blocks_greedy_is_optimal_for_every_size(seed):
    losses = modular_losses(seed)
    for size in range(1, losses.shape[1] + 1):
        members = greedy_portfolio(losses, size)
        assert len(members) == len(set(members)) == size
        assert portfolio_loss(losses, members) == pytest.approx(best_by_brute_force(losses, size))


@pytest.mark.parametrize("seed", range(10))
def test_elsewhere_greedy_keeps_its_one_minus_one_over_e_guarantee(seed):
    """The reduction from the empty portfolio (loss 1) is monotone submodular: greedy gets
    at least (1 - 1/e) of the best reduction of its size (Nemhauser et al., 1978)."""
    losses = random_losses(seed, nan=0.1)
    for size in range(1, 5):
        members = greedy_portfolio(losses, size)
        best = 1.0 - best_by_brute_force(losses, size)
        assert 1.0 - portfolio_loss(losses, members) >= (1 - 1 / math.e) * best - 1e-12


def test_greedy_builds_prefix_by_prefix_and_its_curve_never_rises():
    losses = random_losses(3, datasets=20, configs=30, nan=0.2)
    full = greedy_portfolio(losses, 12)
    assert greedy_portfolio(losses, 5) == full[:5]
    curve = loss_curve(losses, full)
    assert curve == pytest.approx([portfolio_loss(losses, full[: i + 1]) for i in range(12)])
    assert all(b <= a for a, b in itertools.pairwise(curve))


# -- missing results, ties, running out ---------------------------------------------------------


def test_a_missing_result_counts_as_the_worst():
    losses = np.array(
        [
            [0.0, 1.0, 0.5],  # normalised: 0, 1, 0.5
            [np.nan, 1.0, 0.0],  # configuration 0 was not run here
        ]
    )
    # ignoring the NaN, configuration 0 would score 0 and be chosen; as the worst it scores
    # (0 + 1) / 2 = 0.5 against configuration 2's (0.5 + 0) / 2 = 0.25
    assert greedy_portfolio(losses, 1) == [2]
    assert portfolio_loss(losses, [0]) == 0.5


def test_ties_go_to_the_lower_mean_then_to_the_lower_index():
    losses = np.array([[0.0, 1.0, 0.0], [0.0, 1.0, 1.0], [1.0, 0.0, 0.0]])
    # step 1: 0 and 2 both score 1/3 (and have the same mean): 0, the lower index;
    # step 2: 1 and 2 both complete the portfolio (loss 0): 2, whose own mean is lower
    assert greedy_portfolio(losses, 3) == [0, 2, 1]
    same = np.array([[0.3, 0.1, 0.1], [0.2, 0.5, 0.5], [0.5, 0.1, 0.1]])  # 1 and 2 identical
    assert greedy_portfolio(same, 2) == [1, 0]


def test_the_portfolio_grows_past_saturation_until_size_or_candidates_run_out():
    losses = np.array([[0.0, 0.9, 1.0, 0.5], [1.0, 0.9, 0.0, 0.6]])
    # after 0 and 2 every dataset has its best: the rest follow their mean (3: 0.55, 1: 0.9)
    assert greedy_portfolio(losses, 10) == [0, 2, 3, 1]
    assert loss_curve(losses, [0, 2, 3, 1])[1:] == [0.0, 0.0, 0.0]
    assert greedy_portfolio(losses, 0) == []
    with pytest.raises(ValueError, match="size"):
        greedy_portfolio(losses, -1)
    with pytest.raises(ValueError, match="at least one dataset"):
        greedy_portfolio(np.empty((0, 3)), 2)


def test_portfolio_loss_of_nothing_is_the_worst():
    assert portfolio_loss(random_losses(0), []) == 1.0
