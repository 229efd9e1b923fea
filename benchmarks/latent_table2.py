"""The shared-latent-space paper's Table 2, adapted, on Tensor-OBOE table lookups.

Every method searches the same test datasets (``--targets`` drawn from ``--target-split``,
never a source) for ``--trials`` trials, smbo's initial design being the paper's 2 random
configurations per algorithm (``initial_per_component: 2``, 22 on Tensor-OBOE's 11
estimators), with the same seeds:

- ``latent+ranker``: the latent surrogate from the PTEM the ranker picks (``warmstart:
  ptem``; sources: ``--max-sources`` datasets of ``--source-split``);
- ``latent+random-ptem``: from a source drawn at random among the same sources;
- ``latent``: without pre-training;
- ``independent-gp``: one GP per algorithm, nothing shared (Bandit BO's surrogate);
- ``smbo:gp``: one GP on the space's encoding; ``smbo:rf`` (the base recipe itself):
  SMAC's random forest;
- ``random``: random search.

(The paper's RB-SMAC and the ranker baselines
AS-ML/AHS-ML are not here.) The runs are an ablation (``automl ablate``: resumable, one
folder per cell) and ``automl compare`` gives the mean ranks and anytime curves. The ranker's
labels are the expensive part: they are measured in the first ``latent+ranker`` cell and
kept in the cache; ``--labels FILE`` seeds the cache from a file and writes the labels
back to it at the end, so that a later session does not measure them again.

    python benchmarks/latent_table2.py --out /tmp/table2 --labels \\
        benchmarks/latent_labels_tensor_oboe.json
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path

import numpy as np
import yaml

from automl_core.plugins import load_plugins
from automl_engine.metastore import metadata_fingerprint
from automl_warmstart_ptem.labels import LabelRuns, LabelStore

BENCHMARK = "tensor-oboe"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--targets", type=int, default=10)
    parser.add_argument("--target-split", default="fold1")
    parser.add_argument("--source-split", default="fold2")
    parser.add_argument("--max-sources", type=int, default=8)
    parser.add_argument("--label-trials", type=int, default=30)
    parser.add_argument("--label-runs", type=int, default=1)
    parser.add_argument("--trials", type=int, default=40)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--labels", type=Path, help="a JSON file of labels to start from")
    parser.add_argument("--only", nargs="*", help="run only these variants")
    args = parser.parse_args()

    metadata = load_plugins().create("benchmark", BENCHMARK).metadata
    args.out.mkdir(parents=True, exist_ok=True)
    suite = args.out / "suite.yaml"
    suite.write_text(yaml.safe_dump({"tasks": targets(metadata, args)}, sort_keys=False))
    base = args.out / "recipe.yaml"
    base.write_text(yaml.safe_dump(base_recipe(args), sort_keys=False))
    store = LabelStore(
        metadata_fingerprint(metadata),
        BENCHMARK,
        LabelRuns(trials=args.label_trials, runs=args.label_runs),
    )
    if args.labels is not None and args.labels.exists():
        seed_store(store, args.labels, metadata_fingerprint(metadata))
    automl = str(Path(sys.executable).parent / "automl")
    command = [
        automl,
        "ablate",
        str(base),
        "--suite",
        str(suite),
        "--seeds",
        str(args.seeds),
        "--out",
        str(args.out / "ablation"),
        "--base-label",
        "smbo:rf",
    ]
    for label, change in variants(args).items():
        if not args.only or label in args.only:
            command += ["--variant", f"{label} {json.dumps(change)}"]
    try:
        subprocess.run(command, check=True)
    finally:
        if args.labels is not None:
            keep_labels(LabelStore(store.fingerprint, BENCHMARK, store.settings), args.labels)
    subprocess.run([automl, "compare", str(args.out / "ablation")], check=True)


EASY_SHARE = 0.01


def targets(metadata, args: argparse.Namespace) -> list[dict[str, str]]:
    """``--targets`` datasets of the target split that have meta-features, drawn with seed 0
    (the ranker compares meta-features: a target without them cannot be ranked for).

    A dataset where more than ``EASY_SHARE`` of the pool reaches the best loss is left out:
    every method finds that loss within a few trials, the regrets tie at 0 and say nothing
    (on Tensor-OBOE 40666 has 34 % of its pipelines at error 0)."""
    described = set(metadata.metafeatures.index.astype(str))
    pool = [
        d
        for d in metadata.splits[args.target_split]
        if d in described and not too_easy(metadata.performance[metadata.row(d)])
    ]
    drawn = np.random.default_rng(0).permutation(len(pool))[: args.targets]
    return [{"benchmark": BENCHMARK, "dataset": pool[i]} for i in sorted(drawn)]


def too_easy(losses: np.ndarray) -> bool:
    """Whether more than ``EASY_SHARE`` of the observed losses equal the best one."""
    observed = losses[~np.isnan(losses)]
    return bool(np.mean(observed <= observed.min()) > EASY_SHARE)


def base_recipe(args: argparse.Namespace) -> dict:
    return {
        "name": "latent-table2",
        "task": {"benchmark": BENCHMARK, "dataset": "placeholder"},
        "search": {
            "strategy": "smbo",
            "params": {"initial_per_component": 2},
            "surrogate": "rf",
        },
        "budget": {"trials": args.trials},
        "seed": 0,
    }


def variants(args: argparse.Namespace) -> dict[str, dict]:
    ptem = {
        "split": args.source_split,
        "max_sources": args.max_sources,
        "label_trials": args.label_trials,
        "label_runs": args.label_runs,
    }
    return {
        "latent+ranker": {
            "search.surrogate": "latent",
            "warmstart": {"starter": "ptem", "params": ptem},
        },
        "latent+random-ptem": {
            "search.surrogate": "latent",
            "warmstart": {"starter": "ptem", "params": {**ptem, "pick": "random"}},
        },
        "latent": {"search.surrogate": "latent"},
        "independent-gp": {"search.surrogate": "independent-gp"},
        "smbo:gp": {"search.surrogate": "gp"},
        "random": {"search": {"strategy": "random"}},
    }


def seed_store(store: LabelStore, labels: Path, fingerprint: str) -> None:
    """Add the file's scores the cache lacks, when they were measured on the same meta-data
    with the same settings."""
    given = json.loads(labels.read_text())
    if given.get("metadata") != fingerprint or given.get("settings") != asdict(store.settings):
        print(f"{labels}: measured on other meta-data or settings; not used", file=sys.stderr)
        return
    for target, by_source in given["scores"].items():
        for source, score in by_source.items():
            if store.get(target, source) is None:
                store.put(target, source, float(score))


def keep_labels(store: LabelStore, labels: Path) -> None:
    """The cache's scores, with their meta-data and settings, into ``labels``."""
    kept = {"metadata": store.fingerprint, "settings": asdict(store.settings)}
    labels.write_text(json.dumps({**kept, "scores": store.scores}, indent=1, sort_keys=True))


if __name__ == "__main__":
    main()
