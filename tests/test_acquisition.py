"""The scores model-based strategies share (automl_spaces.acquisition)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import norm

from automl_spaces.acquisition import (
    constant_liar_targets,
    expected_improvement,
    failures_as_worst,
    random_best,
)


def test_expected_improvement_matches_its_closed_form():
    mean, std = np.array([0.5, 0.3, 0.7, 0.4]), np.array([1.0, 0.0, 0.2, 0.1])
    ei = expected_improvement(mean, std, best=0.5)
    assert ei[0] == pytest.approx(norm.pdf(0.0))  # at the best so far: sd * phi(0)
    assert ei[1] == pytest.approx(0.2)  # certain and better: the improvement itself
    z = (0.5 - 0.7) / 0.2
    assert ei[2] == pytest.approx((0.5 - 0.7) * norm.cdf(z) + 0.2 * norm.pdf(z))
    # asking for a margin lowers every value
    assert np.all(expected_improvement(mean, std, best=0.5, xi=0.05) <= ei)


def test_ties_for_the_best_score_are_broken_at_random():
    scores = np.array([0.1, 0.9, 0.3, 0.9, 0.9])
    rng = np.random.default_rng(0)
    picks = {random_best(scores, rng) for _ in range(100)}
    assert picks == {1, 3, 4}


def test_failures_count_as_the_worst_finite_loss():
    losses = np.array([0.3, np.inf, 0.1, 0.5])
    assert list(failures_as_worst(losses)) == [0.3, 0.5, 0.1, 0.5]
    assert list(failures_as_worst(np.array([np.inf, np.inf]), default=2.0)) == [2.0, 2.0]
    finite = np.array([0.2, 0.4])
    assert failures_as_worst(finite) is finite


@pytest.mark.parametrize(("rule", "lie"), [("mean", 0.3), ("min", 0.1), ("max", 0.5)])
def test_running_trials_get_a_constant_lie(rule, lie):
    losses = np.array([0.3, 0.1, 0.5])
    targets = constant_liar_targets(losses, 2, rule)
    assert targets == pytest.approx([0.3, 0.1, 0.5, lie, lie])
    assert constant_liar_targets(losses, 0, rule) is losses
