"""The kit's pytest plugin (entry point ``pytest11``): checks the components of installed
distributions, with no test of one's own to write::

    pytest --pyargs automl_engine.testing --automl-distribution automl-hillclimb

collects :mod:`automl_engine.testing.test_installed` and parametrises it over every component
the named distributions register, each with every check of its kind.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from automl_engine.testing import Component

OPTION = "--automl-distribution"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.getgroup("automl-core").addoption(
        OPTION,
        action="append",
        default=[],
        metavar="DISTRIBUTION",
        help="check the components this installed distribution registers (repeatable)",
    )


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if metafunc.module.__name__ != "automl_engine.testing.test_installed":
        return  # loaded in every pytest session: import the kit only when it is used
    from automl_engine.testing import checks_for

    distributions = metafunc.config.getoption(OPTION)
    if not distributions:
        raise pytest.UsageError(f"name the distribution to check: {OPTION} NAME")
    cases: list[Any] = []
    for distribution in distributions:
        components = installed_components(distribution)
        if not components:
            raise pytest.UsageError(
                f"no component with checks in {distribution!r}: is it installed (`automl "
                "plugins` lists what is), and does it register a kind the kit checks?"
            )
        for component in components:
            for check in checks_for(component.kind):
                case_id = f"{component.id}-{check.__name__}"
                cases.append(pytest.param(component, check, id=case_id))
    metafunc.parametrize(("component", "check"), cases)


def installed_components(distribution: str) -> list[Component]:
    """Every registered component of the installed ``distribution`` (named as pip names
    it, any case, ``_`` or ``-``) that has checks of its kind."""
    from automl_engine.testing import Component, checks_for
    from automl_engine.testing.components import installed_plugins

    def normal(name: str) -> str:
        return name.lower().replace("_", "-").replace(".", "-")

    return [
        Component(registration.kind, registration.name)
        for registration in installed_plugins().registry.all()
        if normal(registration.origin.distribution) == normal(distribution)
        and list(checks_for(registration.kind))
    ]
