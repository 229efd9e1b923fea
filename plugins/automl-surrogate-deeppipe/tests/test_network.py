"""The embedding network: block-masked encoders that pass nothing from an inactive
algorithm, and the paper's weight counts (Eq. 7 and 8)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from synthetic import family_pool

from automl_core.space import ComponentBlock, EncodingBlocks, EncodingColumn, StageBlock
from automl_surrogate_deeppipe.layout import Layout, Selector
from automl_surrogate_deeppipe.network import PipelineEmbedder, expected_weight_count


def blocks_of(stages: list[tuple[str, list[int]]]) -> tuple[list[EncodingColumn], EncodingBlocks]:
    """Numeric columns laid out stage by stage, algorithm by algorithm (``[widths]``)."""
    column, built = 0, []
    for name, widths in stages:
        components = []
        for k, width in enumerate(widths):
            components.append(ComponentBlock(f"{name}{k}", tuple(range(column, column + width))))
            column += width
        built.append(StageBlock(name, tuple(components)))
    columns = [EncodingColumn(f"x{i}") for i in range(column)]
    return columns, EncodingBlocks(column, tuple(built))


#: The paper's App. I, Tensor-OBOE: 37 inputs; L = 4, 1, 1, 1, 5; M = 1, 1, 1, 3, 10.
TENSOR_OBOE = [
    ("imputer", [4]),
    ("encoder", [1]),
    ("scaler", [1]),
    ("reducer", [1, 1, 1]),
    ("estimator", [3, 4, 5, 5, 3, 1, 2, 1, 2, 2]),
]


def test_the_layout_reads_the_papers_tensor_oboe_sizes():
    layout = Layout.of(*blocks_of(TENSOR_OBOE))
    assert layout.component_inputs == 37
    assert layout.stage_widths == (4, 1, 1, 1, 5) and layout.choices == (1, 1, 1, 3, 10)


@pytest.mark.parametrize("F", [4, 8])
@pytest.mark.parametrize("encoder_layers", [0, 1, 2])
def test_the_weight_counts_are_the_papers_on_tensor_oboe(encoder_layers, F):
    """Eq. 7: 444F + 144(ℓa−1)F² without encoders; Eq. 8: 161F + (271(ℓe−1) + 144ℓa)F² with
    them (the paper's Tensor-OBOE example, ℓe + ℓa = 4)."""
    layout = Layout.of(*blocks_of(TENSOR_OBOE))
    aggregation = 4 - encoder_layers
    if encoder_layers == 0:
        paper = 444 * F + 144 * (aggregation - 1) * F**2
    else:
        paper = 161 * F + (271 * (encoder_layers - 1) + 144 * aggregation) * F**2
    assert expected_weight_count(layout, encoder_layers, F) == paper
    network = PipelineEmbedder(layout, encoder_layers=encoder_layers, width_factor=F)
    assert network.paper_weight_count() == paper


def test_on_pmf_s_sizes_eq_7_gives_1152F_not_the_papers_720F():
    """The digest's note: PMF has Σ|Λ| = 72 inputs and Σ L = 3 + 13 = 16, so Eq. 7's first
    term is 72·16·F = 1152F; the paper prints 720F."""
    pmf = [("preprocessor", [3, 2]), ("estimator", [9, 10, 13, 4, 10, 9, 6, 1 + 2 + 2 + 1])]
    layout = Layout.of(*blocks_of(pmf))
    assert layout.component_inputs == 72 - 0 and layout.stage_widths == (3, 13)
    assert expected_weight_count(layout, 0, 1) - 3 * 16**2 == 1152


def test_an_inactive_algorithm_s_inputs_pass_no_signal():
    """The gradient of the embedding with respect to an inactive algorithm's inputs is zero;
    the active algorithm's inputs get some."""
    pool = family_pool()
    layout = Layout.of(pool.columns(), pool.blocks())
    torch.manual_seed(0)
    network = PipelineEmbedder(layout, encoder_layers=2, width_factor=4).double()
    rows = pool.encodings[:20]
    x = torch.tensor(layout.transform(rows), dtype=torch.float64, requires_grad=True)
    selector = torch.as_tensor(Selector(pool)(rows))
    network(x, selector).sum().backward()
    for r in range(len(rows)):
        for s, stage in enumerate(layout.stages):
            for k, component in enumerate(stage):
                gradient = x.grad[r, list(component.inputs)].abs().sum().item()
                if k == selector[r, s]:
                    assert gradient > 0, (r, component.name)
                else:
                    assert gradient == 0, (r, component.name)


def test_changing_an_inactive_algorithm_s_values_changes_nothing():
    pool = family_pool()
    layout = Layout.of(pool.columns(), pool.blocks())
    network = PipelineEmbedder(layout, encoder_layers=1, width_factor=4).double()
    rows = pool.encodings[:30].copy()
    selector = torch.as_tensor(Selector(pool)(rows))
    before = network(torch.as_tensor(layout.transform(rows), dtype=torch.float64), selector)
    scaler_one = list(layout.stages[0][1].inputs)  # the second scaler's inputs
    inputs = layout.transform(rows)
    inactive = selector[:, 0].numpy() != 1
    inputs[np.ix_(inactive, scaler_one)] = 0.77
    after = network(torch.as_tensor(inputs, dtype=torch.float64), selector)
    assert torch.allclose(before[inactive], after[inactive])


@pytest.mark.parametrize("encoder_layers", [1, 2, 3])
def test_scoring_runs_only_the_active_encoders_and_gives_the_training_path_s_embeddings(
    encoder_layers,
):
    """Without gradients each row goes through its active algorithms' encoders only; the
    embeddings are those of the training path, which runs every encoder and masks."""
    pool = family_pool()
    layout = Layout.of(pool.columns(), pool.blocks())
    torch.manual_seed(1)
    network = PipelineEmbedder(layout, encoder_layers=encoder_layers, width_factor=3).double()
    rows = pool.encodings
    x = torch.as_tensor(layout.transform(rows), dtype=torch.float64)
    selector = torch.as_tensor(Selector(pool)(rows))
    assert len(torch.unique(selector, dim=0)) > 3  # several algorithms per stage in use
    trained = network(x, selector)

    def every_encoder(rows):
        raise AssertionError("scoring ran every algorithm's encoder")

    network._all_blocks = every_encoder  # the training path, refused while scoring
    with torch.no_grad():
        scored = network(x, selector)
    assert torch.allclose(trained, scored, rtol=0, atol=1e-12)


def test_a_checkpoint_saved_with_the_old_selection_map_still_loads():
    """Checkpoints made before 2026-11-27 carry a ``gather`` buffer that the network no
    longer keeps; loading one (strictly) ignores it."""
    pool = family_pool()
    layout = Layout.of(pool.columns(), pool.blocks())
    torch.manual_seed(2)
    saved = PipelineEmbedder(layout, encoder_layers=1, width_factor=2)
    state = {**saved.state_dict(), "gather": torch.arange(7)}
    loaded = PipelineEmbedder(layout, encoder_layers=1, width_factor=2)
    loaded.load_state_dict(state)
    assert "gather" not in loaded.state_dict()
    rows = pool.encodings[:9]
    x = torch.as_tensor(layout.transform(rows), dtype=torch.float32)
    selector = torch.as_tensor(Selector(pool)(rows))
    assert torch.equal(saved(x, selector), loaded(x, selector))


def test_an_algorithm_without_hyper_parameters_gets_an_indicator_input():
    pool = family_pool()
    layout = Layout.of(pool.columns(), pool.blocks())
    plain = layout.stages[1][2]  # the model without hyper-parameters
    assert plain.width == 1 and plain.inputs[0] in layout.indicators
    assert (layout.transform(pool.encodings[:5])[:, plain.inputs[0]] == 1).all()


def test_categorical_columns_are_one_hot_and_inactive_values_zero():
    columns = [
        EncodingColumn("c", categories=3, conditional=True),
        EncodingColumn("x", conditional=True),
    ]
    blocks = EncodingBlocks(2, (StageBlock("s", (ComponentBlock("a", (0, 1)),)),))
    layout = Layout.of(columns, blocks)
    out = layout.transform(np.array([[2.0, 0.5], [-1.0, -1.0]]))
    assert out.tolist() == [[0, 0, 1, 0.5], [0, 0, 0, 0]]


@pytest.mark.parametrize("encoder_layers", [0, 1, 2])
def test_the_embedding_has_z_dimensions_and_is_finite(encoder_layers):
    pool = family_pool()
    layout = Layout.of(pool.columns(), pool.blocks())
    network = PipelineEmbedder(layout, encoder_layers=encoder_layers, width_factor=2, latent=7)
    rows = pool.encodings[:11]
    z = network(torch.as_tensor(layout.transform(rows)), torch.as_tensor(Selector(pool)(rows)))
    assert z.shape == (11, 7) and torch.isfinite(z).all()


def test_bad_shapes_are_refused_with_the_parameter_named():
    layout = Layout.of(*blocks_of([("s", [2])]))
    with pytest.raises(ValueError, match="encoder_layers"):
        PipelineEmbedder(layout, encoder_layers=4)
    with pytest.raises(ValueError, match="width_factor"):
        PipelineEmbedder(layout, width_factor=0)


def test_rows_built_for_scoring_skip_the_training_index_and_refuse_gradients():
    """Rows made only to be scored (a pool at every BO step) leave out the index the training
    path gathers with; the GP's per-fit cache builds it again when it trains on them."""
    from automl_surrogate_deeppipe.model import DeepKernelGP, pack

    pool = family_pool()
    layout = Layout.of(pool.columns(), pool.blocks())
    torch.manual_seed(3)
    network = PipelineEmbedder(layout, encoder_layers=1, width_factor=2)
    rows = pool.encodings[:12]
    x = torch.as_tensor(layout.transform(rows), dtype=torch.float32)
    selector = torch.as_tensor(Selector(pool)(rows))
    scoring = network.rows(x, selector, training=False)
    assert scoring.active is None
    with torch.no_grad():
        assert torch.equal(network.embed(scoring), network.embed(network.rows(x, selector)))
    with pytest.raises(RuntimeError, match="training=False"):
        network.embed(scoring)
    model = DeepKernelGP(network)
    packed = pack(layout.transform(rows), Selector(pool)(rows))
    with torch.no_grad():
        assert model._network_rows(packed).active is None
    assert model._network_rows(packed).active is not None
    assert model.embed(packed).requires_grad
