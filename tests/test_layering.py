"""The dependency direction, checked by import-linter against pyproject.toml's contracts:
the kernel imports only the standard library, pluggy and numpy, the kernel and the engine
import no plugin, no plugin imports another (automl-metadata, a data distribution, excepted),
and the kernel's and the engine's modules import each other without cycles."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_the_import_contracts_are_kept():
    linter = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    if linter is None:
        pytest.skip("import-linter is not installed (it is in the dev extra)")
    done = subprocess.run(
        [linter, "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=240
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "0 broken" in done.stdout


def test_the_kernel_fits_its_budget_and_the_architecture_page_says_its_size():
    """The kernel (what a plugin author reads) stays within 2,500 lines, docstrings included
    (issue 45's budget, which leaves room for what moves into it), and docs/architecture.md
    states its current size (`wc -l`)."""
    lines = sum(len(path.read_text().splitlines()) for path in (ROOT / "automl_core").glob("*.py"))
    assert lines <= 2500
    assert f"{lines:,} lines with `__init__.py`" in (ROOT / "docs" / "architecture.md").read_text()
