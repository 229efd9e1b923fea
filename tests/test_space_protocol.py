"""The typed space protocol: both kinds implement VectorSpace whole, their per-component
blocks say which encoding columns belong to which stage and component, and code outside
automl_core/space.py never duck-types a space."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from ConfigSpace import ConfigurationSpace, Float, Integer

from automl_core.contracts import SearchContext
from automl_core.errors import InvalidConfigurationError
from automl_core.random_search import RandomSearch
from automl_core.space import (
    INACTIVE,
    ComponentBlock,
    EncodingBlocks,
    PipelineComponent,
    SearchSpace,
    Stage,
    StageBlock,
    VectorSpace,
    pipeline_space,
    require_vector_space,
    vector_space,
)
from automl_spaces.pipeline_space import PipelineSpace
from automl_spaces.pool_space import PoolSpace

ROOT = Path(__file__).resolve().parents[1]


def component(name: str, stage: str, **hyperparameters: object) -> PipelineComponent:
    def space() -> ConfigurationSpace:
        return ConfigurationSpace(dict(hyperparameters))

    return PipelineComponent(name, stage, lambda params, context: None, space)


def staged() -> PipelineSpace:
    """Four stages, one nested under another's prefix (as auto-sklearn names them), one
    without a choice, one whose components have no hyper-parameters; and a constant."""
    stages = (
        Stage(
            "imputation",
            (component("impute", "imputation", strategy=["mean", "median"]),),
            prefix="data",
            choice=False,
        ),
        Stage(
            "rescaling",
            (component("none", "rescaling"), component("quantile", "rescaling", q=(2, 50))),
            prefix="data:numerical:rescaling",
        ),
        Stage("balancing", (component("off", "balancing"), component("weights", "balancing"))),
        Stage(
            "classifier",
            (
                component("tree", "classifier", depth=Integer("depth", (1, 10)), leaf=(1, 20)),
                component("logistic", "classifier", C=Float("C", (0.01, 100), log=True)),
            ),
        ),
    )
    return PipelineSpace(
        "staged", "classification", stages, lambda c, x: None, constants={"mode": "dense"}
    )


def named_columns(space: PipelineSpace, columns: tuple[int, ...]) -> list[str]:
    names = [column.name for column in space.columns()]
    return sorted(names[i] for i in columns)


def stage_pool(**changes: object) -> PoolSpace:
    """Six candidates in two stages, encoded as a pipeline space would be: a scaler (none or
    minmax) and a model (knn or svm); column 0 says minmax's range, 1 knn's k, 2 and 3 svm's
    C and gamma, each INACTIVE when its component is not chosen; column 4 varies with every
    candidate (no one component explains it)."""
    x = INACTIVE
    encodings = np.array(
        [
            [x, 0.1, x, x, 0.0],
            [0.5, 0.2, x, x, 0.2],
            [x, x, 0.3, 0.9, 0.4],
            [0.7, x, 0.4, 0.8, 0.6],
            [0.9, x, 0.5, 0.7, 0.8],
            [x, 0.3, x, x, 1.0],
        ]
    )
    choices = np.array([[0, 0], [1, 0], [0, 1], [1, 1], [1, 1], [0, 0]])
    names = [("none", "knn"), ("minmax", "knn"), ("none", "svm"), ("minmax", "svm")]
    names += [("minmax", "svm"), ("none", "knn")]
    descriptions = [
        {"scaler": scaler, "model": {"algorithm": model, "hyperparameters": {}}}
        for scaler, model in names
    ]
    fields = {"stage_names": ("scaler", "model"), "stage_choices": choices}
    fields["descriptions"] = descriptions
    fields.update(changes)
    return PoolSpace("stages", encodings, **fields)  # type: ignore[arg-type]


# -- both kinds implement the protocol -------------------------------------------------------


@pytest.mark.parametrize("space", [staged(), stage_pool(), PoolSpace("flat", np.eye(3))])
def test_both_kinds_implement_the_whole_protocol(space):
    assert isinstance(space, VectorSpace) and isinstance(space, SearchSpace)
    assert vector_space(space) is space and require_vector_space(space, "test") is space
    rng = np.random.default_rng(0)
    configs = space.sample(rng, 3)
    rows = space.encode(configs)
    assert rows.shape == (3, len(space.columns())) == (3, space.blocks().width)
    assert space.sample_vectors(rng, 2).shape == (2, len(space.columns()))
    assert all(space.validate(c) == c for c in space.neighbours(configs[0], rng, 2))
    assert space.neighbour_vectors(rows[0], rng, 2).shape[1] == rows.shape[1]
    assert set(space.active_components(configs[0])) == {s.name for s in space.blocks().stages}
    assert isinstance(space.restrict(), type(space))


def test_each_kind_hands_over_its_own_structure_and_nothing_else():
    pipeline, pool = staged(), stage_pool()
    assert pipeline.as_pipeline() is pipeline and pipeline.as_pool() is None
    assert pool.as_pool() is pool and pool.as_pipeline() is None
    assert pipeline_space(pipeline) is pipeline
    assert pipeline_space(pool) is None and pipeline_space(object()) is None


def test_a_space_of_configurations_only_is_no_vector_space():
    class ConfigsOnly:
        def sample(self, rng, n):
            return [{"x": 1.0}] * n

    assert vector_space(ConfigsOnly()) is None
    with pytest.raises(TypeError, match=r"mine searches .* ConfigsOnly lacks columns, sample_vec"):
        require_vector_space(ConfigsOnly(), "mine")


def test_a_pipeline_space_has_a_default_and_a_pool_has_none():
    space = staged()
    assert space.validate(space.default()) == space.default()
    assert stage_pool().default() is None


# -- blocks of a pipeline space --------------------------------------------------------------


def test_pipeline_blocks_give_each_column_to_its_stage_or_component():
    space = staged()
    blocks = space.blocks()
    assert [s.name for s in blocks.stages] == ["imputation", "rescaling", "balancing", "classifier"]
    assert named_columns(space, blocks.shared) == ["mode"]
    imputation, rescaling, balancing, classifier = blocks.stages
    # no choice: no column of the stage's own; its component keeps "data:strategy" although
    # the nested rescaling stage's names start with "data:" too
    assert imputation.columns == () and imputation.names == ("impute",)
    assert named_columns(space, imputation.component("impute").columns) == ["data:strategy"]
    assert named_columns(space, rescaling.columns) == ["data:numerical:rescaling:__choice__"]
    assert rescaling.component("none").columns == ()
    assert named_columns(space, rescaling.component("quantile").columns) == [
        "data:numerical:rescaling:quantile:q"
    ]
    assert named_columns(space, balancing.columns) == ["balancing:__choice__"]
    assert [c.columns for c in balancing.components] == [(), ()]
    assert classifier.names == ("tree", "logistic")
    assert named_columns(space, classifier.component("tree").columns) == [
        "classifier:tree:depth",
        "classifier:tree:leaf",
    ]
    assert named_columns(space, classifier.component("logistic").columns) == [
        "classifier:logistic:C"
    ]


def test_pipeline_active_components_and_the_selector_match_the_choice_columns():
    space = staged()
    blocks = space.blocks()
    configs = space.sample(np.random.default_rng(1), 40)
    active = [space.active_components(c) for c in configs]
    for config, chosen in zip(configs, active, strict=True):
        assert chosen["imputation"] == "impute"
        assert chosen["classifier"] == config["classifier:__choice__"]
        assert chosen["rescaling"] == config["data:numerical:rescaling:__choice__"]
    selector = blocks.selector(active)
    assert selector.shape == (40, 4) and selector[:, 0].tolist() == [0] * 40
    rows = space.encode(configs)
    for position, stage in enumerate(blocks.stages):
        if stage.columns:  # a choice column holds the active component's position
            np.testing.assert_array_equal(rows[:, stage.columns[0]], selector[:, position])
    # an active component's columns are active, every other component's are not
    for row, chosen in zip(rows, active, strict=True):
        for stage in blocks.stages:
            for block in stage.components:
                on = row[list(block.columns)] != INACTIVE
                assert on.all() if block.name == chosen[stage.name] else not on.any()


def test_restricting_a_pipeline_space_drops_the_components_from_its_blocks():
    kept = staged().restrict(include={"classifier": ["logistic"]})
    assert kept.blocks().stage("classifier").names == ("logistic",)
    assert kept.blocks().width == len(kept.columns())


# -- blocks of a pool ------------------------------------------------------------------------


def test_pool_blocks_come_from_the_candidates_stage_choices_and_descriptions():
    pool = stage_pool()
    blocks = pool.blocks()
    scaler, model = blocks.stages
    assert (scaler.name, scaler.names) == ("scaler", ("none", "minmax"))
    assert (model.name, model.names) == ("model", ("knn", "svm"))
    assert scaler.component("none").columns == () and scaler.component("minmax").columns == (0,)
    assert model.component("knn").columns == (1,) and model.component("svm").columns == (2, 3)
    assert blocks.shared == (4,) and scaler.columns == model.columns == ()
    assert pool.active_components({"candidate": 3}) == {"scaler": "minmax", "model": "svm"}
    configs = pool.candidates()
    selector = blocks.selector([pool.active_components(c) for c in configs])
    np.testing.assert_array_equal(selector, pool.stage_choices)


def test_pool_components_are_named_by_index_when_descriptions_do_not_name_them():
    unnamed = stage_pool(descriptions=None).blocks()
    assert [s.names for s in unnamed.stages] == [("0", "1"), ("0", "1")]
    clash = stage_pool().descriptions
    clash[5] = {"scaler": "minmax", "model": {"algorithm": "knn"}}  # candidate 5 chose "none"
    assert stage_pool(descriptions=clash).blocks().stage("scaler").names == ("0", "1")
    assert stage_pool(descriptions=clash).blocks().stage("model").names == ("knn", "svm")


def test_a_one_hot_column_belongs_to_its_component():
    algorithms = np.array([[0], [0], [1], [2]])
    one_hot = np.eye(3)[algorithms[:, 0]]
    k = np.array([[0.1], [0.2], [INACTIVE], [INACTIVE]])
    pool = PoolSpace("oboe-like", np.hstack([one_hot, k]), ("algorithm",), algorithms)
    stage = pool.blocks().stage("algorithm")
    assert [c.columns for c in stage.components] == [(0, 3), (1,), (2,)]


def test_a_column_two_components_explain_goes_to_the_more_specific_one():
    # column 0 varies only where p=a and m=y: both explain it, m=y (2 candidates) is rarer
    # than p=a (4); column 1 varies only where p=a, and is p=a's
    encodings = np.array([[0.0, 0.1], [0.0, 0.2], [1.0, 0.3], [2.0, 0.4], [0.0, 0.0]])
    choices = np.array([[0, 0], [0, 0], [0, 1], [0, 1], [1, 0]])
    blocks = PoolSpace("two", encodings, ("p", "m"), choices).blocks()
    assert [c.columns for c in blocks.stage("p").components] == [(1,), ()]
    assert [c.columns for c in blocks.stage("m").components] == [(), (0,)]


def test_a_pool_without_stage_structure_is_one_block():
    pool = PoolSpace("flat", np.eye(3), available=np.array([True, False, True]))
    blocks = pool.blocks()
    assert blocks == EncodingBlocks(
        3, (StageBlock("candidate", (ComponentBlock("flat", (0, 1, 2)),)),)
    )
    assert pool.active_components({"candidate": 2}) == {"candidate": "flat"}


def test_restricting_a_pool_by_component_or_availability_keeps_its_blocks():
    pool = stage_pool()
    svm = pool.restrict(include={"model": ["svm"]})
    assert svm.candidates() == [{"candidate": i} for i in (2, 3, 4)]
    assert svm.blocks() == pool.blocks()
    plain_svm = svm.restrict(exclude={"scaler": ["minmax"]})
    assert plain_svm.candidates() == [{"candidate": 2}]
    offered = pool.restrict(available=np.array([1, 1, 1, 0, 0, 0], bool))
    assert [c["candidate"] for c in offered.candidates()] == [0, 1, 2]
    with pytest.raises(KeyError):
        pool.restrict(include={"estimator": ["svm"]})
    with pytest.raises(ValueError, match="no candidates left"):
        plain_svm.restrict(exclude={"model": ["svm"]})


def test_blocks_must_place_every_column_exactly_once():
    with pytest.raises(ValueError, match="in several: \\[1\\]"):
        EncodingBlocks(
            2,
            (
                StageBlock("a", (ComponentBlock("x", (0, 1)),)),
                StageBlock("b", (ComponentBlock("y", (1,)),)),
            ),
        )
    with pytest.raises(ValueError, match="in none: \\[2\\]"):
        EncodingBlocks(3, (StageBlock("a", (ComponentBlock("x", (0,)),), columns=(1,)),))
    with pytest.raises(ValueError, match="both to stage 'a' and to its component 'x'"):
        EncodingBlocks(1, (StageBlock("a", (ComponentBlock("x", (0,)),), columns=(0,)),))
    # components of one stage may share a block (two algorithms of one encoding block)
    shared = StageBlock("a", (ComponentBlock("x", (0,)), ComponentBlock("y", (0,))))
    assert EncodingBlocks(1, (shared,)).stage("a").all_columns() == (0,)


# -- encode / decode ---------------------------------------------------------------------------


def test_a_pipeline_space_decodes_what_it_encodes():
    space = staged()
    rng = np.random.default_rng(3)
    configs = space.sample(rng, 30)
    rows = space.encode(configs)
    for row, config in zip(rows, configs, strict=True):
        decoded, expected = space.decode(row), space.validate(config)
        assert decoded.keys() == expected.keys()
        for name, value in expected.items():  # a log-scaled float may move in its last digit
            assert decoded[name] == (pytest.approx(value) if isinstance(value, float) else value)
    vectors = space.sample_vectors(rng, 30)
    np.testing.assert_allclose(space.encode([space.decode(v) for v in vectors]), vectors)


def test_a_pool_decodes_what_it_encodes_and_snaps_other_rows():
    pool = stage_pool()
    for config in pool.candidates():
        assert pool.decode(pool.encode([config])[0]) == config
    near_four = pool.encodings[4] + 0.01
    assert pool.decode(near_four) == {"candidate": 4}
    twins = PoolSpace("twins", np.array([[0.0], [1.0], [1.0]]), available=np.array([1, 0, 1], bool))
    assert twins.decode(np.array([1.0])) == {"candidate": 2}  # 1 is not offered
    with pytest.raises(InvalidConfigurationError):
        twins.encode([{"candidate": 1}])


def test_pool_neighbours_are_the_nearest_offered_candidates():
    line = PoolSpace("line", np.arange(6.0)[:, None], available=np.array([1, 1, 1, 0, 1, 1], bool))
    rng = np.random.default_rng(0)
    assert line.neighbours({"candidate": 2}, rng, 3) == [{"candidate": c} for c in (1, 0, 4)]
    rows = line.neighbour_vectors(np.array([2.0]), rng, 3)
    np.testing.assert_array_equal(rows, [[1.0], [0.0], [4.0]])
    twins = PoolSpace("twins", np.array([[0.0], [1.0], [1.0], [3.0]]))
    np.testing.assert_array_equal(twins.neighbour_vectors(np.array([0.0]), rng, 2), [[1.0], [3.0]])
    assert twins.neighbours({"candidate": 1}, rng, 1) == [{"candidate": 2}]


# -- no duck typing outside space.py -----------------------------------------------------------

DUCK_TYPING = re.compile(r"hasattr\(.*space|isinstance\([^)]*(PoolSpace|PipelineSpace)")


def test_no_code_outside_space_py_duck_types_a_space():
    found = []
    for folder in ("automl_core", "plugins", "contrib"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            relative = path.relative_to(ROOT).as_posix()
            if "/build/" in relative or "/tests/" in relative or relative.endswith("/space.py"):
                continue
            lines = path.read_text(encoding="utf-8").splitlines()
            found += [
                f"{relative}:{n}" for n, line in enumerate(lines, 1) if DUCK_TYPING.search(line)
            ]
    assert found == []


# -- a strategy reading the protocol -----------------------------------------------------------


def test_random_search_starts_from_a_default_only_where_the_space_has_one():
    for space, first in [(staged(), "default"), (stage_pool(), "random")]:
        strategy = RandomSearch(include_default=True)
        strategy.setup(SearchContext(space=space, seed=0))
        candidate = strategy.ask()
        assert candidate is not None and candidate.origin == first
        if first == "default":
            assert candidate.config == space.default()
