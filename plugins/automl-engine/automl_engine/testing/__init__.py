"""The conformance kit: checks that a plugin's components keep the contracts the run loop
relies on, in the shape of scikit-learn's ``parametrize_with_checks``.

In a plugin's tests::

    from automl_engine.testing import Component, parametrize_with_checks

    @parametrize_with_checks(
        [Component("search_strategy", "hillclimb")],
        expected_failed_checks={"hillclimb": {"check_...": "why it cannot pass"}},
    )
    def test_conformance(component, check):
        check(component)

Or against any installed plugin, without writing a test (the kit's pytest plugin)::

    pytest --pyargs automl_engine.testing --automl-distribution automl-hillclimb

Each check is a function named for what it checks, whose docstring says why the run loop
needs it; :func:`checks_for` lists them per kind. A check that does not apply (a surrogate
without a ``seed``) raises :class:`NotApplicable`, reported as a skip with its reason.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator, Mapping
from importlib import metadata
from typing import Any

from automl_engine.testing import (  # noqa: F401 -- importing them fills CHECKS
    data_checks,
    executor_checks,
    strategy_checks,
    surrogate_checks,
)
from automl_engine.testing.components import CHECKS, Component, NotApplicable

#: Per component (its ``name`` or ``id``), the checks it is expected to fail and why.
ExpectedFailures = Mapping[str, Mapping[str, str]]


#: Entry-point group of the check modules of distributions that add a kind of their own
#: (automl-bench's ``system``): each is imported once, which declares its checks.
CHECK_MODULES = "automl_core.checks"


def checks_for(kind: str) -> Iterator[Callable[[Component], None]]:
    """The checks of ``kind``, in order (none for a kind without checks)."""
    _import_check_modules()
    yield from CHECKS.get(kind, [])


@functools.cache
def _import_check_modules() -> None:
    for entry_point in metadata.entry_points(group=CHECK_MODULES):
        entry_point.load()


def check_component(
    component: Component, expected_failed_checks: Mapping[str, str] | None = None
) -> list[str]:
    """Run every check of the component's kind; raise the first unexpected failure (an
    ``AssertionError`` naming the check). Returns the names of the checks that ran and
    passed; a check that does not apply, or is expected to fail, is not among them."""
    expected = dict(expected_failed_checks or {})
    _check_names(expected, component)
    passed = []
    for check in checks_for(component.kind):
        try:
            check(component)
        except NotApplicable:
            continue
        except Exception as error:
            if check.__name__ in expected:
                continue
            raise AssertionError(
                f"{component.id} fails {check.__name__}: {type(error).__name__}: {error}"
            ) from error
        if check.__name__ in expected:
            raise AssertionError(
                f"{component.id} passes {check.__name__}, listed as an expected failure "
                f"({expected[check.__name__]}): take it off the list"
            )
        passed.append(check.__name__)
    return passed


def parametrize_with_checks(
    components: Iterable[Component], expected_failed_checks: ExpectedFailures | None = None
) -> Any:
    """A ``pytest.mark.parametrize`` over (component, check) for every check of each
    component's kind: the test receives them as ``component`` and ``check`` and calls
    ``check(component)``. An expected failure is a strict xfail with its reason (it fails
    the run once the component passes); a check that does not apply is skipped."""
    import pytest

    expected = expected_failed_checks or {}
    components = list(components)
    named = {c.name for c in components} | {c.id for c in components}
    unknown = sorted(set(expected) - named)
    if unknown:
        raise ValueError(
            f"expected failures name no component checked here: {unknown}; the components "
            f"are {sorted(c.id for c in components)}"
        )
    cases = []
    for component in components:
        failing = {**expected.get(component.name, {}), **expected.get(component.id, {})}
        _check_names(failing, component)
        for check in checks_for(component.kind):
            marks = []
            if check.__name__ in failing:
                marks.append(pytest.mark.xfail(reason=failing[check.__name__], strict=True))
            cases.append(
                pytest.param(
                    component,
                    _skipping_when_not_applicable(check),
                    id=f"{component.id}-{check.__name__}",
                    marks=marks,
                )
            )
    return pytest.mark.parametrize(("component", "check"), cases)


def _check_names(expected: Mapping[str, str], component: Component) -> None:
    """An expected failure must name a check of the component's kind: a renamed or removed
    check would otherwise leave the entry in place, silently."""
    known = {check.__name__ for check in checks_for(component.kind)}
    unknown = sorted(set(expected) - known)
    if unknown:
        raise ValueError(
            f"expected failures of {component.id} name no check of kind {component.kind!r}: "
            f"{unknown}; its checks are {sorted(known)}"
        )


def _skipping_when_not_applicable(
    check: Callable[[Component], None],
) -> Callable[[Component], None]:
    def run(component: Component) -> None:
        import pytest

        try:
            check(component)
        except NotApplicable as why:
            pytest.skip(f"{check.__name__}: {why}")

    run.__name__ = check.__name__
    run.__doc__ = check.__doc__
    return run


__all__ = [
    "CHECKS",
    "CHECK_MODULES",
    "Component",
    "ExpectedFailures",
    "NotApplicable",
    "check_component",
    "checks_for",
    "parametrize_with_checks",
]
