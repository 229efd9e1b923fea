"""Running a continuous optimiser on a pool: the box and nearest-candidate snapping."""

from __future__ import annotations

import numpy as np
import pytest

from automl_core.errors import InvalidConfigurationError
from automl_spaces.pool_space import PoolSpace
from automl_spaces.snapping import PoolSnapper


@pytest.fixture
def pool() -> PoolSpace:
    encodings = np.array([[0.0, 5.0, 1.0], [1.0, 5.0, 3.0], [0.5, 5.0, 2.0], [0.9, 5.0, 2.9]])
    return PoolSpace("p", encodings, available=np.array([True, True, True, False]))


def test_the_box_spans_the_offered_candidates_and_skips_constant_columns(pool):
    snapper = PoolSnapper(pool)
    assert snapper.bounds() == [("x0", 0.0, 1.0), ("x2", 1.0, 3.0)]
    assert snapper.constants() == {"x1": 5.0}
    assert snapper.point_of(2) == {"x0": 0.5, "x2": 2.0}


def test_snapping_claims_the_nearest_unclaimed_offered_candidate(pool):
    snapper = PoolSnapper(pool)
    near_three = {"x0": 0.9, "x2": 2.9}  # candidate 3 is nearest but not offered
    assert snapper.snap(near_three) == 1
    assert snapper.snap(near_three) == 2  # 1 is taken now
    assert not snapper.claim(2) and snapper.claim(0)
    assert snapper.remaining == 0 and snapper.snap(near_three) is None
    with pytest.raises(InvalidConfigurationError, match="point lacks 'x2'"):
        PoolSnapper(pool).snap({"x0": 0.1})


def test_a_pool_offering_nothing_is_refused():
    with pytest.raises(ValueError, match="offers no candidate"):
        PoolSnapper(PoolSpace("empty", np.zeros((2, 1)), available=np.zeros(2, bool)))


def test_configurations_are_pointed_at_and_claimed_through_their_candidate(pool):
    snapper = PoolSnapper(pool)
    assert snapper.box("my-searcher") == snapper.bounds()
    assert snapper.point_of_config({"candidate": 2}) == {"x0": 0.5, "x2": 2.0}
    assert snapper.claim_config({"candidate": 2}) and not snapper.claim_config({"candidate": 2})
    assert snapper.snap({"x0": 0.5, "x2": 2.0}) != 2 and snapper.remaining == 1
    for bad in ({"candidate": 3}, {"candidate": 9}, {"x0": 0.5}):  # not offered, out of range
        with pytest.raises(InvalidConfigurationError):
            snapper.point_of_config(bad)
        with pytest.raises(InvalidConfigurationError):
            snapper.claim_config(bad)


def test_a_pool_without_a_varying_column_has_no_box_to_search():
    same = PoolSpace("same", np.array([[1.0, 2.0], [1.0, 2.0]]), available=np.ones(2, bool))
    with pytest.raises(ValueError, match="same encoding, so there is no box for my-searcher"):
        PoolSnapper(same).box("my-searcher")
