"""The throughput tables of ``benchmarks/scaling.py`` as a plot: trials per second against
workers, one line per strategy and executor, the ideal (``workers / trial seconds``) dashed,
one panel per trial length (issue 48)::

    python benchmarks/scaling_plot.py benchmarks/scaling_processes.txt \\
        benchmarks/scaling_dask.txt --out docs/images/scaling.png
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt


def read_rows(paths: list[Path]) -> list[dict[str, str]]:
    """The table rows of each file (``| strategy | executor | trial s | workers | trials/s
    ...``), the header and rule lines skipped."""
    rows = []
    for path in paths:
        for line in path.read_text().splitlines():
            cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
            if len(cells) == 8 and cells[0] not in ("strategy", "---"):
                strategy, executor, seconds, workers, rate = cells[:5]
                rows.append(
                    {"strategy": strategy, "executor": executor, "seconds": seconds,
                     "workers": workers, "rate": rate}
                )  # fmt: skip
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tables", nargs="+", type=Path)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    rows = read_rows(args.tables)
    lengths = sorted({row["seconds"] for row in rows}, key=float, reverse=True)
    figure, axes = plt.subplots(1, len(lengths), figsize=(5.5 * len(lengths), 4.2), squeeze=False)
    for axis, seconds in zip(axes[0], lengths, strict=True):
        lines: dict[str, list[tuple[int, float]]] = defaultdict(list)
        for row in rows:
            if row["seconds"] == seconds:
                label = f"{row['strategy']} ({row['executor']})"
                lines[label].append((int(row["workers"]), float(row["rate"])))
        every = sorted({w for points in lines.values() for w, _ in points})
        axis.plot(every, [w / float(seconds) for w in every], "k--", label="ideal")
        for label, points in sorted(lines.items()):
            points.sort()
            axis.plot(*zip(*points, strict=True), marker="o", label=label)
        axis.set(xscale="log", yscale="log", xlabel="workers", ylabel="trials / s")
        axis.set_title(f"trials that sleep {seconds} s")
        axis.legend(fontsize=7)
    figure.tight_layout()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(args.out, dpi=110)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
