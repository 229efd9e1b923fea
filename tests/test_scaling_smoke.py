"""Issue 48's scaling smoke test: one driver keeps 8 worker processes busy on trials that sleep,
on a 2-core machine (benchmarks/scaling.py measures the throughput; this checks the mechanism).

Each trial marks itself started in a shared folder, then waits until 8 trials have started:
the first 8 can all finish only if the driver had all 8 in flight at once. No timing is
asserted; the wait's deadline only turns a broken driver into a failure instead of a hang.
"""

from __future__ import annotations

import os
import sys
import time
from concurrent.futures import FIRST_COMPLETED, Future, wait
from pathlib import Path

import cloudpickle

from automl_core.contracts import Evaluator, SearchContext
from automl_core.random_search import RandomSearch
from automl_core.trial import Result, Status, Trial
from automl_engine.builtins.processes import ProcessExecutor
from automl_engine.history import RunHistory
from automl_engine.proposals import start

WORKERS = 8
#: how long a trial waits for its peers before giving up (a failure, never a pass)
PEERS_DEADLINE_S = 120.0

cloudpickle.register_pickle_by_value(sys.modules[__name__])


class WaitForPeers(Evaluator):
    """Marks the trial started, waits until ``peers`` trials have started, sleeps a little;
    the loss is how many had started when it stopped waiting (``peers`` or fewer)."""

    def __init__(self, folder: Path, peers: int) -> None:
        self.folder, self.peers = folder, peers

    def evaluate(self, trial: Trial) -> Result:
        (self.folder / f"{trial.id}-{os.getpid()}").touch()
        deadline = time.monotonic() + PEERS_DEADLINE_S
        while len(list(self.folder.iterdir())) < self.peers and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(0.05)
        started = len(list(self.folder.iterdir()))
        return Result(Status.OK, float(min(started, self.peers)), metrics={"pid": os.getpid()})


def test_eight_workers_keep_eight_sleeping_trials_in_flight(plugins, tmp_path):
    space = plugins.create("space", "toy-classification")
    proposals = start(RandomSearch(), SearchContext(space=space, seed=0))
    marks = tmp_path / "started"
    marks.mkdir()
    evaluator = WaitForPeers(marks, WORKERS)
    executor = ProcessExecutor(workers=WORKERS)
    results: list[Result] = []
    most_in_flight = 0
    try:
        with RunHistory(tmp_path / "history.sqlite") as history:
            in_flight: dict[Future[Result], Trial] = {}
            asked = 0
            while len(results) < 2 * WORKERS:
                while len(in_flight) < executor.capacity and asked < 2 * WORKERS:
                    candidate = proposals.ask()
                    assert candidate is not None
                    trial = Trial.from_candidate(asked, candidate)
                    history.start(trial)
                    in_flight[executor.submit(evaluator, trial)] = trial
                    asked += 1
                most_in_flight = max(most_in_flight, len(in_flight))
                done, _ = wait(list(in_flight), return_when=FIRST_COMPLETED)
                for future in done:
                    trial = in_flight.pop(future)
                    result = future.result()
                    history.finish(trial, result, asked=asked)
                    proposals.strategy.tell(trial, result)
                    results.append(result)
    finally:
        executor.shutdown()
    assert most_in_flight == WORKERS
    assert all(r.ok for r in results), [r.error for r in results if not r.ok]
    assert [r.loss for r in results] == [float(WORKERS)] * len(results)  # none gave up waiting
    assert len({r.metrics["pid"] for r in results}) == WORKERS  # eight worker processes
