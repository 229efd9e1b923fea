"""Evaluators that misbehave on purpose, importable by the process executor's workers."""

from __future__ import annotations

import ctypes
import os
import subprocess
import time
from pathlib import Path

import numpy as np

from automl_core.contracts import Evaluator
from automl_core.trial import Result, Status, Trial


class FaultyEvaluator(Evaluator):
    """Does what the configuration's ``action`` says: ``ok``, ``sleep`` (``seconds``),
    ``allocate`` (``mb``), ``segfault``, ``exit``, ``threads`` (reports its thread pools), or
    ``spawn-and-sleep`` (starts a child process, writes its pid to ``pid_file``, then
    sleeps), or ``rendezvous`` (marks its arrival in the folder ``meet``, then waits up to
    ``seconds`` for ``expect`` arrivals there: it returns ok only when as many trials ran at
    once). ``ok``, ``sleep`` and ``rendezvous`` report their process id and when they began
    and ended."""

    def evaluate(self, trial: Trial) -> Result:
        config = trial.config
        action = config["action"]
        began = time.time()  # the wall clock, comparable across the workers' processes
        if action == "sleep":
            time.sleep(config["seconds"])
        elif action == "allocate":
            block = np.ones(int(config["mb"]) * 2**17)  # 8 bytes each
            return Result(Status.OK, float(block[-1]))
        elif action == "segfault":
            ctypes.string_at(0)
        elif action == "exit":
            os._exit(3)
        elif action == "threads":
            from threadpoolctl import threadpool_info

            most = max((pool["num_threads"] for pool in threadpool_info()), default=1)
            info = {"omp": os.environ.get("OMP_NUM_THREADS"), "max_threads": most}
            return Result(Status.OK, 0.0, info=info)
        elif action == "rendezvous":
            if not _meet(Path(config["meet"]), trial.id, config["expect"], config["seconds"]):
                return Result.failure(Status.CRASHED, "the other trials never arrived")
        elif action == "spawn-and-sleep":
            child = subprocess.Popen(["sleep", "60"])
            Path(config["pid_file"]).write_text(str(child.pid))
            time.sleep(60)
        span = {"began": began, "ended": time.time()}
        return Result(Status.OK, float(trial.id), info={"pid": os.getpid(), **span})


def _meet(folder: Path, trial_id: int, expect: int, seconds: float) -> bool:
    """Mark ``trial_id``'s arrival in ``folder``; True once ``expect`` trials have arrived."""
    (folder / f"{trial_id}.arrived").touch()
    deadline = time.monotonic() + seconds
    while len(list(folder.glob("*.arrived"))) < expect:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


class HeavyEvaluator(FaultyEvaluator):
    """A :class:`FaultyEvaluator` that carries ``mb`` megabytes of data, as an evaluator
    holding a large training set does."""

    def __init__(self, mb: int) -> None:
        self.payload = np.ones(mb * 2**17)
