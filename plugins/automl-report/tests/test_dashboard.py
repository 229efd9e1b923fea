"""The live dashboard: a run writes its history in another process, ``automl dashboard``
serves its folder, and the page asked for twice over HTTP shows a trial count that has grown
in between; headless Chromium draws the page of a run (a screenshot is taken).

Chromium comes from the distribution's packages (Debian: ``apt-get install chromium``;
``.ci/run`` installs it on a fresh machine); the browser test is skipped, saying so, only
where no Chromium can be found."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
import yaml

from automl_engine.history import HistoryError, RunHistory
from automl_engine.run_folder import HISTORY_FILE
from automl_report.dashboard import LivePage, make_server

CHROMIUM = next(
    (found for name in ("chromium", "chromium-browser") if (found := shutil.which(name))), None
)
#: ``automl`` of this environment, as a module (the engine's CLI).
AUTOML = [sys.executable, "-m", "automl_engine.cli"]
#: Long enough for any machine to get there; the test ends as soon as it has what it needs.
PATIENCE = 240.0
RECIPE = {
    "name": "live",
    "task": {"dataset": "sklearn:iris", "metric": "accuracy"},
    "space": {
        "name": "autosklearn-classification",
        "params": {"include": {"classifier": ["decision_tree", "k_nearest_neighbors", "lda"]}},
    },
    "search": "random",
    "executor": "sequential",
    "budget": {"trials": 2000, "wall_time": 600},
    "seed": 0,
}


def wait_for(condition, what: str):
    """Poll ``condition`` until it returns something true; fail after :data:`PATIENCE`."""
    deadline = time.monotonic() + PATIENCE
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.2)
    pytest.fail(f"gave up waiting for {what}")


def stored_trials(run_dir: Path) -> int:
    try:
        with RunHistory(run_dir / HISTORY_FILE, read_only=True) as history:
            return history.count()
    except HistoryError:  # not created yet
        return 0


def chromium(*arguments: str) -> str:
    command = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", *arguments]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=True)
    return done.stdout


def assert_a_drawn_page(png: Path, width: int, height: int) -> None:
    """The screenshot is the dashboard drawn, not a blank or bare page: an image of the
    window's size whose top is the page's dark banner (its stylesheet applied) and of which
    the figures, tables and text cover more than 5 % (measured: 13 % for a live run's page;
    0.05 % for a page of one heading)."""
    from matplotlib.image import imread

    pixels = imread(png)[..., :3]
    assert pixels.shape[:2] == (height, width)
    banner = pixels[5:60, 5:-20]  # under the window's edge, beside the scroll bar
    assert banner.mean() < 0.35, f"no dark banner at the top (mean {banner.mean():.2f})"
    below = pixels[100:]
    drawn = float((below.min(axis=2) < 0.9).mean())
    assert drawn > 0.05, f"{drawn:.1%} of the page below the banner is drawn: a bare page?"


def page_count(html: str) -> int:
    match = re.search(r'<span id="trial-count">(\d+)</span>', html)
    assert match, html[:500]
    return int(match.group(1))


def fetched_count(url: str) -> int:
    """The trial count of the page as served over HTTP (no browser: the server draws it)."""
    with urllib.request.urlopen(url, timeout=60) as response:
        return page_count(response.read().decode())


def dashboard_of(run_dir: Path) -> tuple[subprocess.Popen, str]:
    """``automl dashboard RUN_DIR`` in a process of its own, and the URL it serves."""
    dashboard = subprocess.Popen(
        [*AUTOML, "dashboard", str(run_dir), "--port", "0", "--refresh", "2"],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert dashboard.stdout is not None
    serving = dashboard.stdout.readline()  # "serving RUN_DIR on http://127.0.0.1:PORT/"
    url = re.search(r"http://127\.0\.0\.1:\d+/", serving)
    assert url, serving
    return dashboard, url.group(0)


def test_the_dashboard_grows_while_the_run_writes(tmp_path):
    """The page served while a run writes its history in another process counts the trials
    stored when it is asked for: it has grown between two requests (plain HTTP, so this runs
    where no browser is installed; the browser test below draws the page)."""
    pytest.importorskip("automl_sklearn")
    recipe = tmp_path / "recipe.yaml"
    recipe.write_text(yaml.safe_dump(RECIPE))
    run_dir = tmp_path / "run"
    running = subprocess.Popen(
        [*AUTOML, "run", str(recipe), "--out", str(run_dir), "--quiet"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    dashboard = None
    try:
        wait_for(lambda: stored_trials(run_dir) >= 1, "the run's first trial")
        dashboard, url = dashboard_of(run_dir)
        first = fetched_count(url)
        assert first >= 1
        wait_for(lambda: stored_trials(run_dir) > first, "a trial stored after the first load")
        assert fetched_count(url) > first
        assert running.poll() is None  # the run was live all along
        assert not (run_dir / "report").exists()  # the dashboard wrote nothing there
    finally:
        for process in (dashboard, running):
            if process is not None:
                process.terminate()
                process.wait(timeout=60)


@pytest.mark.skipif(CHROMIUM is None, reason="no chromium on PATH (apt-get install chromium)")
def test_a_browser_draws_the_dashboard(random_run, tmp_path):
    """Headless Chromium loads the dashboard of a run: its scripts leave the trial count in
    place, and the screenshot is the page drawn."""
    dashboard, url = dashboard_of(random_run)
    try:
        assert page_count(chromium("--dump-dom", url)) == stored_trials(random_run)
        screenshot = tmp_path / "dashboard.png"
        chromium(f"--screenshot={screenshot}", "--window-size=1280,900", url)
        assert_a_drawn_page(screenshot, width=1280, height=900)
    finally:
        dashboard.terminate()
        dashboard.wait(timeout=60)


def test_the_dashboard_listens_only_on_loopback(tmp_path):
    with RunHistory(tmp_path / HISTORY_FILE) as history:
        history.set_meta("metric", "accuracy")
    live = LivePage(tmp_path)
    try:
        with pytest.raises(ValueError, match="only on a loopback address"):
            make_server(live, host="0.0.0.0", port=0)
    finally:
        live.close()


def _get(port: int, host_header: str) -> int:
    """The status of GET / on the dashboard with ``Host: host_header``."""
    import http.client

    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        connection.putrequest("GET", "/", skip_host=True)
        connection.putheader("Host", host_header)
        connection.endheaders()
        return connection.getresponse().status
    finally:
        connection.close()


def test_the_dashboard_refuses_a_host_that_is_not_loopback(random_run):
    """DNS rebinding: a page on evil.example whose name resolves to 127.0.0.1 reaches the
    server, but its requests carry ``Host: evil.example``: refused (421), while the page's
    own loopback names are served."""
    import threading

    live = LivePage(random_run)
    server = make_server(live, host="127.0.0.1", port=0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    try:
        assert _get(port, "evil.example") == 421
        assert _get(port, f"evil.example:{port}") == 421
        assert _get(port, "127.0.0.1.evil.example") == 421
        assert live.drawings == 0  # refused before anything was read or drawn
        assert _get(port, f"127.0.0.1:{port}") == 200
        assert _get(port, f"localhost:{port}") == 200
        assert _get(port, f"[::1]:{port}") == 200
    finally:
        server.shutdown()
        server.server_close()
        live.close()
