"""The autogluon system passes the conformance kit's checks of a whole system (automl-bench's
kind), each fit within the kit's budget of a few seconds, in AutoGluon's own environment
(skipped without it). ``autogluon-best`` is left out: on a 2-core machine its DyStack sub-fit
and Ray's start take the kit's whole budget (see README.md); tests/test_autogluon_system.py
checks what it passes to AutoGluon."""

import pytest

from automl_autogluon.system import find_python
from automl_core.errors import PluginError
from automl_engine.testing import Component, parametrize_with_checks


def _missing() -> str:
    try:
        find_python()
    except PluginError as error:
        return str(error)
    return ""


pytestmark = pytest.mark.skipif(bool(_missing()), reason=f"needs AutoGluon: {_missing()}")


@parametrize_with_checks([Component("system", "autogluon")])
def test_conformance(component, check):
    check(component)
