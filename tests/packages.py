"""What the packaging tests share: running a command, and building wheels of this
repository's projects (no dependencies, as a package index would hold them)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def sh(*args: object, cwd: Path | None = None, env: Mapping[str, str] | None = None) -> str:
    """Run a command (in ``env``, default this process's environment); its stdout, or a
    failed assertion with both of its outputs."""
    done = subprocess.run(
        [str(a) for a in args], cwd=cwd, capture_output=True, text=True, timeout=900,
        env=None if env is None else dict(env),
    )  # fmt: skip
    assert done.returncode == 0, f"{args} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def with_a_package_index() -> dict[str, str]:
    """This process's environment without the test session's ``PIP_NO_INDEX`` (the root
    conftest): for a pip pointed at a test's own local index."""
    return {key: value for key, value in os.environ.items() if key != "PIP_NO_INDEX"}


def site_packages(python: Path) -> Path:
    """Where ``python`` (another environment's interpreter) installs pure-Python packages."""
    code = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    return Path(sh(python, "-c", code).strip())


def wheels(out: Path, *projects: Path) -> list[Path]:
    """Wheels of ``projects`` (folders with a pyproject.toml), built into ``out`` by this
    environment's setuptools (no isolated build environment: that would download one)."""
    sh(
        sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
        "-w", out, *projects,
    )  # fmt: skip
    return sorted(out.glob("*.whl"))


def hillclimb_recipe(folder: Path, trials: int, search: str = "hillclimb") -> Path:
    """A recipe file in ``folder`` running the template plugin's strategy (``search``: its
    name, or a mapping with its params, in YAML) on iris, over two cheap classifiers."""
    recipe = folder / "recipe.yaml"
    recipe.write_text(
        "name: hill\n"
        "task: {dataset: 'sklearn:iris', metric: accuracy}\n"
        "space: {name: autosklearn-classification,\n"
        "        params: {include: {classifier: [decision_tree, lda]}}}\n"
        f"search: {search}\n"
        f"budget: {{trials: {trials}}}\n"
    )
    return recipe
