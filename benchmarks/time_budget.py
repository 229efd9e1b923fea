"""How closely ``AutoMLClassifier.fit`` keeps its ``time_budget``, end to end.

Fits the estimator ``--repeats`` times on a synthetic dataset (``make_classification``,
``--rows`` x 20 features), each in a fresh process (a first fit in a process also imports
every plugin, as a user's would), with the default recipe and, with ``--ensemble``, the
default recipe plus a Caruana ensemble of size 50 (search, ensemble and refit then all
count). Prints one row per fit: the wall clock of ``fit``, its deviation from the budget,
the trials run, the refit's seconds and the members dropped at the deadline.

    python benchmarks/time_budget.py --budget 30 --repeats 5
    python benchmarks/time_budget.py --budget 30 --repeats 5 --ensemble
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys

ONE_FIT = """
import json, time, warnings
from sklearn.datasets import make_classification
from automl_engine.estimator import AutoMLClassifier
from automl_core.plugins import load_plugins

rows, budget, ensemble = {rows}, {budget}, {ensemble}
recipe = dict(load_plugins(entry_points=False).get("recipe", "default-classification").obj)
if ensemble:
    recipe["ensemble"] = {{"ensembler": "caruana", "params": {{"size": 50}}}}
X, y = make_classification(rows, 20, n_informative=10, random_state=0)
started = time.monotonic()
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    model = AutoMLClassifier(recipe=recipe, time_budget=budget, n_jobs=2).fit(X, y)
took = time.monotonic() - started
summary = model.run_summary_
print(json.dumps({{"took": took, "trials": summary.n_trials, "refit": summary.refit_seconds,
                  "dropped": len(summary.dropped_members), "members": len(summary.ensemble)}}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=float, default=30.0)
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--ensemble", action="store_true")
    args = parser.parse_args()
    tolerance = max(0.1 * args.budget, 5.0)
    print(f"# {platform.machine()}, Python {platform.python_version()}; {vars(args)}")
    print(f"# allowed: {args.budget:g} s +- {tolerance:g} s\n")
    print("| fit | wall s | - budget | trials | members | refit s | dropped |")
    print("|---|---|---|---|---|---|---|")
    code = ONE_FIT.format(rows=args.rows, budget=args.budget, ensemble=args.ensemble)
    for repeat in range(1, args.repeats + 1):
        output = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        ).stdout
        fit = json.loads(output.strip().splitlines()[-1])
        print(
            f"| {repeat} | {fit['took']:.1f} | {fit['took'] - args.budget:+.1f} | "
            f"{fit['trials']} | {fit['members']} | {fit['refit']:.1f} | {fit['dropped']} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
