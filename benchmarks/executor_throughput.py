"""Throughput and per-trial overhead of the executors.

Two measurements, each with every executor that isolates trials:

* **throughput**: ``--trials`` trials that each sleep ``--seconds`` (1 s), run with 1 and
  with 2 workers, kept in flight the way the run loop keeps them (a new trial as soon as one
  finishes). The speed-up of 2 workers over 1 should be close to 2: sleeping trials do not
  compete for the cores, so anything less is the executor's own cost.
* **overhead**: ``--quick`` trials that return at once, on 1 worker; the time per trial is
  what the executor adds to every trial (pipes, pickling, the Dask round trip), measured
  after a warm-up so that starting the workers is not counted.

The sequential executor (the trial in the driver's own process) is the zero-isolation
reference for the overhead.

    python benchmarks/executor_throughput.py [--trials 20] [--seconds 1] [--quick 200]
                                             [--executors sequential,processes,dask]

The Dask rows need ``plugins/automl-executor-dask`` installed.
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, wait

from automl_core.contracts import Evaluator, Executor
from automl_core.trial import Result, Status, Trial
from automl_engine.builtins.processes import ProcessExecutor
from automl_engine.builtins.sequential import SequentialExecutor


class SleepingTrial(Evaluator):
    """A trial of fixed duration that uses no CPU: ``time.sleep(config["seconds"])``."""

    def evaluate(self, trial: Trial) -> Result:
        time.sleep(trial.config["seconds"])
        return Result(Status.OK, 0.0, info={"pid": os.getpid()})


def dask_executor(workers: int) -> Executor:
    from automl_executor_dask.executor import DaskExecutor

    return DaskExecutor(workers=workers)


EXECUTORS: dict[str, Callable[[int], Executor]] = {
    "sequential": lambda workers: SequentialExecutor(),
    "processes": lambda workers: ProcessExecutor(workers=workers),
    "dask": dask_executor,
}


def keep_in_flight(executor: Executor, trials: int, seconds: float, first_id: int = 0) -> float:
    """Runs ``trials`` sleeping trials with ``executor.capacity`` in flight; wall seconds."""
    evaluator = SleepingTrial()
    in_flight: set[Future[Result]] = set()
    submitted = 0
    started = time.perf_counter()
    while submitted < trials or in_flight:
        while submitted < trials and len(in_flight) < max(1, executor.capacity):
            trial = Trial(first_id + submitted, {"seconds": seconds})
            in_flight.add(executor.submit(evaluator, trial))
            submitted += 1
        done, in_flight = wait(in_flight, return_when=FIRST_COMPLETED)
        for future in done:
            result = future.result()
            assert result.ok, result.error
    return time.perf_counter() - started


def warmed_up(name: str, workers: int) -> Executor:
    """The executor with every worker started and holding the evaluator."""
    executor = EXECUTORS[name](workers)
    keep_in_flight(executor, 4 * workers, 0.2, first_id=10_000)
    return executor


def measure(name: str, trials: int, seconds: float, quick: int) -> dict[str, float]:
    row: dict[str, float] = {}
    for workers in (1, 2):
        if name == "sequential" and workers == 2:
            continue
        executor = warmed_up(name, workers)
        try:
            row[f"wall_{workers}"] = keep_in_flight(executor, trials, seconds)
            if workers == 1:
                row["overhead_ms"] = 1000 * keep_in_flight(executor, quick, 0.0) / quick
        finally:
            executor.shutdown()
    return row


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=1.0)
    parser.add_argument("--quick", type=int, default=200)
    parser.add_argument("--executors", default="sequential,processes,dask")
    args = parser.parse_args()
    print(
        f"{args.trials} trials of {args.seconds:g} s each; overhead over {args.quick} "
        f"instant trials; {os.cpu_count()} cores, {cpu_model()}"
    )
    print()
    print("| executor | 1 worker: trials/s | 2 workers: trials/s | speed-up | overhead per trial |")
    print("|---|---:|---:|---:|---:|")
    for name in args.executors.split(","):
        row = measure(name, args.trials, args.seconds, args.quick)
        one = args.trials / row["wall_1"]
        two = args.trials / row["wall_2"] if "wall_2" in row else None
        print(
            f"| {name} | {one:.3f} | {f'{two:.3f}' if two else '-'} | "
            f"{f'{two / one:.2f}x' if two else '-'} | {row['overhead_ms']:.2f} ms |",
            flush=True,
        )


if __name__ == "__main__":
    main()
