"""How far one driver scales: throughput with 1 to 64 workers on trials that sleep, and the
cost of an ask as the history grows (issue 48).

What limits scaling in this design is the driver: one process asks the strategy, stores each
result and tells the strategy, for every worker. Trials that sleep (``--seconds``, 1 s and
0.1 s) take no core, so on a 2-core machine W workers can still keep W trials in flight, and
what the driver spends per trial decides whether it keeps up.

* **throughput**: for each strategy (``random``, ``smbo:rf``, ``mcts:rf``), executor
  (``processes``; ``dask``, a ``LocalCluster`` the executor starts; ``dask-scheduler``, a ``dask
  scheduler`` and ``dask worker`` processes started from the command line, as on a cluster, the
  executor given only the scheduler's address) and worker count, the driver keeps every worker
  busy as the run loop does: ask a configuration, submit it, and on each result store it in a real
  SQLite history and tell the strategy. The results until every worker process has answered
  once warm the workers up (a Dask worker starts its trial sandbox on its first trial, about a
  second, and the scheduler may give the first ``W`` trials to fewer than ``W`` workers); the
  next ``max(3W, 30, 3 s x W / seconds)`` are timed. Printed: trials/s against the ideal
  ``W / seconds``, and the driver's busy fraction (its seconds in ask, tell and store over the
  wall time). The configurations come from the 10-d Levy problem of ``smbo_overhead.py`` (for
  ``mcts``, its choice of two components), its loss computed in the worker.
* **latency**: ``--latency N``: each strategy alone, asked and told ``N`` times in sequence
  (no executor); the median ask + tell at 100, 500, 1000, 2000 and 5000 observations.

    python benchmarks/scaling.py --workers 1 2 4 8 16 32 64 --seconds 1 0.1
    python benchmarks/scaling.py --executors dask dask-scheduler --workers 1 2 4 8 16
    python benchmarks/scaling.py --latency 5000 --strategies random smbo:rf mcts:rf
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import FIRST_COMPLETED, Future, wait
from pathlib import Path

HERE = Path(__file__).resolve().parent
# the workers unpickle this module's evaluator: they import it from here
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(HERE), os.environ.get("PYTHONPATH")]))
sys.path.insert(0, str(HERE))

from smbo_overhead import PROBLEMS, strategy_of  # noqa: E402

from automl_core.contracts import Evaluator, Executor  # noqa: E402
from automl_core.plugins import load_plugins  # noqa: E402
from automl_core.trial import Result, Status, Trial  # noqa: E402
from automl_engine.builtins.processes import ProcessExecutor  # noqa: E402
from automl_engine.history import RunHistory  # noqa: E402

CHECKPOINTS = (100, 500, 1000, 2000, 5000)


class SleepingLevy(Evaluator):
    """Sleeps ``seconds``, then returns the loss of the configuration on ``smbo_overhead``'s
    problem ``problem``: a trial that takes no core."""

    def __init__(self, seconds: float, problem: str) -> None:
        self.seconds, self.problem = seconds, problem

    def evaluate(self, trial: Trial) -> Result:
        time.sleep(self.seconds)
        objective = PROBLEMS[self.problem][1]
        # which process ran it: the warm-up lasts until every worker has answered
        return Result(Status.OK, objective(trial.config), info={"pid": os.getpid()})


def problem_of(spec: str) -> str:
    """The problem a strategy is measured on: the choice of two components for mcts (which
    searches pipeline structure), Levy's function for the others."""
    return "choice" if spec.startswith("mcts") else "levy"


@contextlib.contextmanager
def executor_of(name: str, workers: int) -> Iterator[Executor]:
    """The executor, shut down on leaving (and for ``dask-scheduler``, its scheduler and
    worker processes stopped after it)."""
    with contextlib.ExitStack() as stack:
        if name == "dask-scheduler":
            executor = dask_executor(address=stack.enter_context(dask_processes(workers)))
        elif name == "dask":
            executor = dask_executor(workers=workers)
        else:
            executor = ProcessExecutor(workers=workers)
        stack.callback(executor.shutdown)
        yield executor


def dask_executor(**options: object) -> Executor:
    from automl_executor_dask.executor import DaskExecutor

    return DaskExecutor(**options)  # type: ignore[arg-type]


@contextlib.contextmanager
def dask_processes(workers: int) -> Iterator[str]:
    """A ``dask scheduler`` and ``workers`` one-thread ``dask worker`` processes, started as
    one would on a cluster; yields the scheduler's address once every worker has joined."""
    from distributed import Client

    dask = Path(sys.executable).with_name("dask")
    with tempfile.TemporaryDirectory() as folder:
        file = Path(folder) / "scheduler.json"
        quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
        scheduler = subprocess.Popen(
            [dask, "scheduler", "--scheduler-file", file, "--port", "0",
             "--dashboard-address", ":0"], **quiet,
        )  # fmt: skip
        worker = None
        try:
            while not file.is_file():
                time.sleep(0.1)
            worker = subprocess.Popen(
                [dask, "worker", "--scheduler-file", file, "--nworkers", str(workers),
                 "--nthreads", "1", "--no-dashboard"], **quiet,
            )  # fmt: skip
            with Client(scheduler_file=str(file), timeout="60s") as client:
                client.wait_for_workers(workers, timeout=300)
                address = client.scheduler.address
            yield address
        finally:
            for process in (worker, scheduler):
                if process is not None:
                    process.terminate()
                    process.wait(timeout=60)


def timed_trials(workers: int, seconds: float) -> int:
    """How many results are timed after the warm-up: 3 a worker and at least 30, and at least
    3 s of ideal throughput, so that a row at 0.1 s trials is not a fraction of a second."""
    return max(3 * workers, 30, math.ceil(3.0 * workers / seconds))


def throughput(spec: str, executor_name: str, workers: int, seconds: float) -> dict[str, float]:
    """Trials per second and the driver's busy fraction, timed from the moment every worker
    process has answered once (or after ``20 * workers`` results, with a warning)."""
    problem = problem_of(spec)
    strategy = strategy_of(spec, load_plugins(), PROBLEMS[problem][0](), seed=0)
    evaluator = SleepingLevy(seconds, problem)
    timed = timed_trials(workers, seconds)
    most_warm_up = 20 * workers
    answered: set[int] = set()  # the worker processes heard from during the warm-up
    end = math.inf  # results to tell in all: set once the warm-up is over
    busy = 0.0
    with (
        tempfile.TemporaryDirectory() as folder,
        RunHistory(Path(folder) / "h.sqlite") as history,
        executor_of(executor_name, workers) as executor,
    ):
        in_flight: dict[Future[Result], Trial] = {}
        asked = told = 0
        started = None
        while told < end:
            while len(in_flight) < workers and asked < end:
                tick = time.perf_counter()
                candidate = strategy.ask()
                trial = Trial(asked, candidate.config, candidate.budget, candidate.origin)
                history.start(trial)
                busy += time.perf_counter() - tick if started else 0.0
                in_flight[executor.submit(evaluator, trial)] = trial
                asked += 1
            done, _ = wait(list(in_flight), return_when=FIRST_COMPLETED)
            for future in done:
                trial = in_flight.pop(future)
                tick = time.perf_counter()
                result = future.result()
                history.finish(trial, result, asked=asked)
                strategy.tell(trial, result)
                told += 1
                if started:
                    busy += time.perf_counter() - tick
                if started is None:
                    answered.update([result.info["pid"]] if "pid" in result.info else [])
                    if len(answered) == workers or told == most_warm_up:
                        if len(answered) < workers:
                            print(f"warm-up: {len(answered)} of {workers} workers answered in "
                                  f"{told} results; timing anyway", file=sys.stderr)  # fmt: skip
                        end, started, busy = told + timed, time.perf_counter(), 0.0
        wall = time.perf_counter() - (started or time.perf_counter())  # before the shutdown
    return {"rate": timed / wall, "busy": busy / wall}


def latency(spec: str, trials: int) -> dict[int, float]:
    """Median ask + tell seconds around each checkpoint, the strategy alone."""
    problem = problem_of(spec)
    strategy = strategy_of(spec, load_plugins(), PROBLEMS[problem][0](), seed=0)
    objective = PROBLEMS[problem][1]
    times = []
    for i in range(trials):
        tick = time.perf_counter()
        candidate = strategy.ask()
        elapsed = time.perf_counter() - tick
        loss = objective(candidate.config)
        tick = time.perf_counter()
        strategy.tell(Trial(i, candidate.config), Result(Status.OK, loss))
        times.append(elapsed + time.perf_counter() - tick)
    return {c: statistics.median(times[max(c - 5, 0) : c + 5]) for c in CHECKPOINTS if c <= trials}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--strategies", nargs="+", default=["random", "smbo:rf", "mcts:rf"])
    parser.add_argument("--executors", nargs="+", default=["processes"])
    parser.add_argument("--workers", nargs="+", type=int, default=[1, 2, 4, 8, 16, 32, 64])
    parser.add_argument("--seconds", nargs="+", type=float, default=[1.0, 0.1])
    parser.add_argument("--latency", type=int, default=0, help="ask + tell to N observations")
    args = parser.parse_args()
    print(f"{os.cpu_count()} cores; Python {sys.version.split()[0]}")
    if args.latency:
        header = " | ".join(f"n={c}" for c in CHECKPOINTS if c <= args.latency)
        print(f"\n| strategy | {header} |  (median ask + tell, ms)")
        print("|---" * (1 + len(header.split("|"))) + "|")
        for spec in args.strategies:
            cells = latency(spec, args.latency)
            print(f"| {spec} | " + " | ".join(f"{v * 1e3:.1f}" for v in cells.values()) + " |",
                  flush=True)  # fmt: skip
        return
    print(
        "\n| strategy | executor | trial s | workers | trials/s | ideal | of ideal | driver busy |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for seconds in args.seconds:
        for executor in args.executors:
            for spec in args.strategies:
                for workers in args.workers:
                    row = throughput(spec, executor, workers, seconds)
                    ideal = workers / seconds
                    print(
                        f"| {spec} | {executor} | {seconds:g} | {workers} | {row['rate']:.2f} | "
                        f"{ideal:.1f} | {row['rate'] / ideal:.0%} | {row['busy']:.1%} |",
                        flush=True,
                    )


if __name__ == "__main__":
    main()
