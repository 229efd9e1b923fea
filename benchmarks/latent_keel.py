"""The shared-latent-space method on real KEEL data, against its ablations and baselines.

Every variant searches auto-sklearn's classification space (``autosklearn-classification``)
on the same KEEL datasets, splits, seeds and trial budget; smbo's initial design is one random
pipeline per classifier (``initial_per_component: 1``, 18). The latent and independent-GP
variants maximise expected improvement per classifier (``acquisition_stage: last``), as the
paper and Bandit BO do; SMAC's random forest by its joint local search:

- ``latent+ranker``: the latent surrogate from the PTEM the ranker picks among
  ``--max-sources`` of Oboe's datasets (``oboe-autosklearn``: Oboe's auto-sklearn pipelines,
  its two size meta-features; the target's own OpenML entry is never a source), the task
  described by the hand-crafted meta-features;
- ``latent``: without pre-training; ``independent-gp``: one GP per classifier;
- ``smbo:rf`` (the base recipe itself): SMAC's random forest; ``random``: random search.

The first ``latent+ranker`` cell measures the ranker's labels (BO runs on the meta-data's
table) and caches them; the cells after it reuse them. ``automl compare`` prints the ranks.

    python benchmarks/latent_keel.py --out /tmp/latent-keel
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import yaml

DATASETS = ("keel:pima", "keel:german", "keel:australian", "keel:vehicle")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--datasets", nargs="*", default=list(DATASETS))
    parser.add_argument("--max-sources", type=int, default=6)
    parser.add_argument("--trials", type=int, default=40)
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args()

    args.out.mkdir(parents=True, exist_ok=True)
    suite = args.out / "suite.yaml"
    suite.write_text(
        yaml.safe_dump({"defaults": {"test_size": 0.25}, "tasks": args.datasets}, sort_keys=False)
    )
    base = args.out / "recipe.yaml"
    base.write_text(yaml.safe_dump(base_recipe(args), sort_keys=False))
    automl = str(Path(sys.executable).parent / "automl")
    command = [automl, "ablate", str(base), "--suite", str(suite), "--seeds", str(args.seeds)]
    command += ["--out", str(args.out / "ablation"), "--base-label", "smbo:rf"]
    for label, change in variants(args).items():
        command += ["--variant", f"{label} {json.dumps(change)}"]
    subprocess.run(command, check=True)
    subprocess.run([automl, "compare", str(args.out / "ablation")], check=True)


def base_recipe(args: argparse.Namespace) -> dict:
    return {
        "name": "latent-keel",
        "task": {
            "dataset": "placeholder",
            "metric": "balanced_accuracy",
            "resampling": {"holdout": 0.33},
        },
        "space": "autosklearn-classification",
        "search": {
            "strategy": "smbo",
            "params": {"initial_per_component": 1},
            "surrogate": "rf",
        },
        "metafeatures": "handcrafted",
        "budget": {"trials": args.trials, "trial_time": 30},
        "seed": 0,
    }


def variants(args: argparse.Namespace) -> dict[str, dict]:
    ptem = {
        "metadata": "oboe-autosklearn",
        "max_sources": args.max_sources,
        "label_runs": 1,
        "label_trials": 20,
    }
    per_algorithm = {"initial_per_component": 1, "acquisition_stage": "last"}
    return {
        "latent+ranker": {
            "search.surrogate": "latent",
            "search.params": per_algorithm,
            "warmstart": {"starter": "ptem", "params": ptem},
        },
        "latent": {"search.surrogate": "latent", "search.params": per_algorithm},
        "independent-gp": {"search.surrogate": "independent-gp", "search.params": per_algorithm},
        "random": {"search": {"strategy": "random"}},
    }


if __name__ == "__main__":
    main()
