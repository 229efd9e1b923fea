"""DeepPipe's embedding network φ(p_λ; θ): per-algorithm encoders, selection, aggregation.

Built as the paper's App. D describes, one sparse network rather than a list of encoders:

1. **encoder layers** (ℓ_e of them): a linear layer whose weight is multiplied by a fixed
   block mask, so each (stage, algorithm)'s inputs reach only that algorithm's block of
   F·L_i neurons; deeper encoder layers are block-diagonal in the same way;
2. **selection and concatenation**: each row's active algorithm per stage (its selector)
   keeps that algorithm's block and zeroes the others; the blocks of one stage are summed
   (only one is non-zero), giving one F·L_i block per stage, concatenated (the paper's fixed
   0/1 weights, applied as an index sum rather than a mostly-zero matrix product);
3. **aggregation** (ℓ_a = depth − ℓ_e layers of width F·Σ_i L_i, ReLU) and a last linear
   layer to the embedding of size Z.

The aggregation layers also read the *direct* inputs (stage choice and shared columns) and
the one-hot of the active algorithms. With ℓ_e = 0 there are no encoders: the first
aggregation layer reads all inputs (the paper's plain MLP on the flat encoding plus the
algorithm one-hots, as the authors' code does).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import nn

from automl_surrogate_deeppipe.layout import Layout

#: The paper's total depth ℓ_e + ℓ_a.
DEPTH = 4
#: The paper's embedding size (PMF's latent dimension).
LATENT = 20


@dataclass(frozen=True)
class NetworkRows:
    """Rows as the network reads them: what depends on the rows alone, computed once per set of
    rows (:meth:`PipelineEmbedder.rows`), since a fit reads the same rows at each of its steps
    and a step at n = 100 is mostly per-operation overhead."""

    #: the transformed inputs (n x layout width)
    inputs: torch.Tensor
    #: per row and stage, the active algorithm's position in its stage
    selector: torch.Tensor
    #: what the first aggregation layer reads besides the stages' blocks: the direct inputs
    #: and the one-hot of the active algorithms (without encoders: every input and the one-hot)
    tail: torch.Tensor
    #: per row and stage-block neuron, the encoder neuron of the row's active algorithm that
    #: fills it: what the training path reads (None without encoders, and for rows made only
    #: to be scored: on PMF's pool it is 24,687 x 104 indices, ~45 ms a step to build, profiled
    #: with another process on the second core)
    active: torch.Tensor | None


class MaskedLinear(nn.Module):
    """A linear layer whose weight is zero outside a fixed 0/1 ``mask`` (out x in): a masked
    entry passes no signal forward and receives no gradient.

    Only the unmasked weights are parameters (the optimiser's work is in proportion to the
    weights that exist, not to the dense matrix); the dense weight is assembled from them in
    each forward pass."""

    def __init__(self, mask: np.ndarray) -> None:
        super().__init__()
        self.out_features, self.in_features = mask.shape
        rows, columns = np.nonzero(mask)
        self.register_buffer("rows", torch.as_tensor(rows, dtype=torch.long))
        self.register_buffer("columns", torch.as_tensor(columns, dtype=torch.long))
        # initialised as if each block were its own layer: uniform in ±1/sqrt(its fan-in)
        fan_in = np.maximum(mask.sum(axis=1), 1.0)
        bound = torch.as_tensor(1.0 / np.sqrt(fan_in), dtype=torch.float32)
        self.values = nn.Parameter((torch.rand(len(rows)) * 2 - 1) * bound[rows])
        self.bias = nn.Parameter((torch.rand(self.out_features) * 2 - 1) * bound)

    @property
    def weight(self) -> torch.Tensor:
        """The dense weight (out x in), zero outside the mask."""
        dense = self.values.new_zeros(self.out_features, self.in_features)
        return dense.index_put((self.rows, self.columns), self.values)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return nn.functional.linear(x, self.weight, self.bias)

    def weight_count(self) -> int:
        """The weights that exist (unmasked), biases left out as in the paper's counts."""
        return int(self.values.numel())


class PipelineEmbedder(nn.Module):
    """φ: transformed rows (:meth:`Layout.transform`) and their selectors -> R^Z."""

    def __init__(
        self,
        layout: Layout,
        encoder_layers: int = 1,
        width_factor: int = 8,
        latent: int = LATENT,
        depth: int = DEPTH,
    ) -> None:
        super().__init__()
        if not 0 <= encoder_layers < depth:
            raise ValueError(
                f"deeppipe: encoder_layers must be in [0, {depth - 1}], got {encoder_layers}"
            )
        if width_factor < 1:
            raise ValueError(f"deeppipe: width_factor must be at least 1, got {width_factor}")
        self.layout = layout
        self.encoder_layers, self.width_factor, self.latent = encoder_layers, width_factor, latent
        components = layout.components()
        stage_of = [s for s, stage in enumerate(layout.stages) for _ in stage]
        widths = layout.stage_widths
        block = [width_factor * widths[s] for s in stage_of]  # F·L_i per component
        starts = np.concatenate([[0], np.cumsum(block)]).astype(int)
        # 1. encoder layers: block mask, then block-diagonal
        encoders: list[nn.Module] = []
        if encoder_layers:
            first = np.zeros((starts[-1], layout.width))
            for c, component in enumerate(components):
                first[starts[c] : starts[c + 1], list(component.inputs)] = 1.0
            encoders.append(MaskedLinear(first))
            diagonal = np.zeros((starts[-1], starts[-1]))
            for c in range(len(components)):
                diagonal[starts[c] : starts[c + 1], starts[c] : starts[c + 1]] = 1.0
            encoders += [MaskedLinear(diagonal) for _ in range(encoder_layers - 1)]
        self.encoders = nn.ModuleList(encoders)
        # 2. selection: each stage's block is filled from its active algorithm's block
        stage_starts = np.concatenate([[0], np.cumsum([width_factor * w for w in widths])]).astype(
            int
        )
        self.stage_width = int(stage_starts[-1])
        self.register_buffer(
            "block_of", torch.as_tensor(np.repeat(np.arange(len(components)), block))
        )
        choice_offsets = np.concatenate([[0], np.cumsum(layout.choices)[:-1]]).astype(int)
        self.register_buffer("choice_offsets", torch.as_tensor(choice_offsets, dtype=torch.long))
        self.n_components = len(components)
        #: per component: its stage, its position there, its encoder neurons [start, stop)
        #: and where its stage's block starts (the scoring path's per-algorithm encoders)
        self._blocks = [
            (
                stage_of[c],
                c - int(choice_offsets[stage_of[c]]),
                int(starts[c]),
                int(starts[c + 1]),
                int(stage_starts[stage_of[c]]),
            )
            for c in range(len(components))
        ]
        self.register_buffer("direct", torch.as_tensor(layout.direct, dtype=torch.long))
        # per component its first encoder neuron; per stage-block neuron its stage and its
        # offset in the block (not saved in checkpoints: they follow from the layout)
        self.register_buffer(
            "component_start", torch.as_tensor(starts[:-1], dtype=torch.long), persistent=False
        )
        neuron_stage = np.repeat(np.arange(len(widths)), [width_factor * w for w in widths])
        self.register_buffer(
            "neuron_stage", torch.as_tensor(neuron_stage, dtype=torch.long), persistent=False
        )
        self.register_buffer(
            "neuron_offset",
            torch.as_tensor(np.arange(len(neuron_stage)) - stage_starts[neuron_stage]),
            persistent=False,
        )
        # 3. aggregation
        hidden = width_factor * sum(widths)
        if encoder_layers:  # the stages' blocks, the direct inputs, the algorithm one-hots
            first_in = stage_starts[-1] + len(layout.direct) + self.n_components
        else:  # every input and the algorithm one-hots
            first_in = layout.width + self.n_components
        aggregation_layers = depth - encoder_layers
        layers: list[nn.Module] = [nn.Linear(first_in, hidden)]
        layers += [nn.Linear(hidden, hidden) for _ in range(aggregation_layers - 1)]
        self.aggregation = nn.ModuleList(layers)
        self.output = nn.Linear(hidden, latent)
        self.hidden = hidden
        self._paper_inputs = stage_starts[-1] if encoder_layers else layout.component_inputs

    def rows(self, x: torch.Tensor, selector: torch.Tensor, training: bool = True) -> NetworkRows:
        """``x`` (transformed inputs) and ``selector`` as :meth:`embed` reads them; with
        ``training`` False, as it reads them without gradients only (faster to build)."""
        component = selector + self.choice_offsets  # per row and stage, the active component
        hot = x.new_zeros(len(x), self.n_components).scatter_(1, component, 1.0)
        if not self.encoders:
            return NetworkRows(x, selector, torch.cat([x, hot], dim=1), None)
        tail = torch.cat([x.index_select(1, self.direct), hot], dim=1)
        if not training:
            return NetworkRows(x, selector, tail, None)
        first = self.component_start[component]  # per row and stage, its first encoder neuron
        active = first.index_select(1, self.neuron_stage) + self.neuron_offset
        return NetworkRows(x, selector, tail, active)

    def forward(self, x: torch.Tensor, selector: torch.Tensor) -> torch.Tensor:
        return self.embed(self.rows(x, selector))

    def _load_from_state_dict(self, state_dict: dict, prefix: str, *args: Any) -> None:
        """Checkpoints made before 2026-11-27 also saved the selection map (``gather``),
        which follows from the layout and is no longer kept: it is ignored."""
        state_dict.pop(prefix + "gather", None)
        super()._load_from_state_dict(state_dict, prefix, *args)

    def embed(self, rows: NetworkRows) -> torch.Tensor:
        """φ of ``rows``."""
        if self.encoders:
            encode = self._all_blocks if torch.is_grad_enabled() else self._active_blocks
            h = torch.cat([encode(rows), rows.tail], dim=1)
        else:
            h = rows.tail
        for layer in self.aggregation:
            h = torch.relu(layer(h))
        return self.output(h)

    def _all_blocks(self, rows: NetworkRows) -> torch.Tensor:
        """The stages' blocks with every algorithm's encoder run on every row, each stage's
        block then read from the active algorithm's neurons: one operation per layer, which
        is what training on the few hundred rows of a BO step or a meta-training batch wants
        (per-operation overhead dominates there), and what autograd differentiates."""
        h = rows.inputs
        for layer in self.encoders:
            h = torch.relu(layer(h))
        if rows.active is None:
            raise RuntimeError("deeppipe: rows built with training=False were given gradients")
        return h.gather(1, rows.active)

    def _active_blocks(self, rows: NetworkRows) -> torch.Tensor:
        """The same blocks with each row run through its active algorithms' encoders only
        (no gradients): scoring PMF's 24,687 offered pipelines took 0.54 s through
        :meth:`_all_blocks` (every row through all ten encoders), 0.27 s so (profiled, with
        another process on the second core)."""
        weights = [(layer.weight, layer.bias) for layer in self.encoders]
        x, selector = rows.inputs, rows.selector
        stages = x.new_zeros(len(x), self.stage_width)
        for stage, position, start, stop, out in self._blocks:
            chosen = torch.nonzero(selector[:, stage] == position).squeeze(1)
            if not len(chosen):
                continue
            h = x.index_select(0, chosen)
            for depth, (weight, bias) in enumerate(weights):
                columns = slice(None) if depth == 0 else slice(start, stop)
                h = torch.relu(
                    nn.functional.linear(h, weight[start:stop, columns], bias[start:stop])
                )
            stages[:, out : out + stop - start].index_copy_(0, chosen, h)
        return stages

    # -- the paper's weight counts (Eq. 7 and 8) -------------------------------------------------
    def paper_weight_count(self) -> int:
        """The weights the paper counts: encoder and aggregation layers, biases, the
        algorithm one-hot and direct inputs and the projection to Z left out."""
        count = sum(layer.weight_count() for layer in self.encoders)  # type: ignore[union-attr]
        first = self.aggregation[0]
        count += self._paper_inputs * first.out_features  # type: ignore[operator]
        count += sum(layer.weight.numel() for layer in list(self.aggregation)[1:])  # type: ignore[union-attr]
        return int(count)


def expected_weight_count(
    layout: Layout, encoder_layers: int, width_factor: int, depth: int = DEPTH
) -> int:
    """Eq. 7 (no encoders) and Eq. 8 (with encoders) of the paper, biases omitted:
    Σ|Λ|·F·ΣL + (ℓ_a−1)(F·ΣL)² without encoders, Σ_{i,j}|Λ_{i,j}|·F·L_i +
    (ℓ_e−1)·Σ_i M_i·(F·L_i)² + ℓ_a·(F·ΣL)² with them."""
    F, L, M = width_factor, layout.stage_widths, layout.choices
    aggregation = depth - encoder_layers
    total = F * sum(L)
    if encoder_layers == 0:
        return layout.component_inputs * total + (aggregation - 1) * total**2
    first = sum(c.width * F * L[s] for s, stage in enumerate(layout.stages) for c in stage)
    deeper = (encoder_layers - 1) * sum(M[s] * (F * L[s]) ** 2 for s in range(len(L)))
    return first + deeper + aggregation * total**2
