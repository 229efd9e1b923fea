"""The process executor: each trial runs in a worker process, under a time and memory limit.

Real pipelines hang, exhaust memory and crash the interpreter. Here none of that reaches the
driver: every worker is a fresh Python process (no lock or thread state is inherited), in a
process group of its own, with an address-space limit. The driver watches each trial's
clock; a trial past its time has its worker's whole process group killed (``SIGKILL``: a fit
stuck in C code is stopped too, which a ``signal``-based timeout cannot do), is recorded as
``timeout``, and a fresh worker takes the slot. A ``MemoryError`` inside the trial is recorded
as ``memout``; a worker that dies (a segfault, ``os._exit``) as
``crashed`` with its exit status. Nothing else in the run is affected.

The evaluator is sent to a worker once, not with every trial: it holds the training data.
It is the trial's evaluation that runs under the limits, not the loading of the evaluator:
the memory limit is set for each evaluation and lifted in between, while the worker receives
and unpickles an evaluator. What the evaluator holds still
counts against the limit once the trial runs, so data larger than the limit makes every
trial ``memout``; an evaluator that cannot be loaded at all fails its trial as ``crashed``.
"""

from __future__ import annotations

import logging
import os
import pickle
import signal
import subprocess
import sys
import threading
import time
import traceback
from concurrent.futures import Future
from multiprocessing.connection import Connection
from queue import Queue
from typing import Any

import attrs
import cloudpickle

from automl_core.contracts import Evaluator, Executor
from automl_core.hookspecs import RegisterFactory, hookimpl
from automl_core.trial import Result, Status, Trial
from automl_spaces.options import integer, number, optional

#: The automl-core plugin API this plugin is written for (automl_core.plugins.PLUGIN_API).
AUTOML_PLUGIN_API = 1

log = logging.getLogger(__name__)

#: How often the driver looks at a running trial's clock, in seconds.
POLL_S = 0.05
#: Extra time a worker gets to start (imports) before its first trial's clock matters.
START_GRACE_S = 60.0
#: The error of a trial abandoned by :meth:`ProcessExecutor.shutdown`.
SHUT_DOWN = (
    "the executor was shut down while the trial was queued or running; its worker was killed"
)


@attrs.define(slots=False, eq=False)
class ProcessExecutor(Executor):
    """Runs trials in ``workers`` worker processes; see the module docstring.

    ``trial_time`` (seconds) and ``trial_memory_mb`` come from the recipe's budget
    (:meth:`set_limits`, which replaces both, ``None`` meaning no limit, and takes effect
    from the next trial on, on workers already started too); the parameters of the same name
    set them for use without a recipe. ``threads_per_trial`` (1) caps the threads of OpenMP
    and BLAS in each worker, so that parallel trials do not oversubscribe the cores.
    """

    enforces_limits = True

    workers: int = attrs.field(default=2, validator=integer(at_least=1))
    trial_time: float | None = attrs.field(default=None, validator=optional(number(above=0)))
    trial_memory_mb: int | None = attrs.field(default=None, validator=optional(integer(1)))
    threads_per_trial: int = attrs.field(default=1, validator=integer(at_least=1))

    def __attrs_post_init__(self) -> None:
        self.capacity = self.workers
        self._jobs: Queue[tuple[Evaluator, Trial, Future[Result]] | None] = Queue()
        self._slots: list[_Slot] = []
        self._started = False
        #: Set by :meth:`shutdown`: trials still running are abandoned, queued ones not started.
        self._stopping = threading.Event()
        self._serialised: tuple[Evaluator, bytes] | None = None

    def serialised(self, evaluator: Evaluator) -> bytes:
        """The evaluator as bytes for the workers, made once per evaluator.

        cloudpickle rather than pickle: spaces hold the functions that
        build their components, which may be lambdas or closures.
        """
        if self._serialised is None or self._serialised[0] is not evaluator:
            self._serialised = (evaluator, cloudpickle.dumps(evaluator))
        return self._serialised[1]

    def set_limits(self, trial_time: float | None, trial_memory_mb: int | None) -> None:
        self.trial_time, self.trial_memory_mb = trial_time, trial_memory_mb

    def submit(self, evaluator: Evaluator, trial: Trial) -> Future[Result]:
        if not self._started:
            self._stopping.clear()
            self._slots = [_Slot(self, i) for i in range(self.capacity)]
            for slot in self._slots:
                slot.thread.start()
            self._started = True
        future: Future[Result] = Future()
        self._jobs.put((evaluator, trial, future))
        return future

    def shutdown(self) -> None:
        """Stop every worker now. A trial still running is abandoned: its worker's process
        group is killed within :data:`POLL_S` and its future resolves as ``crashed``, so a
        run whose wall time has ended does not wait for the trials it gave up on."""
        self._stopping.set()
        for _ in self._slots:
            self._jobs.put(None)
        for slot in self._slots:
            slot.thread.join(timeout=5)
            slot.stop_worker()
        self._slots, self._started = [], False


class _Slot:
    """One worker process and the driver-side thread that feeds and watches it."""

    def __init__(self, executor: ProcessExecutor, index: int) -> None:
        self.executor = executor
        self.process: Any = None
        self.connection: _Channel | None = None
        self.evaluator_id: int | None = None
        self.thread = threading.Thread(target=self._serve, name=f"trial-worker-{index}")
        self.thread.daemon = True

    # -- the worker's life -------------------------------------------------------------------
    def start_worker(self) -> None:
        """A fresh worker: ``python -c`` with two pipes, in a session (and process group) of
        its own. Not ``multiprocessing``: that refuses to start children from daemonic
        processes, which is what Dask workers are."""
        to_child_read, to_child_write = os.pipe()
        from_child_read, from_child_write = os.pipe()
        executor = self.executor
        code = (
            "from automl_engine.builtins.processes import worker_main; "
            f"worker_main({to_child_read}, {from_child_write}, {executor.threads_per_trial!r})"
        )
        environment = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
        self.process = subprocess.Popen(
            [sys.executable, "-c", code],
            pass_fds=(to_child_read, from_child_write),
            start_new_session=True,
            env=environment,
        )
        os.close(to_child_read)
        os.close(from_child_write)
        self.connection = _Channel(from_child_read, to_child_write)
        self.evaluator_id = None

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def stop_worker(self) -> None:
        """Kill the worker and everything it started (its process group)."""
        if self.process is None:
            return
        if self.alive():
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                self.process.kill()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            log.warning("worker process %s did not exit after SIGKILL", self.process.pid)
        if self.connection is not None:
            self.connection.close()
        self.process, self.connection = None, None

    # -- the driver side ---------------------------------------------------------------------
    def _serve(self) -> None:
        while True:
            job = self.executor._jobs.get()
            if job is None:
                return
            evaluator, trial, future = job
            if not future.set_running_or_notify_cancel():
                continue
            if self.executor._stopping.is_set():
                future.set_result(Result.failure(Status.CRASHED, SHUT_DOWN))
                continue
            try:
                future.set_result(self._run(evaluator, trial))
            except Exception as error:  # an executor fault, reported as the trial's crash
                future.set_result(
                    Result.failure(Status.CRASHED, f"process executor error: {error!r}")
                )
                self.stop_worker()

    def _run(self, evaluator: Evaluator, trial: Trial) -> Result:
        if not self.alive():
            self.stop_worker()
            self.start_worker()
        assert self.connection is not None
        fresh = self.evaluator_id != id(evaluator)
        payload = self.executor.serialised(evaluator) if fresh else None
        self.connection.send((payload, trial, self.executor.trial_memory_mb))
        self.evaluator_id = id(evaluator)
        return self._wait(trial, grace=START_GRACE_S if fresh else 0.0)

    def _wait(self, trial: Trial, grace: float) -> Result:
        """The worker's answer, or the trial's fate if the clock runs out or the worker dies."""
        assert self.connection is not None and self.process is not None
        limit = self.executor.trial_time
        started = time.monotonic()
        while True:
            if self.connection.poll(POLL_S):
                try:
                    kind, payload = self.connection.recv()
                except (EOFError, OSError):
                    return self._died(started)
                if kind == "started":  # the evaluator is loaded: the trial's clock starts
                    started, grace = time.monotonic(), 0.0
                    continue
                elapsed = time.monotonic() - started
                if limit is not None and elapsed > limit + grace:
                    # finished past its limit between two polls: over time all the same,
                    # whatever the poll interval (a limit shorter than it is still a limit)
                    return self._over_time(trial, limit, elapsed, killed=False)
                return payload
            if not self.alive():
                return self._died(started)
            elapsed = time.monotonic() - started
            if self.executor._stopping.is_set():
                self.stop_worker()
                return Result.failure(Status.CRASHED, SHUT_DOWN, duration=elapsed)
            if limit is not None and elapsed > limit + grace:
                self.stop_worker()
                return self._over_time(trial, limit, elapsed, killed=True)

    @staticmethod
    def _over_time(trial: Trial, limit: float, elapsed: float, killed: bool) -> Result:
        what = (
            "its worker process and everything it started were killed"
            if killed
            else "it finished after it, and its result is not counted"
        )
        return Result.failure(
            Status.TIMEOUT,
            f"trial {trial.id} exceeded its time limit of {limit:g}s; {what}",
            duration=elapsed,
        )

    def _died(self, started: float) -> Result:
        assert self.process is not None
        try:
            code = self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            code = None
        self.stop_worker()
        how = (
            f"killed by signal {signal.Signals(-code).name}"
            if code is not None and code < 0
            else f"exited with status {code}"
        )
        return Result.failure(
            Status.CRASHED,
            f"the worker process running the trial {how}",
            duration=time.monotonic() - started,
        )


def worker_main(read_fd: int, write_fd: int, threads: int) -> None:
    """A worker: ``threads`` threads for numerical libraries, then trials, each evaluated
    under the memory limit that comes with it, until the driver closes the pipe. (Its own
    process group comes from its session.)"""
    connection = _Channel(read_fd, write_fd)
    _die_with_parent()
    _limit_threads(threads)
    evaluator: Evaluator | None = None
    while True:
        try:
            new_evaluator, trial, memory_mb = connection.recv()
        except (EOFError, OSError):
            return
        if new_evaluator is not None:
            try:
                evaluator = pickle.loads(new_evaluator)
            except Exception:
                failure = f"the evaluator could not be loaded:\n{traceback.format_exc()}"
                connection.send(("result", Result.failure(Status.CRASHED, failure)))
                return  # the driver starts a fresh worker and sends the evaluator again
        connection.send(("started", None))
        assert evaluator is not None
        _limit_memory(None if memory_mb is None else int(memory_mb) * 2**20)
        try:
            result = _evaluate(evaluator, trial, memory_mb)
        finally:
            _limit_memory(None)
        connection.send(("result", result))


def _limit_memory(limit: int | None) -> None:
    """Cap this process's address space at ``limit`` bytes (``None``: lift the cap). Only the
    soft limit is set: the worker lifts it between trials to receive and load evaluators."""
    import resource

    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    resource.setrlimit(resource.RLIMIT_AS, (hard if limit is None else limit, hard))


#: How often a worker checks that the process that started it is still alive, in seconds.
ORPHAN_CHECK_S = 0.5


def _die_with_parent() -> None:
    """Kill this worker's process group as soon as its parent is gone.

    A worker lives in a session of its own, so that a timeout can kill everything a trial
    started; the price is that the death of its driver (a killed ``automl run``, a lost Dask
    worker) does not reach it. Without this watch, an orphaned trial would go on using a core
    until it finished, however long that takes.
    """
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(ORPHAN_CHECK_S)
        os.killpg(os.getpgrp(), signal.SIGKILL)

    threading.Thread(target=watch, name="orphan-watch", daemon=True).start()


class _Channel:
    """Two one-way pipes used as one two-way connection (pickled messages)."""

    def __init__(self, read_fd: int, write_fd: int) -> None:
        self.reader = Connection(read_fd, writable=False)
        self.writer = Connection(write_fd, readable=False)

    def send(self, message: Any) -> None:
        self.writer.send(message)

    def recv(self) -> Any:
        return self.reader.recv()

    def poll(self, timeout: float) -> bool:
        return self.reader.poll(timeout)

    def close(self) -> None:
        self.reader.close()
        self.writer.close()


#: Environment variables that size the thread pools of OpenMP and the BLAS libraries.
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def _limit_threads(threads: int) -> None:
    """Keep ``workers`` trials from each starting one thread per core: the variables reach
    libraries loaded later (LightGBM's OpenMP), threadpoolctl those already loaded."""
    for variable in THREAD_VARIABLES:
        os.environ[variable] = str(threads)
    from threadpoolctl import threadpool_limits

    threadpool_limits(threads)


def _evaluate(evaluator: Evaluator, trial: Trial, memory_mb: int | None) -> Result:
    started = time.perf_counter()
    try:
        return evaluator.evaluate(trial)
    except MemoryError:
        return Result.failure(
            Status.MEMOUT,
            f"trial {trial.id} exceeded its memory limit of {memory_mb} MB",
            duration=time.perf_counter() - started,
        )
    except Exception:  # evaluators should not raise; if one does, the trial crashed
        return Result.failure(
            Status.CRASHED, traceback.format_exc(), duration=time.perf_counter() - started
        )


@hookimpl
def register_executors(register: RegisterFactory[Executor]) -> None:
    register("processes", ProcessExecutor, "trials in worker processes, with time/memory limits")
