"""The repository's conftest rules, run on test files of their own (pytest's ``pytester``)."""

from __future__ import annotations

from pathlib import Path

ROOT_CONFTEST = Path(__file__).resolve().parents[1] / "conftest.py"


def test_a_skip_for_a_missing_package_of_this_repository_is_a_failure(pytester):
    """A broken install must not look green: ``importorskip`` of one of our own packages
    that cannot be imported fails the test; a third-party package may still skip."""
    pytester.makeconftest(ROOT_CONFTEST.read_text())
    pytester.makepyfile(
        test_imports="""
        import pytest

        def test_needs_one_of_ours():
            pytest.importorskip("automl_no_such_package")

        def test_needs_an_optional_peer():
            pytest.importorskip("no_such_peer_package")
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1, skipped=1)
    result.stdout.fnmatch_lines(["*A package of this repository could not be imported*"])


def test_a_module_skipped_for_a_missing_package_of_ours_stops_the_collection(pytester):
    pytester.makeconftest(ROOT_CONFTEST.read_text())
    pytester.makepyfile(
        test_module="""
        import pytest

        pytest.importorskip("automl_no_such_package")

        def test_never_collected():
            pass
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
