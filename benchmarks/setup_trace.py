"""How much a run's set-up does before its first trial: factory calls per component, and
how often the calls go from one kernel/engine module to another (issue 45's "module
switches"), for one `automl run` of smbo + rf + caruana, 8 trials, on sklearn:iris.

    python benchmarks/setup_trace.py

Set-up is everything from ``runner.run`` until the search loop starts
(``automl_engine.loop.search``). A switch is a Python call whose function lives in another
kernel or engine module than the previous such call (plugins' and libraries' calls are not
counted, nor do they break a run of calls). Prints a table; the numbers depend on the code,
not on the machine.
"""

from __future__ import annotations

import collections
import itertools
import sys
import tempfile
from pathlib import Path
from typing import Any

from automl_core.plugins import Plugins, load_plugins

try:  # the engine in a distribution of its own (since issue 45's split)
    from automl_engine.recipe import parse_recipe
    from automl_engine.runner import run
except ImportError:  # an older checkout, for the "before" column: all of it in automl_core
    from automl_core.recipe import parse_recipe  # type: ignore[no-redef]
    from automl_core.runner import run  # type: ignore[no-redef]

RECIPE = {
    "name": "trace",
    "task": {"dataset": "sklearn:iris", "metric": "accuracy"},
    "space": {
        "name": "autosklearn-classification",
        # cheap pipelines: the trials are not what is measured (kitchen sinks of 8,568
        # components before LDA take minutes on iris)
        "params": {
            "include": {
                "classifier": ["decision_tree", "lda"],
                "feature_preprocessor": ["no_preprocessing", "pca"],
            }
        },
    },
    "search": {"strategy": "smbo", "surrogate": "rf"},
    "ensemble": {"ensembler": "caruana"},
    "executor": {"name": "sequential"},
    "budget": {"trials": 8},
    "seed": 0,
}
OWN = ("automl_core", "automl_engine")


def traced_run(folder: Path) -> tuple[collections.Counter, list[str]]:
    """Factory calls by (kind, name) over the whole run, and the kernel/engine modules of
    the calls made during set-up, in order."""
    calls: collections.Counter = collections.Counter()
    create = Plugins.create

    def counting(self: Plugins, kind: str, name: str, params: Any = None) -> Any:
        calls[kind, name] += 1
        return create(self, kind, name, params)

    modules: list[str] = []
    state = {"setup": True}

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event != "call" or not state["setup"]:
            return
        module = frame.f_globals.get("__name__", "")
        if module.endswith(".loop") and frame.f_code.co_name == "search":
            state["setup"] = False
            sys.setprofile(None)  # the trials run at full speed
        elif module.startswith(OWN):
            modules.append(module)

    Plugins.create = counting  # type: ignore[method-assign]
    plugins = load_plugins()
    sys.setprofile(profile)
    try:
        run(parse_recipe(RECIPE), folder / "run", plugins=plugins)
    finally:
        sys.setprofile(None)
        Plugins.create = create  # type: ignore[method-assign]
    return calls, modules


#: The kernel's modules (their names since the split; before it, the same files): the
#: types and registry everything calls, not orchestration.
KERNEL = {"errors", "trial", "space", "contracts", "hookspecs", "plugins", "lazy", "documents"}


def switches(modules: list[str]) -> int:
    return sum(1 for a, b in itertools.pairwise(modules) if a != b)


def orchestration(modules: list[str]) -> list[str]:
    """The calls into modules other than the kernel's."""
    return [m for m in modules if m.split(".")[1] not in KERNEL]


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        calls, modules = traced_run(Path(folder))
    print("| component | factory calls in the run |")
    print("|---|---|")
    for (kind, name), count in sorted(calls.items()):
        print(f"| {kind} `{name}` | {count} |")
    print()
    print("| set-up | value |")
    print("|---|---|")
    print(f"| calls into kernel/engine functions | {len(modules)} |")
    print(f"| switches between kernel/engine modules | {switches(modules)} |")
    print(f"| distinct kernel/engine modules called | {len(set(modules))} |")
    steps = orchestration(modules)
    print(f"| switches between orchestration modules (kernel's left out) | {switches(steps)} |")
    print(f"| distinct orchestration modules called | {len(set(steps))} |")


if __name__ == "__main__":
    main()
