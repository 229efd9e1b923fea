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
    """What a test's runs write to the cache, meta-data converted included, stays in the
    test run's cache; the user's holds only what it had, and only its downloaded packages
    are shared, by a link."""
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
            assert (root / "packages").resolve() == USER / "packages"
            for built in ("metadata", "policy", "portfolios"):
                (root / built).mkdir()
                (root / built / "built.json").write_text("{{}}")
        """
    )
    monkeypatch.setenv("AUTOML_CACHE_DIR", str(user))  # the user's, as the session sees it
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert sorted(p.name for p in user.iterdir()) == ["metadata", "packages"]
    assert list((user / "metadata").iterdir()) == []


def test_the_workers_of_a_test_run_share_one_cache(pytester, tmp_path, monkeypatch):
    """Under xdist, what one worker builds in the cache (converted meta-data) the other
    finds: both workers' tests see the same cache folder."""
    pytester.makeconftest(ROOT_CONFTEST.read_text())
    pytester.makepyfile(
        test_workers_probe="""
        import os
        from pathlib import Path

        import pytest

        @pytest.mark.parametrize("i", range(8))
        def test_note_the_cache(i):
            root = Path(os.environ["AUTOML_CACHE_DIR"])
            (root / "workers").mkdir(exist_ok=True)
            (root / "workers" / os.environ["PYTEST_XDIST_WORKER"]).write_text(str(root))
        """
    )
    monkeypatch.setenv("AUTOML_CACHE_DIR", str(tmp_path / "user-cache"))
    base = pytester.path / "base"
    result = pytester.runpytest("-p", "no:cacheprovider", "-n", "2", f"--basetemp={base}")
    result.assert_outcomes(passed=8)
    cache = base / "automl-cache"  # the run's base, not a worker's (base/popen-gwN)
    noted = sorted((cache / "workers").iterdir())
    assert [p.name for p in noted] == ["gw0", "gw1"]
    assert {p.read_text() for p in noted} == {str(cache)}
