"""Recipe validation: every error names the path, the bad value and what was expected."""

from __future__ import annotations

import pytest
from toy_plugin import toy_recipe

from automl_core.errors import RecipeError
from automl_engine.recipe import apply_overrides, check_names, load_recipe, parse_recipe


def test_a_valid_recipe_parses_into_typed_objects(plugins):
    recipe = parse_recipe(toy_recipe(search={"strategy": "random", "params": {"max_retries": 5}}))
    assert recipe.search.strategy.name == "random"
    assert recipe.search.strategy.params == {"max_retries": 5}
    assert recipe.task.resampling.kind == "holdout" and recipe.task.resampling.fraction == 0.3
    assert recipe.budget.trials == 6 and recipe.budget.wall_time is None
    assert recipe.executor.name == "sequential"
    check_names(recipe, plugins)


BAD_SHAPES = [
    # (change to the valid recipe, expected message pattern)
    ({"serach": {"strategy": "random"}}, r"^serach: .*Did you mean 'search'\?"),
    ({"task": {"metric": "accuracy"}}, r"^task\.dataset: got None, expected a dataset"),
    ({"budget": {}}, r"^budget: got \{\}, expected at least one of 'wall_time'"),
    ({"budget": {"trials": -3}}, r"^budget\.trials: got -3, expected an integer > 0"),
    ({"budget": {"trials": 2.5}}, r"^budget\.trials: got 2\.5, expected an integer"),
    (
        {"budget": {"wall_time": "ten minutes"}},
        r"^budget\.wall_time: got 'ten minutes', expected a number",
    ),
    (
        {"task": {"dataset": "sklearn:iris", "metric": "acuracy"}},
        r"^task\.metric: got 'acuracy', expected one of .*Did you mean 'accuracy'\?",
    ),
    (
        {"task": {"dataset": "sklearn:iris", "resampling": {"holdout": 1.5}}},
        r"^task\.resampling\.holdout: got 1\.5, expected a number > 0 and <= 0\.9",
    ),
    (
        {"task": {"dataset": "sklearn:iris", "resampling": {"cv": 1}}},
        r"^task\.resampling\.cv: got 1, expected an integer >= 2",
    ),
    (
        {"task": {"dataset": "sklearn:iris", "resampling": "bootstrap"}},
        r"^task\.resampling: got 'bootstrap', expected \{holdout",
    ),
    (
        {"task": {"dataset": "sklearn:iris", "type": "clustering"}},
        r"^task\.type: got 'clustering', expected one of \['classification', 'regression'\]",
    ),
    (
        {"search": {"params": {"x": 1}}},
        r"^search\.name: got None, expected a search strategy name",
    ),
    (
        {"search": {"strategy": "random", "params": [1, 2]}},
        r"^search\.params: got \[1, 2\], expected a mapping",
    ),
    ({"seed": "abc"}, r"^seed: got 'abc', expected an integer"),
    ({"space": {"params": {}}}, r"^space\.name: got None, expected a component name"),
    (
        {"warmstart": {"starter": "fixed", "configs": 0}},
        r"^warmstart\.configs: got 0, expected an integer >= 1",
    ),
]


@pytest.mark.parametrize(("change", "message"), BAD_SHAPES)
def test_bad_recipe_shapes_are_reported_with_path_and_expectation(change, message):
    with pytest.raises(RecipeError, match=message):
        parse_recipe(toy_recipe(**change))


BAD_NAMES = [
    (
        {"search": {"strategy": "randm"}},
        r"^search: got 'randm', expected a registered search strategy\. "
        r"Did you mean 'random'\?",
    ),
    (
        {"space": "toy-clasification"},
        r"^space: got 'toy-clasification', expected a registered space\. "
        r"Did you mean 'toy-classification'",
    ),
    (
        {"search": {"strategy": "random", "surrogate": "rff"}},
        r"^search\.surrogate: got 'rff', expected a registered surrogate\..*Registered: mean",
    ),
    (
        {"executor": {"name": "dask"}},
        r"^executor: got 'dask', expected a registered executor.*sequential",
    ),
    (
        {"task": {"dataset": "keal:german"}},
        r"^task\.dataset: got 'keal', expected a registered dataset source\. Did you mean 'keel'",
    ),
    (
        {"search": {"strategy": "random", "params": {"include_defualt": True}}},
        r"^search\.params\.include_defualt: got True, expected one of the parameters "
        r"\['include_default', 'max_retries'\]\. Did you mean 'include_default'\?",
    ),
    (
        {"warmstart": {"starter": "fixed", "params": {"k": 3}}},
        r"^warmstart\.params\.k: got 3, expected one of the parameters \[\]",
    ),
]


@pytest.mark.parametrize(("change", "message"), BAD_NAMES)
def test_unknown_names_and_parameters_list_the_closest_registered(plugins, change, message):
    recipe = parse_recipe(toy_recipe(**change))
    with pytest.raises(RecipeError, match=message):
        check_names(recipe, plugins)


def test_yaml_errors_say_where(tmp_path):
    path = tmp_path / "broken.yaml"
    path.write_text("name: x\ntask: {dataset: sklearn:iris\nspace: y\n")
    with pytest.raises(RecipeError, match=r"YAML error at line \d+, column \d+"):
        load_recipe(path)


def test_a_recipe_that_is_not_a_mapping_is_rejected(tmp_path):
    path = tmp_path / "list.yaml"
    path.write_text("- a\n- b\n")
    with pytest.raises(RecipeError, match=r"expected a mapping of recipe keys"):
        load_recipe(path)


def test_missing_recipe_file_is_reported(tmp_path):
    with pytest.raises(RecipeError, match="File not found"):
        load_recipe(tmp_path / "nope.yaml")


def test_unsafe_yaml_tags_are_refused(tmp_path):
    marker = tmp_path / "ran"
    path = tmp_path / "evil.yaml"
    path.write_text(f"name: !!python/object/apply:os.system ['touch {marker}']\n")
    with pytest.raises(RecipeError, match="YAML error"):
        load_recipe(path)
    assert not marker.exists()  # refused before anything ran


def test_overrides_set_nested_values_parsed_as_yaml():
    data = apply_overrides(
        toy_recipe(),
        [
            "search.params.max_retries=7",
            "budget.trials=3",
            "search.surrogate=mean",
            "space.params.include={classifier: [logistic]}",
        ],
    )
    assert data["search"]["params"]["max_retries"] == 7
    assert data["budget"]["trials"] == 3
    assert data["search"]["surrogate"] == "mean"
    assert data["space"] == {
        "name": "toy-classification",
        "params": {"include": {"classifier": ["logistic"]}},
    }


def test_a_malformed_override_is_reported():
    with pytest.raises(RecipeError, match=r"^--set: got 'budget\.trials', expected PATH=VALUE"):
        apply_overrides(toy_recipe(), ["budget.trials"])


# --- one key for a component's name ---------------------------------------------------------

OLDER_WORDS = [
    ("search", "strategy", "mcts", lambda r: r.search.strategy.name),
    ("warmstart", "starter", "portfolio", lambda r: r.warmstart.starter.name),
    ("metafeatures", "provider", "handcrafted", lambda r: r.metafeatures.name),
    ("ensemble", "ensembler", "caruana", lambda r: r.ensemble.name),
]


@pytest.mark.parametrize(("section", "older", "value", "read"), OLDER_WORDS)
def test_every_section_names_its_component_with_name_and_reads_its_older_word(
    section, older, value, read
):
    """``name`` in every section; a recipe written with the section's older word
    (``search: {strategy: mcts}``) means the same; both at once is refused."""
    for key in ("name", older):
        recipe = parse_recipe(toy_recipe(**{section: {key: value, "params": {}}}))
        assert read(recipe) == value
    with pytest.raises(RecipeError, match=rf"^{section}\.{older}: .*'name' or '{older}', not"):
        parse_recipe(toy_recipe(**{section: {"name": value, older: value}}))


def test_an_override_in_the_older_word_sets_the_name_of_a_recipe_in_the_new_one():
    """An ablation's ``--vary search.strategy=...`` on a recipe written with ``name`` (and
    ``--set search.name=...`` on one written with ``strategy``) change the one name."""
    new = toy_recipe(search={"name": "random", "params": {}})
    old = toy_recipe(search={"strategy": "random", "params": {}})
    for data, override in ((new, "search.strategy=mcts"), (old, "search.name=mcts")):
        changed = apply_overrides(data, [override])
        assert changed["search"] == {"name": "mcts", "params": {}}
        assert parse_recipe(changed).search.strategy.name == "mcts"
    whole = apply_overrides(new, ["ensemble={ensembler: caruana, params: {size: 5}}"])
    assert whole["ensemble"] == {"name": "caruana", "params": {"size": 5}}
