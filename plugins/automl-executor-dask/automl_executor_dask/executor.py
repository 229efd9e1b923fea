"""Trials as Dask tasks, on a ``LocalCluster`` or on an existing scheduler.

The driver stays the only writer of the run's history: Dask only evaluates. Each task runs
its trial through a process executor that lives on the Dask worker (one per worker, made on
first use), so a trial's time and memory limits hold on Dask workers exactly as they do
locally: a hung or bloated trial kills its sandbox process, never the Dask worker.

A Dask worker that dies mid-trial (its machine lost, its process killed) is Dask's business:
the scheduler reschedules the task on another worker, up to its ``allowed-failures`` (3 by
default); after that the task fails with ``KilledWorker`` and the run records the trial as
crashed. Either way the trial is accounted for and the run goes on.
"""

from __future__ import annotations

import contextlib
import threading
from concurrent.futures import Future
from typing import Any

import attrs
from distributed import Client, LocalCluster, get_worker

from automl_core.contracts import Evaluator, Executor
from automl_core.trial import Result, Trial
from automl_engine.builtins.processes import ProcessExecutor
from automl_spaces.options import integer

#: Attribute under which a Dask worker keeps its trial sandbox.
SANDBOX = "_automl_sandbox"
_SANDBOX_LOCK = threading.Lock()


@attrs.define(slots=False, eq=False)
class DaskExecutor(Executor):
    """Submits each trial as a Dask task; ``capacity`` is the cluster's thread count.

    ``address``: an existing scheduler (``tcp://host:8786``); without it a ``LocalCluster``
    of ``workers`` processes with one thread each is started, and closed at shutdown.
    """

    enforces_limits = True

    address: str | None = None
    workers: int = attrs.field(default=2, validator=integer(at_least=1))
    threads_per_trial: int = attrs.field(default=1, validator=integer(at_least=1))

    def __attrs_post_init__(self) -> None:
        self.trial_time: float | None = None
        self.trial_memory_mb: int | None = None
        self.cluster: LocalCluster | None = None
        self.client: Client | None = None
        self._evaluator_task: tuple[Evaluator, Any] | None = None
        self.capacity = self.workers if self.address is None else 1

    def set_limits(self, trial_time: float | None, trial_memory_mb: int | None) -> None:
        self.trial_time, self.trial_memory_mb = trial_time, trial_memory_mb

    def connect(self) -> Client:
        """The client, connecting (or starting the local cluster) on first use."""
        if self.client is None:
            if self.address is None:
                self.cluster = LocalCluster(
                    n_workers=self.workers,
                    threads_per_worker=1,
                    processes=True,
                    dashboard_address=":0",  # any free port: 8787 may be taken
                )
                self.client = Client(self.cluster)
            else:
                self.client = Client(self.address, timeout="30s")
            threads = sum(self.client.nthreads().values())
            self.capacity = max(1, threads)
        return self.client

    def submit(self, evaluator: Evaluator, trial: Trial) -> Future[Result]:
        client = self.connect()
        task = client.submit(
            evaluate_on_worker,
            self._evaluator_on_cluster(client, evaluator),
            trial,
            self.trial_time,
            self.trial_memory_mb,
            self.threads_per_trial,
            pure=False,
            key=f"trial-{trial.id}-{id(self)}",
        )
        result: Future[Result] = Future()
        task.add_done_callback(lambda done: _settle(done, result))
        return result

    def _evaluator_on_cluster(self, client: Client, evaluator: Evaluator) -> Any:
        """The evaluator sent to the cluster once (it holds the training data), as a task
        that returns it rather than as scattered data: if every worker holding it dies, the
        scheduler computes it again from the task, where scattered data would be lost and
        every trial depending on it cancelled ("lost dependencies")."""
        if self._evaluator_task is None or self._evaluator_task[0] is not evaluator:
            held = client.submit(_same, evaluator, pure=False)  # a key of its own each time
            self._evaluator_task = (evaluator, held)
        return self._evaluator_task[1]

    def shutdown(self) -> None:
        """Stop the trials still running, then close. On the cluster this executor started,
        each worker's sandbox is shut down first (its trial process killed): closing the
        cluster alone would give a busy worker seconds to finish its trial. Workers of a
        scheduler given by ``address`` may serve others, and are left alone."""
        if self.client is not None and self.cluster is not None:
            with contextlib.suppress(Exception):  # a worker already gone has nothing to stop
                self.client.run(_stop_sandbox)
        if self.client is not None:
            self.client.close()
        if self.cluster is not None:
            self.cluster.close()
        self.client, self.cluster, self._evaluator_task = None, None, None


def _same(evaluator: Evaluator) -> Evaluator:
    """The task whose result is the evaluator on a worker (see ``_evaluator_on_cluster``)."""
    return evaluator


def _settle(done: Any, result: Future[Result]) -> None:
    """Copy a finished Dask future into the run loop's future."""
    try:
        result.set_result(done.result())
    except Exception as error:  # a lost worker (KilledWorker), a cancelled task...
        result.set_exception(error)


def evaluate_on_worker(
    evaluator: Evaluator,
    trial: Trial,
    trial_time: float | None,
    trial_memory_mb: int | None,
    threads: int,
) -> Result:
    """Runs on a Dask worker: the trial in the worker's sandbox process, under the limits."""
    sandbox = _sandbox(threads)
    sandbox.set_limits(trial_time, trial_memory_mb)
    return sandbox.submit(evaluator, trial).result()


def _stop_sandbox(dask_worker: Any) -> None:
    """Runs on each Dask worker at shutdown: stop its sandbox and the trial running there."""
    with _SANDBOX_LOCK:
        sandbox = getattr(dask_worker, SANDBOX, None)
        if sandbox is not None:
            sandbox.shutdown()
            delattr(dask_worker, SANDBOX)


def _sandbox(threads: int) -> ProcessExecutor:
    """This Dask worker's one-process executor, made on first use."""
    worker = get_worker()
    with _SANDBOX_LOCK:
        sandbox = getattr(worker, SANDBOX, None)
        if sandbox is None:
            sandbox = ProcessExecutor(workers=1, threads_per_trial=threads)
            setattr(worker, SANDBOX, sandbox)
    return sandbox
