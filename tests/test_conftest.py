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


def test_tests_run_on_a_cache_of_their_session_that_shares_only_the_downloads(
    pytester, tmp_path, monkeypatch
):
    """What a test's runs write to the cache stays in the session's cache; the user's holds
    only what it had, and the shared folders are the user's, by links."""
    user = tmp_path / "user-cache"
    (user / "metadata").mkdir(parents=True)
    pytester.makeconftest(ROOT_CONFTEST.read_text())
    pytester.makepyfile(
        test_session_cache_probe=f"""
        import os
        from pathlib import Path

        USER = Path({str(user)!r})

        def test_writes_go_to_the_sessions_cache():
            root = Path(os.environ["AUTOML_CACHE_DIR"])
            assert root != USER
            for shared in ("packages", "metadata", "policy"):
                assert (root / shared).resolve() == USER / shared
            (root / "portfolios").mkdir()
            (root / "portfolios" / "built.json").write_text("{{}}")
        """
    )
    monkeypatch.setenv("AUTOML_CACHE_DIR", str(user))  # the user's, as the session sees it
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert sorted(p.name for p in user.iterdir()) == ["metadata", "packages", "policy"]
