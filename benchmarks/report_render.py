"""How long ``automl report`` takes to draw the page of a long run: 5,000 trials.

The history is written through the core's History API (``RunHistory.start`` / ``finish``,
as the run loop writes it) with configurations sampled from the real
``autosklearn-classification`` space (so the leaderboard, the per-algorithm times and the
importance surrogate see real, conditional configurations of ~150 hyper-parameters) and a
deterministic pseudo-loss; 3 % of the trials crash and 1 % time out, with tracebacks. The
recipe recorded is a model-based one (``smbo`` with ``rf``), so the page fits and permutes
its importance surrogate: the most expensive page there is. Then ``render_report`` is timed
(reading the history read-only, computing each section, drawing the three figures, writing
the HTML), cold (first call: matplotlib and scikit-learn imported) and warm.

    python benchmarks/report_render.py [--trials 5000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
import zlib
from pathlib import Path

import numpy as np

from automl_core.plugins import load_plugins
from automl_core.space import config_key
from automl_core.trial import Result, Status, Trial
from automl_engine.history import RunHistory
from automl_engine.run_folder import HISTORY_FILE

RECIPE = {
    "name": "render-benchmark",
    "task": {"dataset": "keel:german", "metric": "balanced_accuracy"},
    "space": "autosklearn-classification",
    "search": {"strategy": "smbo", "surrogate": "rf"},
    "budget": {"trials": 5000},
    "seed": 0,
}


def write_history(folder: Path, trials: int, seed: int = 0) -> Path:
    """A run folder whose history holds ``trials`` finished trials."""
    space = load_plugins().create("space", "autosklearn-classification", {})
    rng = np.random.default_rng(seed)
    configs = space.sample(rng, trials)
    folder.mkdir(parents=True, exist_ok=True)
    began = time.time()
    with RunHistory(folder / HISTORY_FILE) as history:
        history.set_meta("recipe", RECIPE)
        history.set_meta("metric", "balanced_accuracy")
        history.set_meta("dataset", {"name": "keel:german", "task": "classification"})
        history.set_meta("metafeatures", {"NumberOfInstances": 1000.0, "NumberOfFeatures": 20.0})
        history.set_meta("started_at", began)
        for i, config in enumerate(configs):
            trial = Trial(i, config, None, "random" if i < 20 else "model")
            history.start(trial)
            history.finish(trial, _result(config, rng), asked=i + 1)
    return folder


def _result(config: dict, rng: np.random.Generator) -> Result:
    draw = rng.random()
    if draw < 0.03:
        error = "Traceback (most recent call last):\n  ...\nValueError: a pipeline that fails"
        return Result(Status.CRASHED, float("inf"), error=error, duration=0.2)
    if draw < 0.04:
        return Result(Status.TIMEOUT, float("inf"), error="TimeoutError: 30 s", duration=30.0)
    loss = 0.2 + 0.3 * zlib.crc32(config_key(config).encode()) / 2**32
    return Result(Status.OK, loss, {"balanced_accuracy": 1 - loss}, duration=float(rng.random()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=5000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    from automl_report.render import render_report

    with tempfile.TemporaryDirectory() as scratch:
        began = time.perf_counter()
        run_dir = write_history(Path(scratch) / "run", args.trials)
        print(f"history of {args.trials} trials written in {time.perf_counter() - began:.1f}s")
        times = []
        for repeat in range(args.repeats + 1):
            began = time.perf_counter()
            page = render_report(run_dir, Path(scratch) / f"page-{repeat}")
            times.append(time.perf_counter() - began)
        sizes = {p.name: p.stat().st_size // 1024 for p in sorted(page.parent.iterdir())}
        print(f"render_report, cold (first call, imports included): {times[0]:.2f}s")
        print(
            f"render_report, warm: median {statistics.median(times[1:]):.2f}s "
            f"(min {min(times[1:]):.2f}s, max {max(times[1:]):.2f}s, {args.repeats} repeats)"
        )
        print("files (KiB): " + ", ".join(f"{name} {size}" for name, size in sizes.items()))


if __name__ == "__main__":
    main()
