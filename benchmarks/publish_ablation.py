"""Copy an ablation's rows into the repository: results.csv, ablation.json and each cell's
small files (summary, curve, cell and peer records), never its history, model or fold
models. Run it while the ablation goes on, then commit: finished rows are kept even if the
session that runs the grid ends.

    python benchmarks/publish_ablation.py ablations/issue44-quality-60s \\
        docs/ablations/issue44-quality-60s
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

KEPT = ("results.csv", "ablation.json", "summary.json", "curve.csv", "cell.json", "peer.json")


def publish(source: Path, target: Path) -> int:
    copied = 0
    for path in sorted(source.rglob("*")):
        if path.is_file() and path.name in KEPT and "fold_models" not in path.parts:
            destination = target / path.relative_to(source)
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, destination)
            copied += 1
    return copied


if __name__ == "__main__":
    source, target = Path(sys.argv[1]), Path(sys.argv[2])
    print(f"{publish(source, target)} files copied to {target}")
