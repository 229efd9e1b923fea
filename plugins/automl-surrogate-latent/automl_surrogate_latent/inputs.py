"""From a space's encoded rows to the per-algorithm embeddings' inputs.

The shared-latent-space method (Ishikawa et al.) gives every *algorithm* its own MLP over its
own hyper-parameters. Here an algorithm is a component of one stage of the space's
:meth:`~automl_core.space.VectorSpace.blocks` (the *algorithm stage*: by default the last
stage, where pipelines put their model -- ``classifier`` on ``autosklearn-classification``,
``estimator`` on PMF and Tensor-OBOE, ``learner`` on LCDB, ``algorithm`` on Oboe).

The paper's algorithms have no preprocessing; our pipelines do. Every algorithm's MLP
therefore reads, after its own hyper-parameters, the *context*: the inputs of every other
stage (which preprocessor, with which hyper-parameters) and the shared columns, so that two
pipelines with the same model and different preprocessing can embed apart. An algorithm with
no inputs at all gets a constant one (its embedding is then a single learned point).

Inputs are the space's columns as :class:`~automl_spaces.component_rows.NetworkInputs` makes
them: numbers in [0, 1] (a pipeline space's encoding is already log-aware; a pool's columns
are min-max scaled over its table), categoricals one-hot, inactive values 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from automl_core.space import EncodingColumn, VectorSpace
from automl_spaces.component_rows import ComponentSelector, NetworkInputs, numeric_ranges


@dataclass(frozen=True)
class AlgorithmInputs:
    """Which inputs each algorithm's MLP reads, and how rows become them."""

    #: the algorithm stage's name and position among the space's stages
    stage: str
    stage_index: int
    #: the algorithms (the stage's components), in order: an algorithm's index is its task
    names: tuple[str, ...]
    #: per algorithm, the input positions of its own hyper-parameters
    own: tuple[tuple[int, ...], ...]
    #: the input positions every algorithm reads after its own (other stages, shared columns)
    context: tuple[int, ...]
    network: NetworkInputs

    @classmethod
    def of(cls, space: VectorSpace, stage: str | None = None) -> AlgorithmInputs:
        """The inputs of ``space``'s algorithms; ``stage`` names the algorithm stage
        (default: the last)."""
        blocks = space.blocks()
        names = [s.name for s in blocks.stages]
        if stage is None:
            stage = names[-1]
        if stage not in names:
            raise ValueError(
                f"latent surrogate: the space {space.name!r} has no stage {stage!r}; its "
                f"stages are {', '.join(names)}"
            )
        index = names.index(stage)
        network = NetworkInputs(tuple(space.columns()), numeric_ranges(space))
        algorithms = blocks.stages[index].components
        own_columns = {c for component in algorithms for c in component.columns}
        context = sorted(set(range(blocks.width)) - own_columns)
        return cls(
            stage=stage,
            stage_index=index,
            names=tuple(component.name for component in algorithms),
            own=tuple(network.expand(component.columns) for component in algorithms),
            context=network.expand(context),
            network=network,
        )

    @property
    def widths(self) -> tuple[int, ...]:
        """Per algorithm, how many inputs its MLP reads (at least 1: a constant input)."""
        return tuple(max(len(own) + len(self.context), 1) for own in self.own)

    def pack(self, rows: np.ndarray, algorithms: np.ndarray) -> np.ndarray:
        """Per row, its algorithm's index then its MLP's inputs, zero-padded to the widest
        algorithm's (n x (1 + max width), float64): one array a torch model splits again."""
        inputs = self.network.transform(rows)
        algorithms = np.asarray(algorithms, dtype=np.int64)
        packed = np.zeros((len(rows), 1 + max(self.widths)))
        packed[:, 0] = algorithms
        for m, own in enumerate(self.own):
            hit = np.flatnonzero(algorithms == m)
            if not len(hit):
                continue
            columns = [*own, *self.context]
            if columns:
                packed[np.ix_(hit, 1 + np.arange(len(columns)))] = inputs[np.ix_(hit, columns)]
            else:
                packed[hit, 1] = 1.0  # the constant input of an algorithm without inputs
        return packed


class RowPacker:
    """Encoded rows to packed inputs (:meth:`AlgorithmInputs.pack`), each row's algorithm
    read by a :class:`~automl_spaces.component_rows.ComponentSelector`; without a space (a
    surrogate told only the columns), every row is of one algorithm reading every column:
    the model is then a deep-kernel GP on one MLP's embeddings."""

    def __init__(self, inputs: AlgorithmInputs, selector: ComponentSelector | None) -> None:
        self.inputs, self.selector = inputs, selector

    @classmethod
    def of_space(cls, space: VectorSpace, stage: str | None = None) -> RowPacker:
        return cls(AlgorithmInputs.of(space, stage), ComponentSelector(space, "latent surrogate"))

    @classmethod
    def of_columns(cls, columns: Sequence[EncodingColumn]) -> RowPacker:
        network = NetworkInputs(tuple(columns))
        inputs = AlgorithmInputs(
            stage="",
            stage_index=0,
            names=("all",),
            own=(tuple(range(network.width)),),
            context=(),
            network=network,
        )
        return cls(inputs, None)

    def algorithms(self, rows: np.ndarray) -> np.ndarray:
        """Each row's algorithm index."""
        if self.selector is None:
            return np.zeros(len(rows), dtype=np.int64)
        return self.selector(rows)[:, self.inputs.stage_index]

    def __call__(self, rows: np.ndarray) -> np.ndarray:
        return self.inputs.pack(rows, self.algorithms(rows))
