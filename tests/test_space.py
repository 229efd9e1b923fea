"""PipelineSpace: forbidden stage combinations, and restriction that keeps them."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from toy_plugin import COMPONENTS, toy_space

NO_SCALING_LOGISTIC = (("rescaling", "none"), ("classifier", "logistic"))


def toy(**changes):
    return replace(toy_space("classification", "classifier")(COMPONENTS), **changes)


def test_a_forbidden_combination_is_never_sampled():
    space = toy(forbidden=(NO_SCALING_LOGISTIC,))
    pairs = {
        (c["rescaling:__choice__"], c["classifier:__choice__"])
        for c in space.sample(np.random.default_rng(0), 300)
    }
    assert ("none", "logistic") not in pairs
    assert ("standardize", "logistic") in pairs and ("none", "decision_tree") in pairs


def test_restrict_keeps_the_forbidden_combinations_that_still_apply():
    space = toy(forbidden=(NO_SCALING_LOGISTIC,))
    kept = space.restrict(include={"classifier": ["logistic", "decision_tree"]})
    assert kept.forbidden == space.forbidden
    assert len(kept.configspace.forbidden_clauses) == 1
    gone = space.restrict(exclude={"classifier": ["logistic"]})
    assert gone.configspace.forbidden_clauses == []


def test_a_combination_that_forbids_the_default_is_left_out():
    space = toy(forbidden=((("rescaling", "none"), ("classifier", "decision_tree")),))
    assert space.default()["classifier:__choice__"] == "decision_tree"
    assert space.configspace.forbidden_clauses == []
