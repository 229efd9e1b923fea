"""The per-machine cache's helpers."""

from __future__ import annotations

import numpy as np
import pytest

from automl_engine.cache import load_arrays, save_arrays, write_atomically


def test_a_cache_file_is_replaced_whole_and_a_failed_write_leaves_nothing(tmp_path):
    path = tmp_path / "cache" / "table.npy"
    write_atomically(path, lambda tmp: np.save(tmp, np.arange(3)))
    assert np.load(path).tolist() == [0, 1, 2]

    def half_then_fail(tmp):
        tmp.write_bytes(b"half")
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        write_atomically(path, half_then_fail)
    assert [p.name for p in path.parent.iterdir()] == ["table.npy"]
    assert np.load(path).tolist() == [0, 1, 2]


def test_arrays_and_a_header_round_trip_without_pickles(tmp_path):
    arrays = {"w": np.arange(6.0).reshape(2, 3), "b": np.zeros(2)}
    save_arrays(tmp_path / "model.npz", {"name": "m", "sizes": [2, 3]}, arrays)
    header, loaded = load_arrays(tmp_path / "model.npz")
    assert header == {"name": "m", "sizes": [2, 3]}
    assert set(loaded) == {"w", "b"} and np.array_equal(loaded["w"], arrays["w"])
    assert [p.name for p in tmp_path.iterdir()] == ["model.npz"]  # no temporary file left
