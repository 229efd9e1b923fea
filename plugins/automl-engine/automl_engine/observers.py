"""Calling the lifecycle hooks (``on_run_start``, ``on_trial_start``, ``on_trial_end``,
``on_run_end``) one observer at a time.

pluggy calls every implementation of a hook in one go, and the first that raises aborts the
call: one broken progress bar would then lose a run's model. Here each observer is called on
its own: one that raises is reported by name (a warning) and the run goes on; one whose
``on_trial_end`` returns ``False`` asks the run to stop, which it does gracefully: no new
trials, those running finish and are stored, then the usual ensemble, refit and save (SMAC's
callbacks stop a run the same way).
"""

from __future__ import annotations

import traceback
import warnings
from typing import Any

from automl_core.plugins import Plugins


class ObserverWarning(UserWarning):
    """An observer raised; the run went on without it for that call."""


class Observers:
    """The run's observers: the plugins implementing the lifecycle hooks, plus those passed
    to :func:`automl_engine.runner.run`, registered on its plugin manager."""

    def __init__(self, plugins: Plugins) -> None:
        self._plugins = plugins

    def run_start(self, run: Any) -> None:
        self._call("on_run_start", run=run)

    def trial_start(self, run: Any, trial: Any) -> None:
        self._call("on_trial_start", run=run, trial=trial)

    def trial_end(self, run: Any, trial: Any, result: Any) -> str | None:
        """Tell every observer; the reason to stop if one of them returned ``False``."""
        stoppers = self._call("on_trial_end", run=run, trial=trial, result=result)
        return f"stopped by observer {', '.join(stoppers)}" if stoppers else None

    def run_end(self, run: Any, summary: Any) -> None:
        self._call("on_run_end", run=run, summary=summary)

    def _call(self, hook_name: str, **arguments: Any) -> list[str]:
        """Call each implementation (latest registered first, as pluggy does) with the
        arguments it names; the names of those that returned ``False``."""
        stoppers = []
        for impl in reversed(getattr(self._plugins.manager.hook, hook_name).get_hookimpls()):
            name = self.name_of(impl.plugin_name, impl.plugin)
            if impl.hookwrapper or getattr(impl, "wrapper", False):
                warnings.warn(
                    f"observer {name}: {hook_name} is a hook wrapper, which lifecycle hooks do "
                    "not support; it was not called",
                    ObserverWarning,
                    stacklevel=3,
                )
                continue
            try:
                answer = impl.function(*(arguments[arg] for arg in impl.argnames))
            except Exception as error:
                trace = "".join(traceback.format_exception(type(error), error, error.__traceback__))
                warnings.warn(
                    f"observer {name} raised in {hook_name}; the run goes on without it for "
                    f"this call: {type(error).__name__}: {error}\n{trace}",
                    ObserverWarning,
                    stacklevel=3,
                )
                continue
            if answer is False:
                stoppers.append(name)
        return stoppers

    def name_of(self, plugin_name: str, plugin: object) -> str:
        """The plugin's name and distribution when it came from one, else its class."""
        origin = self._plugins.origins.get(plugin_name)
        if origin is not None and origin.distribution not in ("<in-process>", "<unknown>"):
            return f"{plugin_name!r} ({origin.distribution})"
        if plugin_name.isdigit():  # registered without a name: pluggy used its id()
            return repr(type(plugin).__name__)
        return repr(plugin_name)
