"""The conformance kit catches what it claims to: deliberately broken components fail the
checks that name what broke, in a pytest run of their own (pytester), as a plugin author
would see it."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from automl_engine.testing import Component, check_component, checks_for, parametrize_with_checks
from automl_engine.testing.data_checks import check_ensembler_weights_are_a_distribution
from automl_engine.testing.docs import with_checks

pytest_plugins = ["pytester"]

BROKEN = '''
import dataclasses
import itertools

import numpy as np

from automl_core.random_search import RandomSearch
from automl_core.contracts import SearchStrategy, Surrogate
from automl_engine.testing import Component, parametrize_with_checks
from automl_core.trial import Candidate

RUNS = itertools.count(100)


class Restless(RandomSearch):
    """Random search seeded from a counter of the process, not from the run's seed: a run
    cannot be repeated, nor resumed where it was."""

    def setup(self, context):
        super().setup(dataclasses.replace(context, seed=next(RUNS)))


class Stubborn(SearchStrategy):
    """Ignores its seed, forgets what it asked, proposes again the first configuration it
    was told about (the warm start's), never runs out."""

    def setup(self, context):
        super().setup(context)
        self.first = context.space.sample(np.random.default_rng(123), 1)[0]

    def ask(self):
        return Candidate(self.first)

    def tell(self, trial, result):
        if not hasattr(self, "told"):
            self.told = self.first = trial.config


class Overconfident(Surrogate):
    """Predicts the training mean with a negative uncertainty."""

    def fit(self, X, y):
        self.mean = float(np.mean(y))
        return self

    def predict(self, X):
        return np.full(len(X), self.mean), np.full(len(X), -1.0)


@parametrize_with_checks(
    [
        Component("search_strategy", "stubborn", factory=Stubborn),
        Component("search_strategy", "restless", factory=Restless),
        Component("surrogate", "overconfident", factory=Overconfident),
    ],
    expected_failed_checks={
        "stubborn": {"check_strategy_keeps_asking_after_failed_trials": "listed, but it passes"},
    },
)
def test_conformance(component, check):
    check(component)
'''


@pytest.fixture
def report(pytester: pytest.Pytester) -> pytest.RunResult:
    pytester.makepyfile(test_broken=BROKEN)
    return pytester.runpytest("-q", "-p", "no:cacheprovider", "-rfEX")


def test_a_broken_strategy_fails_the_checks_that_name_what_broke(report):
    out = report.stdout.str()
    for check, message in [
        ("check_strategy_ends_when_the_pool_is_exhausted", "proposed twice at the same budget"),
        ("check_strategy_is_deterministic_given_its_seed", "seeds 0 and 1 proposed the same"),
        ("check_strategy_takes_the_warm_start", "proposed the warm start's configurations"),
        ("check_strategy_asks_several_times_before_a_tell", "proposed the same trial twice"),
    ]:
        assert f"search_strategy:stubborn-{check}" in out and message in out, (check, out)


def test_a_strategy_seeded_elsewhere_fails_to_repeat_and_to_resume(report):
    out = report.stdout.str()
    for check, message in [
        ("check_strategy_is_deterministic_given_its_seed", "two runs with seed 0"),
        ("check_strategy_resumes_as_if_never_interrupted", "replaying the interrupted run"),
    ]:
        assert f"search_strategy:restless-{check}" in out and message in out, (check, out)


def test_a_broken_surrogate_fails_on_its_uncertainty(report):
    out = report.stdout.str()
    assert "surrogate:overconfident-check_surrogate_predicts_a_mean_and_std_per_row" in out
    assert "standard deviations that are negative or not finite: [-1." in out


def test_an_expected_failure_that_passes_fails_the_run(report):
    """Strict: once a component is fixed, its expected failure must come off the list."""
    out = report.stdout.str()
    assert "XPASS(strict)" in out and "listed, but it passes" in out
    outcomes = report.parseoutcomes()
    # stubborn: 4 failed, 1 expected failure that passes (strict: a failure), 2 passed, the
    # resume not applicable (the loop refuses its repeats: one trial); restless: 2 failed,
    # 6 passed; overconfident: 9 failed, meta_fit not applicable
    assert outcomes["failed"] == 16 and outcomes["passed"] == 8 and outcomes["skipped"] == 2


def test_check_component_names_the_check_that_failed():
    class Uneven:
        def fit(self, predictions, y, loss):
            return [0.9, 0.9]

    component = Component("ensembler", "uneven", factory=Uneven)
    with pytest.raises(AssertionError, match="ensembler:uneven fails check_ensembler_weights"):
        check_component(component)
    passed = check_component(
        component,
        expected_failed_checks={
            check_ensembler_weights_are_a_distribution.__name__: "weights do not sum to 1",
            "check_ensembler_is_no_worse_than_the_best_member": "a blend of 1.8 times",
            "check_ensembler_takes_identical_members": "weights do not sum to 1",
        },
    )
    assert passed == []
    with pytest.raises(ValueError, match=r"name no component checked here: \['radnom'\]"):
        parametrize_with_checks([component], {"radnom": {"check_x": "a typo"}})
    with pytest.raises(ValueError, match=r"name no check of kind 'ensembler': \['check_nope'\]"):
        check_component(component, expected_failed_checks={"check_nope": "renamed long ago"})


def test_every_kind_of_the_kit_has_checks_with_docstrings():
    kinds = ["search_strategy", "surrogate", "metafeature_provider", "warmstarter"]
    kinds += ["ensembler", "dataset_source", "executor"]
    for kind in kinds:
        checks = list(checks_for(kind))
        assert checks, kind
        assert all(c.__name__.startswith("check_") and c.__doc__ for c in checks), kind


def test_the_plugin_guide_lists_what_the_kit_checks():
    """docs/plugins.md's list is generated from the checks' docstrings: regenerate it with
    `python -m automl_engine.testing.docs docs/plugins.md` when a check changes."""
    page = (Path(__file__).parents[1] / "docs" / "plugins.md").read_text()
    assert with_checks(page) == page
    assert all(f"`{c.__name__}`" in page for c in checks_for("search_strategy"))


def kit_run(cwd: Path, distribution: str) -> subprocess.CompletedProcess:
    """``pytest --pyargs automl_engine.testing --automl-distribution NAME``, as a plugin
    author runs it from their own project (outside this repository's configuration)."""
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    command += ["--pyargs", "automl_engine.testing", "--automl-distribution", distribution]
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=600)


def test_the_kit_checks_an_installed_distribution_by_its_name(tmp_path):
    """automl-evolution (installed by ``make install``) registers one search strategy: the
    kit finds it through its entry point and runs every strategy check on it."""
    done = kit_run(tmp_path, "automl-evolution")
    expected = len(list(checks_for("search_strategy")))
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(rf"^{expected} passed in ", done.stdout, re.MULTILINE), done.stdout


def test_the_kit_names_a_distribution_it_finds_no_component_in(tmp_path):
    done = kit_run(tmp_path, "automl-no-such-plugin")
    assert done.returncode != 0
    assert "no component with checks in 'automl-no-such-plugin'" in done.stdout + done.stderr
