"""Copy an ablation's rows into the repository: results.csv, ablation.json and each cell's
small files (summary, curve, cell and peer records), never its model or fold models. Run it
while the ablation goes on, then commit: finished rows are kept even if the session that runs
the grid ends.

    python benchmarks/publish_ablation.py ablations/issue44-quality-60s \\
        docs/ablations/issue44-quality-60s

``--histories`` also keeps each finished cell's history, gzipped (``history.sqlite.gz``, about
a fifth of its size): what a meta-data build needs, since its table is read from the
histories (``automl data build``). ``--restore`` goes the other way, into a fresh checkout's
ablation folder, so that the same ablation command resumes with the published cells done:

    python benchmarks/publish_ablation.py --histories metadata-build/x/ablation \\
        benchmarks/metadata-builds/x/ablation
    python benchmarks/publish_ablation.py --restore benchmarks/metadata-builds/x/ablation \\
        metadata-build/x/ablation
"""

from __future__ import annotations

import argparse
import gzip
import shutil
from pathlib import Path

KEPT = ("results.csv", "ablation.json", "summary.json", "curve.csv", "cell.json", "peer.json")
HISTORY, PACKED = "history.sqlite", "history.sqlite.gz"


def publish(source: Path, target: Path, histories: bool = False) -> int:
    """Copy the small files of ``source`` under ``target``; with ``histories``, also the
    gzipped history of every finished cell (one with a cell.json). Returns the files copied."""
    copied = 0
    for path in sorted(source.rglob("*")):
        if not path.is_file() or "fold_models" in path.parts:
            continue
        destination = target / path.relative_to(source)
        if path.name in KEPT:
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, destination)
            copied += 1
        elif histories and path.name == HISTORY and (path.parent / "cell.json").exists():
            destination.parent.mkdir(parents=True, exist_ok=True)
            with path.open("rb") as raw, gzip.open(destination.with_name(PACKED), "wb") as out:
                shutil.copyfileobj(raw, out)
            copied += 1
    return copied


def restore(source: Path, target: Path) -> int:
    """Copy a published ablation back under ``target``, unpacking its histories. Returns the
    files written."""
    written = 0
    for path in sorted(source.rglob("*")):
        if not path.is_file():
            continue
        destination = target / path.relative_to(source)
        destination.parent.mkdir(parents=True, exist_ok=True)
        if path.name == PACKED:
            with gzip.open(path, "rb") as packed, destination.with_name(HISTORY).open("wb") as out:
                shutil.copyfileobj(packed, out)
        else:
            shutil.copy2(path, destination)
        written += 1
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path)
    parser.add_argument("target", type=Path)
    parser.add_argument("--histories", action="store_true", help="keep finished histories")
    parser.add_argument("--restore", action="store_true", help="unpack a published ablation")
    args = parser.parse_args()
    if args.restore:
        print(f"{restore(args.source, args.target)} files restored to {args.target}")
    else:
        copied = publish(args.source, args.target, histories=args.histories)
        print(f"{copied} files copied to {args.target}")


if __name__ == "__main__":
    main()
