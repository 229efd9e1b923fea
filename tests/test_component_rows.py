"""The core's row lookup on a pool's table (:class:`automl_spaces.component_rows.RowIndex`) and
the component selector that reads a pool through it."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from automl_spaces.component_rows import ComponentSelector, RowIndex
from automl_spaces.pool_space import PoolSpace


def dict_positions(table: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """The answer the index must give: each row's bytes looked up among the table's."""
    first: dict[bytes, int] = {}
    for i, row in enumerate(np.ascontiguousarray(table, dtype=float)):
        first.setdefault(row.tobytes(), i)
    return np.array([first.get(row.tobytes(), -1) for row in np.ascontiguousarray(rows)])


@pytest.fixture
def table() -> np.ndarray:
    rng = np.random.default_rng(3)
    table = rng.random((500, 7))
    table[:, :3] = np.round(table[:, :3] * 3)  # categorical-like columns, many equal values
    table[:, 5] = -1.0  # an inactive column
    table[10] = table[20]  # a row held twice
    table[30, 2] = np.nan
    return table


def test_rows_are_found_where_a_dict_of_their_bytes_finds_them(table):
    rng = np.random.default_rng(4)
    rows = np.vstack([table[rng.permutation(500)[:300]], rng.random((5, 7)), table[[30, 20]]])
    positions = RowIndex(table).find(rows)
    np.testing.assert_array_equal(positions, dict_positions(table, rows))
    assert (positions[300:305] == -1).all() and positions[-2] == 30 and positions[-1] == 10
    placed = positions >= 0
    np.testing.assert_array_equal(table[positions[placed]], rows[placed])


def test_colliding_hashes_still_give_exact_answers(table):
    index = RowIndex(table)
    index._multipliers = np.zeros_like(index._multipliers)  # every row hashes to 0
    hashes = index._hash(index.table)
    index._order = np.argsort(hashes, kind="stable")
    index._sorted = hashes[index._order]
    rows = np.vstack([table[::-1], table[:3] + 10.0])
    np.testing.assert_array_equal(index.find(rows), dict_positions(table, rows))


def test_rows_of_another_width_or_an_empty_table_are_not_found(table):
    assert (RowIndex(table).find(table[:4, :6]) == -1).all()
    assert (RowIndex(np.empty((0, 7))).find(table[:4]) == -1).all()
    with pytest.raises(ValueError, match="2-d"):
        RowIndex(np.zeros(5))


def test_an_index_survives_pickling(table):
    index = RowIndex(table)
    index.find(table[[30]])  # a NaN row: builds the bytes lookup, which is not pickled
    again = pickle.loads(pickle.dumps(index))
    assert again._by_bytes is None
    np.testing.assert_array_equal(again.find(table), index.find(table))


def test_the_selector_reads_a_pool_through_the_index(table):
    choices = np.arange(500) % 3
    pool = PoolSpace("toy", table, stage_names=("model",), stage_choices=choices[:, None])
    selector = ComponentSelector(pool, "toy")
    order = np.random.default_rng(5).permutation(500)
    positions = selector.pool_positions(table[order])
    np.testing.assert_array_equal(table[positions], table[order])
    np.testing.assert_array_equal(selector(table[order])[:, 0], choices[positions])
    with pytest.raises(ValueError, match="toy: row 1 is not a candidate of the pool"):
        selector(np.vstack([table[:1], table[:1] + 0.25]))
    again = pickle.loads(pickle.dumps(selector))
    np.testing.assert_array_equal(again(table[order]), selector(table[order]))
    old = {k: v for k, v in selector.__dict__.items() if k != "_rows"}  # before the index
    restored = ComponentSelector.__new__(ComponentSelector)
    restored.__setstate__({**old, "_encodings": table, "_by_row": {}})
    np.testing.assert_array_equal(restored(table[order]), selector(table[order]))
