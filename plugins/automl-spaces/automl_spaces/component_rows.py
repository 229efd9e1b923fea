"""Encoded rows as a neural network reads them, component by component.

Surrogates that give each component of a space a network of its own (DeepPipe's encoders,
the shared latent space's per-algorithm embeddings) need the same three things from a
:class:`~automl_core.space.VectorSpace`'s encoded rows, whatever the space's kind:

- :class:`NetworkInputs`: the rows as numbers in [0, 1], categoricals one-hot encoded and
  inactive values (``-1``) set to 0, with the positions each encoding column expands to;
- :class:`ComponentSelector`: per row, the active component of each stage of
  :meth:`~automl_core.space.VectorSpace.blocks`, read without decoding where the space allows
  (a pipeline space's choice columns, a pool's table, found with a :class:`RowIndex`);
- :func:`numeric_ranges`: on a pool, the (low, high) each numeric column is scaled from.

And what strategies that treat one stage's components apart (smbo's initial design and
acquisition per algorithm, a fixed design's defaults per algorithm) need:
:func:`stage_position` (a stage by name, the last by default) and :func:`components_alone`
(the space restricted to each component of a stage).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from automl_core.space import INACTIVE, EncodingBlocks, EncodingColumn, VectorSpace


@dataclass(frozen=True)
class NetworkInputs:
    """How a space's encoded rows become a network's inputs (one-hots expanded)."""

    #: the space's columns, in order
    columns: tuple[EncodingColumn, ...]
    #: per numeric column, the (low, high) it is min-max scaled from (others: [0, 1] already)
    ranges: dict[int, tuple[float, float]] = field(default_factory=dict)

    @property
    def offsets(self) -> tuple[tuple[int, int], ...]:
        """Per space column, its first input position and how many inputs it expands to."""
        offsets, position = [], 0
        for column in self.columns:
            size = column.categories if column.categories else 1
            offsets.append((position, size))
            position += size
        return tuple(offsets)

    @property
    def width(self) -> int:
        """The number of inputs a row expands to."""
        return sum(column.categories or 1 for column in self.columns)

    def expand(self, columns: Sequence[int]) -> tuple[int, ...]:
        """The input positions of the space columns ``columns``, in order."""
        offsets = self.offsets
        return tuple(i for c in columns for i in range(offsets[c][0], sum(offsets[c])))

    def transform(self, rows: np.ndarray) -> np.ndarray:
        """The inputs of encoded ``rows`` (n x len(columns)): float32, n x :attr:`width`."""
        rows = np.asarray(rows, dtype=float)
        out = np.zeros((len(rows), self.width), dtype=np.float32)
        for index, (column, (start, _)) in enumerate(zip(self.columns, self.offsets, strict=True)):
            values = rows[:, index]
            active = values != INACTIVE
            if column.categories:
                codes = np.clip(np.round(values), 0, column.categories - 1).astype(int)
                hit = np.flatnonzero(active)
                out[hit, start + codes[hit]] = 1.0
            else:
                low, high = self.ranges.get(index, (0.0, 1.0))
                scaled = (values - low) / (high - low) if high > low else values - low
                out[:, start] = np.where(active, np.clip(scaled, 0.0, 1.0), 0.0)
        return out


def stage_position(blocks: EncodingBlocks, name: str | None, what: str) -> int:
    """The position of the stage ``name`` among ``blocks``' stages; None: the last, where
    pipelines put their model. ``what`` names the parameter in the error (``smbo:
    initial_stage``)."""
    names = [stage.name for stage in blocks.stages]
    if name is None:
        return len(names) - 1
    if name not in names:
        raise ValueError(
            f"{what} {name!r} is not a stage of the space; its stages are {', '.join(names)}"
        )
    return names.index(name)


def components_alone(space: VectorSpace, stage: str) -> dict[str, VectorSpace]:
    """Each component of ``stage``, in order, with the space restricted to it; a component
    the space cannot offer alone (a pool with none of its candidates offered) is left out."""
    alone = {}
    for component in space.blocks().stage(stage).names:
        try:
            alone[component] = space.restrict(include={stage: [component]})
        except ValueError:
            continue
    return alone


def numeric_ranges(space: VectorSpace) -> dict[int, tuple[float, float]]:
    """On a pool, each numeric column's (low, high) over the table, for min-max scaling; on
    other spaces the numbers are in [0, 1] already (an empty mapping)."""
    pool = space.as_pool()
    if pool is None:
        return {}
    encodings = np.asarray(pool.encodings, dtype=float)
    ranges = {}
    for index, column in enumerate(space.columns()):
        if column.categories:
            continue
        values = encodings[:, index]
        values = values[values != INACTIVE]
        if len(values):
            ranges[index] = (float(values.min()), float(values.max()))
    return ranges


class RowIndex:
    """Where rows sit in a fixed table (a pool's encodings), found by their exact values.

    A search on a pool scores nearly the whole pool at every step, so finding ~25,000 rows
    is on the path of every step: looking each row's bytes up in a dict took ~50 ms (PMF's
    24,687 offered rows, measured with another process on the second core), this ~20 ms
    (17-23 ms, measured alike and idle). Each row is hashed to one 64-bit integer (its values'
    bit patterns times fixed odd multipliers, summed modulo 2**64: exact, in any order),
    looked up among the table's sorted hashes and then compared value for value; the rows
    that this does not place (hashes that collide, NaN values) are looked up by their bytes,
    so the answer is always the dict's.
    """

    def __init__(self, table: np.ndarray) -> None:
        self._table = np.ascontiguousarray(table, dtype=float)
        if self._table.ndim != 2:
            raise ValueError(f"RowIndex: the table must be 2-d, got shape {self._table.shape}")
        rng = np.random.default_rng(0)
        self._multipliers = rng.integers(1, 2**63, size=self._table.shape[1], dtype=np.uint64)
        self._multipliers |= np.uint64(1)
        hashes = self._hash(self._table)
        self._order = np.argsort(hashes, kind="stable")
        self._sorted = hashes[self._order]
        self._by_bytes: dict[bytes, int] | None = None  # built on first need

    @property
    def table(self) -> np.ndarray:
        """The rows indexed (read-only by convention: the index is of these values)."""
        return self._table

    def find(self, rows: np.ndarray) -> np.ndarray:
        """Per row of ``rows``, its position in the table (int64), -1 where it is not there;
        a row the table holds twice is given one of its positions."""
        rows = np.ascontiguousarray(rows, dtype=float)
        if rows.ndim != 2 or rows.shape[1] != self._table.shape[1] or not len(self._table):
            return np.full(len(rows), -1, dtype=np.int64)
        hashes = self._hash(rows)
        at = np.minimum(np.searchsorted(self._sorted, hashes), len(self._sorted) - 1)
        positions = self._order[at]
        placed = (self._sorted[at] == hashes) & (self._table[positions] == rows).all(axis=1)
        if placed.all():
            return positions
        by_bytes = self._bytes_index()
        for i in np.flatnonzero(~placed):
            positions[i] = by_bytes.get(rows[i].tobytes(), -1)
        return positions

    def __getstate__(self) -> dict:  # the bytes index is rebuilt when needed, not pickled
        return {**self.__dict__, "_by_bytes": None}

    def _hash(self, rows: np.ndarray) -> np.ndarray:
        return (rows.view(np.uint64) * self._multipliers).sum(axis=1, dtype=np.uint64)

    def _bytes_index(self) -> dict[bytes, int]:
        if self._by_bytes is None:
            self._by_bytes = {}
            for i, row in enumerate(self._table):
                self._by_bytes.setdefault(row.tobytes(), i)
        return self._by_bytes


class ComponentSelector:
    """Per encoded row, the position of the active component in each stage of ``blocks``.

    On a pipeline space a stage's choice column holds the position (a stage of one
    component has no choice column: its position is 0); on a pool the row is found in the
    pool's table (rows from a search always are); on any other space each row is decoded and
    its :meth:`~automl_core.space.VectorSpace.active_components` read.
    """

    #: who names itself in an error (a class default: selectors pickled before it existed)
    who = "selector"

    def __init__(self, space: VectorSpace, who: str = "selector") -> None:
        self.blocks = space.blocks()
        self.who = who
        #: a pipeline space: the stages' choice columns hold the positions (None: a stage of
        #: one component, always at 0)
        self._choice_columns: list[int | None] | None = None
        #: a pool: its table's rows (indexed) and each candidate's selector row
        self._rows: RowIndex | None = None
        self._choices: np.ndarray | None = None
        #: any other space: decoded row by row (kept only then: a space may not pickle)
        self._space: VectorSpace | None = None
        pool = space.as_pool()
        if pool is not None:
            self._rows = RowIndex(pool.encodings)
            self._choices = pool_choices(space, self.blocks)
        elif space.as_pipeline() is not None and all(
            len(s.columns) == 1 or (not s.columns and len(s.components) == 1)
            for s in self.blocks.stages
        ):
            self._choice_columns = [s.columns[0] if s.columns else None for s in self.blocks.stages]
        else:
            self._space = space

    @property
    def pool_table(self) -> np.ndarray | None:
        """The pool's encodings when the selector reads a pool (None otherwise)."""
        return None if self._rows is None else self._rows.table

    def pool_positions(self, rows: np.ndarray) -> np.ndarray | None:
        """Each of ``rows``' position in the pool's table (None when the selector does not
        read a pool); a ValueError names the first row that is not the pool's."""
        if self._rows is None:
            return None
        positions = self._rows.find(np.asarray(rows, dtype=float))
        missing = np.flatnonzero(positions < 0)
        if missing.size:
            raise ValueError(
                f"{self.who}: row {missing[0]} is not a candidate of the pool (a pool's "
                "rows are its table's)"
            )
        return positions

    def __call__(self, rows: np.ndarray) -> np.ndarray:
        """The positions (rows x stages, int64)."""
        rows = np.asarray(rows, dtype=float)
        if self._choice_columns is not None:
            chosen = np.zeros((len(rows), len(self._choice_columns)), dtype=np.int64)
            for stage, column in enumerate(self._choice_columns):
                if column is not None:
                    chosen[:, stage] = np.round(rows[:, column]).astype(np.int64)
            return np.maximum(chosen, 0)  # an inactive stage: its first component, all inputs 0
        positions = self.pool_positions(rows)
        if positions is not None:
            assert self._choices is not None
            return self._choices[positions]
        assert self._space is not None
        return self.blocks.selector(
            [self._space.active_components(self._space.decode(row)) for row in rows]
        )

    def __setstate__(self, state: dict) -> None:
        encodings = state.pop("_encodings", None)  # pickled before the row index existed
        state.pop("_by_row", None)
        if encodings is not None:
            state["_rows"] = RowIndex(encodings)
        self.__dict__.update(state)
        self.__dict__.setdefault("_rows", None)


def pool_choices(space: VectorSpace, blocks: EncodingBlocks) -> np.ndarray:
    """Every candidate's selector row on a pool (candidates x stages), offered or not: the
    pool's ``stage_choices`` (its blocks have a component per choice index), or one stage
    with one component on a pool without stage structure."""
    pool = space.as_pool()
    assert pool is not None
    if pool.stage_choices is None or not pool.stage_names:
        return np.zeros((len(pool.encodings), len(blocks.stages)), dtype=np.int64)
    return np.asarray(pool.stage_choices).astype(np.int64).reshape(len(pool.encodings), -1)
