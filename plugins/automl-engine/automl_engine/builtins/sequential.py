"""The sequential executor: evaluates each trial in the driver process, one at a time.

It has no per-trial time or memory limit (a trial that hangs, hangs the run); the process
executor isolates trials. It is the default because it has no start-up cost and keeps
tracebacks and debuggers simple.
"""

from __future__ import annotations

from concurrent.futures import Future

from automl_core.contracts import Evaluator, Executor
from automl_core.hookspecs import RegisterFactory, hookimpl
from automl_core.trial import Result, Trial

#: The automl-core plugin API this plugin is written for (automl_core.plugins.PLUGIN_API).
AUTOML_PLUGIN_API = 1


class SequentialExecutor(Executor):
    """Runs ``evaluator.evaluate(trial)`` at once and returns a finished future."""

    capacity = 1

    def submit(self, evaluator: Evaluator, trial: Trial) -> Future[Result]:
        future: Future[Result] = Future()
        try:
            future.set_result(evaluator.evaluate(trial))
        except Exception as error:  # the run loop decides what an executor failure means
            future.set_exception(error)
        return future


@hookimpl
def register_executors(register: RegisterFactory[Executor]) -> None:
    register("sequential", SequentialExecutor)
