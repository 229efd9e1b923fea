"""Components declare what each parameter accepts once, as attrs fields with the validators of
automl_spaces.options; the registry reports a value outside it as the recipe's error, naming
the component and the parameter, and lists the parameters with their defaults."""

from __future__ import annotations

import attrs
import numpy as np
import pytest

from automl_core.errors import PluginError, UnknownComponentError
from automl_core.plugins import load_plugins
from automl_spaces.options import (
    boolean,
    integer,
    number,
    one_of,
    optional,
    plain_integer,
    probability,
)


@attrs.define(slots=False, eq=False)
class Options:
    count: int = attrs.field(default=3, converter=plain_integer, validator=integer(at_least=1))
    rate: float = attrs.field(default=0.5, validator=probability())
    scale: float = attrs.field(default=1.0, validator=number(above=0, at_most=10))
    limit: int | None = attrs.field(default=None, validator=optional(integer(at_least=0)))
    flag: bool = attrs.field(default=True, validator=boolean())
    rule: str = attrs.field(default="mean", validator=one_of("mean", "max"))


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"count": 0}, "count must be an integer >= 1, got 0"),
        ({"count": True}, "count must be an integer >= 1, got True"),
        ({"count": 2.0}, "count must be an integer >= 1, got 2.0"),
        ({"rate": 1.5}, r"rate must be a probability in \[0, 1\], got 1.5"),
        ({"scale": 0}, "scale must be a number > 0 and <= 10, got 0"),
        ({"scale": "1"}, "scale must be a number > 0 and <= 10, got '1'"),
        ({"limit": -1}, "limit must be an integer >= 0, got -1"),
        ({"flag": 1}, "flag must be true or false, got 1"),
        ({"rule": "median"}, "rule must be one of 'mean', 'max', got 'median'"),
    ],
)
def test_a_value_outside_its_declared_range_is_refused_naming_the_parameter(params, message):
    with pytest.raises(ValueError, match=message):
        Options(**params)


def test_accepted_values_and_numpy_integers():
    options = Options(count=np.int64(4), rate=0, scale=10, limit=None, flag=False, rule="max")
    assert options.count == 4 and type(options.count) is int


def test_the_registry_reports_a_components_declared_range_with_its_parameters():
    plugins = load_plugins()
    try:
        registration = plugins.get("search_strategy", "evolution")
    except UnknownComponentError:
        pytest.skip("automl-evolution is not installed")
    with pytest.raises(PluginError) as error:
        plugins.create("search_strategy", "evolution", {"population": 1})
    text = str(error.value)
    assert "cannot build search_strategy 'evolution'" in text
    assert "population must be an integer >= 2, got 1" in text
    assert "tournament" in text  # the parameters it takes, from the attrs fields
    parameters = registration.parameters()
    assert parameters["population"] == 20 and parameters["crossover"] == 0.2
