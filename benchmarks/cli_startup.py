"""How long ``automl plugins`` and ``automl validate`` take to start, and what they import.

Runs each command ``--repeats`` times in a fresh process and prints the median wall time,
then the heaviest imports of one run (``python -X importtime``, cumulative) and whether
torch, gpytorch, SMAC3 or Dask were imported. ``--tree DIR`` runs another checkout of this
repository instead (its core and plugins put first on ``PYTHONPATH``, the installed entry
points kept), so that two commits compare on the same machine in the same minutes:

    python benchmarks/cli_startup.py --repeats 5
    git worktree add /tmp/before <commit>
    python benchmarks/cli_startup.py --repeats 5 --tree /tmp/before
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("torch", "gpytorch", "smac", "distributed", "optuna", "flaml", "scipy.stats")
PROBE = """
import contextlib, io, sys
from automl_engine.cli import main
sys.argv = ["automl", *{argv!r}]
with contextlib.redirect_stdout(io.StringIO()):
    main()
print("heavy:", [m for m in {heavy!r} if m in sys.modules])
"""


def environment(tree: Path | None) -> dict[str, str]:
    env = dict(os.environ)
    if tree is not None:
        packages = [tree, *sorted((tree / "plugins").glob("*")), *sorted(tree.glob("contrib/*"))]
        env["PYTHONPATH"] = os.pathsep.join(str(p) for p in packages if p.is_dir())
    return env


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, str]:
    code = PROBE.format(argv=argv, heavy=HEAVY)
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd="/"
    )
    took = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"automl {' '.join(argv)} failed:\n{done.stderr[-2000:]}")
    return took, done.stdout.strip().splitlines()[-1]


def heaviest_imports(argv: list[str], env: dict[str, str], top: int) -> list[tuple[int, str]]:
    code = PROBE.format(argv=argv, heavy=HEAVY)
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code],
        capture_output=True,
        text=True,
        env=env,
        cwd="/",
    )
    rows = []
    for line in done.stderr.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and parts[1].strip().isdigit() and not parts[2].startswith("   "):
            rows.append((int(parts[1]), parts[2].strip()))  # top-level imports only
    return sorted(rows, reverse=True)[:top]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--tree", type=Path, help="another checkout to time instead")
    parser.add_argument("--top", type=int, default=8, help="heaviest imports listed")
    args = parser.parse_args()
    env = environment(args.tree)
    recipe = str(ROOT / "examples" / "recipes" / "quickstart.yaml")
    commands = [["plugins"], ["validate", recipe]]
    print(f"# {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    print(f"# tree: {args.tree or ROOT}; {args.repeats} runs each\n")
    print("| command | median s | min s | max s | heavy modules imported |")
    print("|---|---|---|---|---|")
    for argv in commands:
        results = [timed(argv, env) for _ in range(args.repeats)]
        seconds = [took for took, _ in results]
        shown = "automl " + " ".join(a if a != recipe else "quickstart.yaml" for a in argv)
        print(
            f"| {shown} | {statistics.median(seconds):.2f} | {min(seconds):.2f} | "
            f"{max(seconds):.2f} | {results[-1][1].removeprefix('heavy: ')} |"
        )
    print("\nheaviest top-level imports of `automl plugins` (cumulative ms):")
    for micros, module in heaviest_imports(["plugins"], env, args.top):
        print(f"  {micros / 1000:8.0f}  {module}")


if __name__ == "__main__":
    main()
