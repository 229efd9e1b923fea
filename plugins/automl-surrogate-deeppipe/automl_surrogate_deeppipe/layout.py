"""From a space's encoded rows to DeepPipe's inputs: per (stage, algorithm) blocks of columns.

DeepPipe (Pineda Arango & Grabocka, KDD 2023) gives every algorithm of every stage its own
encoder over that algorithm's hyper-parameters; only the active algorithm's encoder output
reaches the aggregation network. A :class:`Layout` is that structure for one space, built
from :meth:`~automl_core.space.VectorSpace.blocks`:

- the network's *inputs* are the space's columns, categoricals one-hot encoded and inactive
  values (``-1``) set to 0, numbers min-max scaled to [0, 1] (the paper's preprocessing; the
  spaces' numbers already are, a pool's are scaled by its own table);
- each component reads the inputs of its own columns; a component with no columns gets one
  *indicator* input, 1 on every row (the paper's "IsActive"), so that it too has an encoder;
- the stages' own columns (a pipeline stage's ``__choice__``) and the shared ones go straight
  to the aggregation layers, with the one-hot of the active algorithm per stage (the paper's
  App. F: "adding the one-hot encoding of the selected algorithms per stage is helpful");
- the *selector* (per row and stage, the active component's position) is read from the
  stage's choice column on a pipeline space, from the pool's table on a pool, or through
  ``decode`` and ``active_components`` on any other space.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from automl_core.space import INACTIVE, EncodingBlocks, EncodingColumn, VectorSpace


@dataclass(frozen=True)
class ComponentInputs:
    """One (stage, algorithm): the positions of its inputs in the transformed row."""

    stage: str
    name: str
    inputs: tuple[int, ...]

    @property
    def width(self) -> int:
        """|Λ_{i,j}|: how many inputs the encoder reads."""
        return len(self.inputs)


@dataclass(frozen=True)
class Layout:
    """How a space's encoded rows become the network's inputs, and which are whose."""

    #: the space's columns, in order
    columns: tuple[EncodingColumn, ...]
    #: per stage, its components' inputs (stages in the order of ``blocks``)
    stages: tuple[tuple[ComponentInputs, ...], ...]
    #: inputs read directly by the aggregation layers (stage choice columns, shared columns)
    direct: tuple[int, ...]
    #: number of transformed inputs (one-hots expanded, indicators added)
    width: int
    #: per space column, its first input position and how many inputs it expands to
    offsets: tuple[tuple[int, int], ...]
    #: the inputs that are constant 1 (indicators of components without columns)
    indicators: tuple[int, ...] = ()
    #: per numeric column, the (low, high) it is min-max scaled from
    ranges: dict[int, tuple[float, float]] = field(default_factory=dict)

    @classmethod
    def of(
        cls,
        columns: list[EncodingColumn] | tuple[EncodingColumn, ...],
        blocks: EncodingBlocks,
        ranges: dict[int, tuple[float, float]] | None = None,
    ) -> Layout:
        """The layout of rows with ``columns`` structured by ``blocks``; ``ranges`` (column
        -> (low, high)) min-max scales numeric columns that are not in [0, 1] already."""
        if blocks.width != len(columns):
            raise ValueError(
                f"deeppipe: the space's blocks cover {blocks.width} columns, its encoding has "
                f"{len(columns)}"
            )
        offsets, position = [], 0
        for column in columns:
            size = column.categories if column.categories else 1
            offsets.append((position, size))
            position += size
        expand = _expander(offsets)
        stages, indicators = [], []
        for stage in blocks.stages:
            components = []
            for component in stage.components:
                inputs = expand(component.columns)
                if not inputs:  # no hyper-parameters: an indicator input of its own
                    inputs = (position,)
                    indicators.append(position)
                    position += 1
                components.append(ComponentInputs(stage.name, component.name, inputs))
            stages.append(tuple(components))
        direct = expand(
            tuple(sorted([*blocks.shared, *(c for s in blocks.stages for c in s.columns)]))
        )
        return cls(
            columns=tuple(columns),
            stages=tuple(stages),
            direct=direct,
            width=position,
            offsets=tuple(offsets),
            indicators=tuple(indicators),
            ranges=dict(ranges or {}),
        )

    @property
    def stage_names(self) -> tuple[str, ...]:
        return tuple(stage[0].stage for stage in self.stages)

    # -- sizes (the paper's notation) ----------------------------------------------------------
    @property
    def choices(self) -> tuple[int, ...]:
        """M_i: the number of algorithms per stage."""
        return tuple(len(stage) for stage in self.stages)

    @property
    def stage_widths(self) -> tuple[int, ...]:
        """L_i = max_j |Λ_{i,j}|: the widest algorithm of each stage."""
        return tuple(max(c.width for c in stage) for stage in self.stages)

    @property
    def component_inputs(self) -> int:
        """Σ_{i,j} |Λ_{i,j}|: the inputs all encoders read together."""
        return sum(c.width for stage in self.stages for c in stage)

    def components(self) -> list[ComponentInputs]:
        """Every (stage, algorithm), stage by stage."""
        return [c for stage in self.stages for c in stage]

    def index(self, stage: str, name: str) -> int:
        """The position of (stage, name) in :meth:`components` (KeyError if absent)."""
        for position, component in enumerate(self.components()):
            if (component.stage, component.name) == (stage, name):
                return position
        raise KeyError(f"deeppipe: no component {name!r} in stage {stage!r}")

    # -- rows ---------------------------------------------------------------------------------
    def transform(self, rows: np.ndarray) -> np.ndarray:
        """The network's inputs for encoded ``rows`` (n x len(columns)): float32, n x width."""
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
        out[:, list(self.indicators)] = 1.0
        return out

    def signature(self) -> dict:
        """What a checkpoint must agree with to be loaded into a network of this layout."""
        return {
            "width": self.width,
            "stages": [[[c.name, list(c.inputs)] for c in stage] for stage in self.stages],
            "stage_names": list(self.stage_names),
            "direct": list(self.direct),
        }


def _expander(offsets: list[tuple[int, int]]):
    def expand(columns: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(
            i for c in columns for i in range(offsets[c][0], offsets[c][0] + offsets[c][1])
        )

    return expand


class Selector:
    """Per encoded row, the position of the active component in each stage of ``blocks``.

    On a pipeline space a stage's choice column holds the position (a stage of one
    component has no choice column: its position is 0); on a pool the row is
    found in the pool's table (rows from a search always are); on any other space each row
    is decoded and its :meth:`~automl_core.space.VectorSpace.active_components` read.
    """

    def __init__(self, space: VectorSpace) -> None:
        self.blocks = space.blocks()
        #: a pipeline space: the stages' choice columns hold the positions (None: a stage of
        #: one component, always at 0)
        self._choice_columns: list[int | None] | None = None
        #: a pool: its table's rows and each candidate's selector row
        self._encodings: np.ndarray | None = None
        self._choices: np.ndarray | None = None
        #: any other space: decoded row by row (kept only then: a space may not pickle)
        self._space: VectorSpace | None = None
        pool = space.as_pool()
        if pool is not None:
            self._encodings = np.ascontiguousarray(pool.encodings, dtype=float)
            self._choices = pool_choices(space, self.blocks)
        elif space.as_pipeline() is not None and all(
            len(s.columns) == 1 or (not s.columns and len(s.components) == 1)
            for s in self.blocks.stages
        ):
            self._choice_columns = [s.columns[0] if s.columns else None for s in self.blocks.stages]
        else:
            self._space = space
        self._index_rows()

    def _index_rows(self) -> None:
        self._by_row: dict[bytes, int] = {}
        if self._encodings is not None:
            self._by_row = {row.tobytes(): i for i, row in enumerate(self._encodings)}

    def __call__(self, rows: np.ndarray) -> np.ndarray:
        rows = np.asarray(rows, dtype=float)
        if self._choice_columns is not None:
            chosen = np.zeros((len(rows), len(self._choice_columns)), dtype=np.int64)
            for stage, column in enumerate(self._choice_columns):
                if column is not None:
                    chosen[:, stage] = np.round(rows[:, column]).astype(np.int64)
            return np.maximum(chosen, 0)  # an inactive stage: its first component, all inputs 0
        if self._choices is not None:
            found = [self._by_row.get(np.ascontiguousarray(row).tobytes()) for row in rows]
            missing = [i for i, f in enumerate(found) if f is None]
            if missing:
                raise ValueError(
                    f"deeppipe: row {missing[0]} is not a candidate of the pool (a pool's rows "
                    "are its table's)"
                )
            return self._choices[np.asarray(found, dtype=np.int64)]
        assert self._space is not None
        return self.blocks.selector(
            [self._space.active_components(self._space.decode(row)) for row in rows]
        )

    def __getstate__(self) -> dict:  # the row index is rebuilt, not pickled
        state = dict(self.__dict__)
        state.pop("_by_row", None)
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._index_rows()


def pool_choices(space: VectorSpace, blocks: EncodingBlocks) -> np.ndarray:
    """Every candidate's selector row on a pool (candidates x stages), offered or not: the
    pool's ``stage_choices`` (its blocks have a component per choice index), or one stage
    with one component on a pool without stage structure."""
    pool = space.as_pool()
    assert pool is not None
    if pool.stage_choices is None or not pool.stage_names:
        return np.zeros((len(pool.encodings), len(blocks.stages)), dtype=np.int64)
    return np.asarray(pool.stage_choices).astype(np.int64).reshape(len(pool.encodings), -1)


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
