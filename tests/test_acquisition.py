"""The scores model-based strategies share (automl_core.acquisition)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import norm

from automl_core.acquisition import expected_improvement, random_best


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
