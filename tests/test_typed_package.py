"""A plugin project's own mypy sees the core's types: the core's wheel ships ``py.typed``
(PEP 561), without which mypy treats an installed ``automl_core`` as untyped ("missing
library stubs or py.typed marker") and checks nothing a plugin does with it."""

from __future__ import annotations

import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

from packages import ROOT, site_packages, wheels

PLUGIN = """
from automl_core.space import BuildContext


def seed_plus_text() -> int:
    return BuildContext(task="classification").seed + "x"
"""


def test_mypy_in_a_plugin_project_checks_its_use_of_the_installed_core(tmp_path: Path) -> None:
    (wheel,) = wheels(tmp_path / "wheel", ROOT)
    environment = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", environment], check=True)
    python = environment / "bin" / "python"
    site = site_packages(python)
    with zipfile.ZipFile(wheel) as archive:  # a pure-Python wheel installed is its files
        archive.extractall(site)
    project = tmp_path / "plugin"
    project.mkdir()
    (project / "my_plugin.py").write_text(PLUGIN)
    mypy = Path(sysconfig.get_path("scripts")) / "mypy"
    checked = subprocess.run(
        [mypy, "--python-executable", python, "--no-incremental", "my_plugin.py"],
        cwd=project,
        capture_output=True,
        text=True,
    )
    assert 'Unsupported operand types for + ("int" and "str")' in checked.stdout, checked.stdout
    assert "py.typed" not in checked.stdout
