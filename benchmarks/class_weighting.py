"""Class weighting in the ``autosklearn-classification`` space's default pipelines: does
``balancing:strategy = weighting`` help each classifier on imbalanced KEEL datasets?

For every classifier of the space, its default pipeline (the space's default with that
classifier at its default hyper-parameters, as the first designs of MCTS, SMBO and random
search evaluate it) is fitted twice on the same rows, with ``balancing:strategy`` ``none`` and
``weighting``, and scored on a stratified holdout (the core's ``make_splits``: a third of the
rows held out, three split seeds; the split seed also seeds the pipeline). Scores are the
core's (:func:`automl_engine.evaluator.predict_scores`, so ``balanced_accuracy`` is that of the
arg-max of the predicted probabilities, as the search sees it).

Datasets: 14 binary datasets of KEEL's imbalanced collection (majority / minority 2.8 to
24, 177 to 1,484 rows), and 3 balanced KEEL datasets (ratio at most 1.2, one with 4
classes) as a control: small enough for the whole benchmark to take about 20 minutes on a
2-core machine (the 512-tree forests take most of it). Classifiers that take neither
``class_weight`` nor ``sample_weight`` (k-NN, LDA, QDA) build the same pipeline both ways and
are not fitted twice. Each fit runs in a worker process and is stopped after
``--fit-time`` seconds (default 30); a classifier stopped on a dataset, or failing on it (QDA
on too few minority rows), is skipped there for the remaining seeds, and listed.

Prints per classifier, over dataset x seed pairs: mean balanced accuracy without and with
weighting, the mean difference, and weighting's wins / ties / losses (a tie: equal to 1e-6);
then the same overall, and the mean difference of the other metrics (accuracy, ROC AUC,
macro F1, log loss) per group.

    python benchmarks/class_weighting.py                     # the default datasets, seeds 0 1 2
    python benchmarks/class_weighting.py --datasets yeast3 ecoli1 --control vehicle --seeds 0
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import platform
import time
import warnings
from collections import Counter
from typing import Any

import numpy as np
from sklearn.base import clone
from threadpoolctl import threadpool_limits

from automl_core.space import BuildContext
from automl_engine.builtins.sources import load_keel
from automl_engine.evaluator import Resampling, make_splits, predict_scores, score_all
from automl_sklearn.plugin import COMPONENTS
from automl_sklearn.spaces import classification_space
from automl_sklearn.wrappers import BalancedSampleWeights
from automl_spaces.pipeline_space import PipelineSpace

#: KEEL's imbalanced collection (binary): majority / minority class ratio in brackets.
IMBALANCED = (
    "haberman",  # 2.8
    "vehicle0",  # 3.3
    "ecoli1",  # 3.4
    "new-thyroid1",  # 5.1
    "yeast3",  # 8.1
    "ecoli3",  # 8.6
    "yeast-2_vs_4",  # 9.1
    "vowel0",  # 10.0
    "glass2",  # 11.6
    "cleveland-0_vs_4",  # 12.6, missing values
    "glass4",  # 15.5
    "page-blocks-1-3_vs_4",  # 15.9
    "abalone9-18",  # 16.4, a categorical column
    "flare-F",  # 23.8, categorical columns
)
#: Balanced KEEL datasets (ratio at most 1.2), binary and multiclass.
CONTROL = ("heart", "sonar", "vehicle")
METRICS = ("balanced_accuracy", "accuracy", "roc_auc", "f1_macro", "log_loss")
HOLDOUT = 0.33

_SPACE: PipelineSpace | None = None
_DATA: dict[str, tuple[Any, np.ndarray]] = {}
_DEFAULTS: dict[str, dict[str, Any]] = {}


def space() -> PipelineSpace:
    global _SPACE
    if _SPACE is None:
        _SPACE = classification_space(list(COMPONENTS))
    return _SPACE


def dataset(name: str) -> tuple[Any, np.ndarray]:
    """KEEL features and integer-coded labels (cached per process)."""
    if name not in _DATA:
        data = load_keel(name)
        _, codes = np.unique(data.y.astype(str), return_inverse=True)
        _DATA[name] = (data.X, codes)
    return _DATA[name]


def default_config(classifier: str, strategy: str) -> dict[str, Any]:
    """The space's default pipeline with ``classifier`` at its defaults, balanced as said
    (cached per process: restricting the space costs a third of a second)."""
    if classifier not in _DEFAULTS:
        _DEFAULTS[classifier] = space().restrict(include={"classifier": [classifier]}).default()
    return {**_DEFAULTS[classifier], "balancing:strategy": strategy}


def is_weighted(classifier: str) -> bool:
    """Whether ``weighting`` changes the classifier's pipeline at all."""
    built = space().build(default_config(classifier, "weighting"), BuildContext("classification"))
    final = built.steps[-1][1]
    if isinstance(final, BalancedSampleWeights):
        return True
    return "balanced" in [v for v in final.get_params().values() if isinstance(v, str)]


def fit_and_score(name: str, seed: int, classifier: str, strategy: str) -> dict[str, Any]:
    """One fit on the holdout split ``seed`` of dataset ``name``; every metric and the time."""
    X, y = dataset(name)
    (train, valid) = make_splits(y, "classification", Resampling("holdout", HOLDOUT), seed)[0]
    model = clone(
        space().build(default_config(classifier, strategy), BuildContext("classification", seed))
    )
    with warnings.catch_warnings(), threadpool_limits(1):
        warnings.simplefilter("ignore")
        started = time.perf_counter()
        model.fit(X.iloc[train], y[train])
        seconds = time.perf_counter() - started
        proba = predict_scores(model, X.iloc[valid], int(y.max()) + 1)
    return {"scores": score_all("classification", y[valid], proba), "seconds": seconds}


class Worker:
    """One worker process; a fit that runs past ``limit`` seconds is stopped (the process is
    killed and a fresh one started)."""

    def __init__(self, limit: float) -> None:
        self.limit = limit
        self.pool = self._start()

    @staticmethod
    def _start() -> Any:
        return multiprocessing.get_context("fork").Pool(1)

    def run(self, *args: Any) -> dict[str, Any] | str:
        """The fit's scores, or why there are none: ``timeout`` or the error's type."""
        pending = self.pool.apply_async(fit_and_score, args)
        try:
            return pending.get(self.limit)
        except multiprocessing.TimeoutError:
            self.pool.terminate()
            self.pool.join()
            self.pool = self._start()
            return "timeout"
        except Exception as error:  # the pipeline cannot fit these rows (a search's crash)
            return type(error).__name__

    def close(self) -> None:
        self.pool.close()
        self.pool.join()


def measure(args: argparse.Namespace) -> tuple[list[dict[str, Any]], dict[str, list[str]]]:
    """One row per (group, dataset, seed, classifier) with both strategies' scores."""
    classifiers = args.classifiers or list(space().stage("classifier").components)
    names = [c if isinstance(c, str) else c.name for c in classifiers]
    weighted = {c: is_weighted(c) for c in names}
    rows: list[dict[str, Any]] = []
    skipped: dict[str, list[str]] = {}
    worker = Worker(args.fit_time)
    started = time.perf_counter()
    try:
        for group, datasets in (("imbalanced", args.datasets), ("control", args.control)):
            for name in datasets:
                X, y = dataset(name)
                counts = sorted(Counter(y).values())
                print(
                    f"# {group} {name}: {X.shape[0]} rows, {X.shape[1]} features, classes "
                    f"{counts}, ratio {counts[-1] / counts[0]:.1f} "
                    f"({time.perf_counter() - started:.0f} s)",
                    flush=True,
                )
                for classifier in names:
                    for seed in args.seeds:
                        none = worker.run(name, seed, classifier, "none")
                        both = isinstance(none, dict) and weighted[classifier]
                        weighting = (
                            worker.run(name, seed, classifier, "weighting") if both else none
                        )
                        if isinstance(none, str) or isinstance(weighting, str):
                            why = none if isinstance(none, str) else weighting
                            skipped.setdefault(classifier, []).append(f"{name} ({why})")
                            break
                        rows.append(
                            {
                                "group": group,
                                "dataset": name,
                                "seed": seed,
                                "classifier": classifier,
                                "weighted": weighted[classifier],
                                "none": none["scores"],
                                "weighting": weighting["scores"],
                                "seconds": none["seconds"] + (weighting["seconds"] if both else 0),
                            }
                        )
    finally:
        worker.close()
    print(f"# measured in {time.perf_counter() - started:.0f} s", flush=True)
    return rows, skipped


def _line(label: str, pairs: list[dict[str, Any]], metric: str = "balanced_accuracy") -> str:
    none = np.array([r["none"][metric] for r in pairs])
    weighting = np.array([r["weighting"][metric] for r in pairs])
    difference = weighting - none
    if metric == "log_loss":
        difference = -difference  # lower is better: a positive difference is weighting's gain
    wins = int(np.sum(difference > 1e-6))
    losses = int(np.sum(difference < -1e-6))
    ties = len(pairs) - wins - losses
    return (
        f"| {label} | {len(pairs)} | {np.nanmean(none):.4f} | {np.nanmean(weighting):.4f} | "
        f"{np.nanmean(difference):+.4f} | {wins} / {ties} / {losses} |"
    )


def print_tables(rows: list[dict[str, Any]], skipped: dict[str, list[str]]) -> None:
    classifiers = list(dict.fromkeys(r["classifier"] for r in rows))
    for group in ("imbalanced", "control"):
        mine = [r for r in rows if r["group"] == group]
        if not mine:
            continue
        datasets = list(dict.fromkeys(r["dataset"] for r in mine))
        seeds = sorted({r["seed"] for r in mine})
        print(
            f"\n{group}: {len(datasets)} datasets x {len(seeds)} seeds; holdout balanced "
            "accuracy, default pipeline per classifier; W / T / L: weighting against none\n"
        )
        print("| classifier | pairs | BA none | BA weighting | mean diff | W / T / L |")
        print("|---|---|---|---|---|---|")
        for classifier in classifiers:
            pairs = [r for r in mine if r["classifier"] == classifier]
            if pairs:
                label = classifier if pairs[0]["weighted"] else f"{classifier} (no weights)"
                print(_line(label, pairs))
        weighted = [r for r in mine if r["weighted"]]
        print(_line("**all weighted classifiers**", weighted))
        print(_line("**all classifiers**", mine))
        print(f"\n{group}, all classifiers that take weights: the other metrics\n")
        print("| metric | pairs | none | weighting | mean gain | W / T / L |")
        print("|---|---|---|---|---|---|")
        for metric in METRICS:
            print(_line(metric, weighted, metric))
    if skipped:
        print("\nnot measured (classifier: datasets (timeout: past the fit time; else the error)):")
        for classifier, datasets in skipped.items():
            print(f"  {classifier}: {', '.join(datasets)}")
    seconds = sum(r["seconds"] for r in rows)
    print(f"\nfit time summed over all fits: {seconds:.0f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=list(IMBALANCED))
    parser.add_argument("--control", nargs="*", default=list(CONTROL))
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--classifiers", nargs="+", help="default: all of the space's")
    parser.add_argument("--fit-time", type=float, default=30.0, help="seconds per fit at most")
    args = parser.parse_args()
    print(
        f"# {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; "
        f"{vars(args)}",
        flush=True,
    )
    rows, skipped = measure(args)
    print_tables(rows, skipped)


if __name__ == "__main__":
    main()
