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

from automl_core.space import (
    ComponentBlock,
    EncodingBlocks,
    EncodingColumn,
    StageBlock,
    VectorSpace,
)
from automl_spaces.component_rows import (
    ComponentSelector,
    NetworkInputs,
)


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
        inputs = NetworkInputs(tuple(columns))
        offsets, position, expand = list(inputs.offsets), inputs.width, inputs.expand
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

    @classmethod
    def of_structure(
        cls,
        columns: list[EncodingColumn] | tuple[EncodingColumn, ...],
        algorithm_domain: list[int],
        stage_algorithms: list[list[int]],
        stage_names: list[str],
    ) -> Layout:
        """The layout of a DeepPipe meta-data file's own structure: algorithm ``a`` reads
        columns ``[algorithm_domain[a], algorithm_domain[a + 1])``, stage ``i`` holds the
        algorithms ``stage_algorithms[i]`` (the authors' ``list_for_concatenator``); columns are
        read as stored, unscaled, as the authors' network reads them."""
        stages = tuple(
            StageBlock(
                name,
                tuple(
                    ComponentBlock(
                        f"algorithm_{a}", tuple(range(algorithm_domain[a], algorithm_domain[a + 1]))
                    )
                    for a in algorithms
                ),
            )
            for name, algorithms in zip(stage_names, stage_algorithms, strict=True)
        )
        covered = {
            c for stage in stages for component in stage.components for c in component.columns
        }
        shared = tuple(c for c in range(len(columns)) if c not in covered)
        return cls.of(columns, EncodingBlocks(width=len(columns), stages=stages, shared=shared))

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
        """The network's inputs for encoded ``rows`` (n x len(columns)): float32, n x width
        (the columns' inputs, then the indicators, always 1)."""
        columns = NetworkInputs(self.columns, self.ranges).transform(rows)
        out = np.zeros((len(columns), self.width), dtype=np.float32)
        out[:, : columns.shape[1]] = columns
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


class Selector(ComponentSelector):
    """The core's :class:`~automl_spaces.component_rows.ComponentSelector`, naming DeepPipe in
    its errors."""

    def __init__(self, space: VectorSpace) -> None:
        super().__init__(space, "deeppipe")
