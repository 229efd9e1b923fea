"""PipelineSpace: forbidden stage combinations, and restriction that keeps them."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from toy_plugin import COMPONENTS, toy_space

from automl_core.space import (
    EncodingColumn,
    UnseenSampler,
    check_columns,
    check_encoded,
    check_losses,
)

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


# --- encoded rows, for model-based search ---------------------------------------------------


def test_columns_describe_the_encoding():
    space = toy()
    columns = space.columns()
    assert len(columns) == len(space.configspace)
    assert [space.configspace.index_of[c.name] for c in columns] == list(range(len(columns)))
    by_name = {c.name: c for c in columns}
    assert by_name["classifier:__choice__"].categories == len(space.stage("classifier").components)
    assert not by_name["classifier:__choice__"].conditional
    logistic_c = [c for c in columns if c.name.startswith("classifier:logistic:")]
    assert logistic_c and all(c.conditional and c.categories == 0 for c in logistic_c)


def test_sampled_rows_decode_to_valid_configurations_that_encode_back():
    space = toy(forbidden=(NO_SCALING_LOGISTIC,))
    rng = np.random.default_rng(1)
    rows = space.sample_vectors(rng, 50)
    assert rows.shape == (50, len(space.configspace))
    for row in rows[:10]:
        config = space.decode(row)
        assert space.validate(config) == config
        np.testing.assert_allclose(space.encode([config])[0], row)
    assert (rows == -1).any()  # inactive parameters of the other classifier


def test_neighbours_leave_out_forbidden_combinations():
    space = toy(forbidden=(NO_SCALING_LOGISTIC,))
    start = space.validate(
        {
            "rescaling:__choice__": "none",
            "classifier:__choice__": "decision_tree",
            "classifier:decision_tree:max_depth": 3,
            "classifier:decision_tree:min_samples_leaf": 2,
        }
    )
    rng = np.random.default_rng(0)
    neighbours = [
        space.decode(row) for row in space.neighbour_vectors(space.encode([start])[0], rng)
    ]
    pairs = {(c["rescaling:__choice__"], c["classifier:__choice__"]) for c in neighbours}
    # one decision away: the other classifiers with no scaling, or the same tree scaled...
    assert pairs == {
        ("none", "crashing"),
        ("none", "decision_tree"),
        ("standardize", "decision_tree"),
    }
    # ...but not ("none", "logistic"), which the space forbids


def test_neighbour_rows_differ_in_one_decision():
    space = toy()
    rng = np.random.default_rng(2)
    start = space.sample_vectors(rng, 1)[0]
    neighbours = space.neighbour_vectors(start, rng, 2)
    assert len(neighbours) >= 2
    first = space.decode(start)
    for row in neighbours:
        config = space.decode(row)
        changed = {k for k in {*first, *config} if first.get(k) != config.get(k)}
        choice_changed = any(k.endswith("__choice__") for k in changed)
        assert changed and (choice_changed or len(changed) == 1)


def test_surrogate_inputs_are_checked_with_the_offending_cell_named():
    columns = check_columns(
        [EncodingColumn("x"), EncodingColumn("model", categories=3, conditional=True)]
    )
    good = check_encoded([[0.5, 2.0], [0.1, -1.0]], columns)
    assert good.dtype == np.float64 and good.shape == (2, 2)
    with pytest.raises(ValueError, match=r"X\[1, 0\] holds a non-finite value"):
        check_encoded([[0.5, 1.0], [np.nan, 1.0]], columns)
    with pytest.raises(ValueError, match=r"row 0 holds 3.0 \(expected an index 0..2 or -1\)"):
        check_encoded([[0.5, 3.0]], columns)
    with pytest.raises(ValueError, match="X has 1 columns, but prepare\\(\\) described 2"):
        check_encoded([[0.5]], columns)
    with pytest.raises(TypeError, match=r"expected an automl_core\.space\.EncodingColumn"):
        check_columns(["x"])
    assert check_losses([0.2, 0.1], rows=2).tolist() == [0.2, 0.1]
    with pytest.raises(ValueError, match=r"y\[1\] is inf"):
        check_losses([0.2, np.inf], rows=2)


def test_the_unseen_sampler_skips_what_was_proposed_and_keeps_the_rest_of_a_batch():
    space = toy()
    seen: set[str] = set()

    def claim(config):
        key = space.key(config)
        if key in seen:
            return False
        seen.add(key)
        return True

    sampler = UnseenSampler(space, batch=8, attempts=50)
    rng = np.random.default_rng(0)
    first = sampler.next(rng, claim)
    assert first is not None and len(sampler.buffer) == 7  # one batch drawn, one taken
    taken = [first] + [sampler.next(rng, claim) for _ in range(20)]
    assert len({space.key(c) for c in taken}) == 21
    assert sampler.next(rng, lambda config: False) is None  # gives up after its attempts


def test_the_unseen_sampler_stops_when_the_space_samples_nothing():
    class Empty:
        def sample(self, rng, n):
            return []

    assert UnseenSampler(Empty()).next(np.random.default_rng(0), lambda c: True) is None


def test_the_unseen_sampler_grows_its_batches_and_keeps_the_first_one_s_stream():
    """Each batch after the first is twice the last up to ``max_batch``; the first batch's
    configurations are those a fixed-size sampler gives."""
    space = toy()
    sizes: list[int] = []

    class Counting:
        def sample(self, rng, n):
            sizes.append(n)
            return space.sample(rng, n)

    growing = UnseenSampler(Counting(), batch=8, attempts=50)
    growing.max_batch = 32
    fixed = UnseenSampler(space, batch=8, attempts=50)
    rng_growing, rng_fixed = np.random.default_rng(0), np.random.default_rng(0)
    taken = [growing.next(rng_growing, lambda c: True) for _ in range(8 + 16 + 32 + 1)]
    assert sizes == [8, 16, 32, 32]
    assert taken[:8] == [fixed.next(rng_fixed, lambda c: True) for _ in range(8)]
