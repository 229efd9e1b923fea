"""``pip install automl-core`` is the kernel alone: its wheel requires pluggy and numpy and
nothing else, holds the ``automl_core`` package and nothing of the engine, and works where
only pluggy and numpy are installed (the registry loads, random search is registered and
built, every kernel module imports)."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from email.parser import Parser
from pathlib import Path

import numpy
import pluggy
from packages import ROOT, site_packages, wheels

KERNEL_REQUIREMENTS = {"pluggy>=1.3", "numpy>=1.24"}


def kernel_wheel(folder: Path) -> Path:
    (wheel,) = wheels(folder, ROOT)
    return wheel


def test_the_kernel_wheel_requires_only_pluggy_and_numpy(tmp_path: Path) -> None:
    wheel = kernel_wheel(tmp_path)
    with zipfile.ZipFile(wheel) as archive:
        (metadata_name,) = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        metadata = Parser().parsestr(archive.read(metadata_name).decode())
        packages = {name.split("/")[0] for name in archive.namelist()}
        modules = {n for n in archive.namelist() if n.endswith(".py")}
    required = {r for r in metadata.get_all("Requires-Dist") or [] if "extra ==" not in r}
    assert required == KERNEL_REQUIREMENTS
    assert packages == {"automl_core", metadata_name.split("/")[0]}
    assert metadata["Name"] == "automl-core"
    assert modules == {f"automl_core/{path.name}" for path in (ROOT / "automl_core").glob("*.py")}


KERNEL_ONLY_SCRIPT = """
import importlib, pkgutil, sys
import automl_core
from automl_core.plugins import load_plugins

for module in pkgutil.iter_modules(automl_core.__path__):
    importlib.import_module(f"automl_core.{module.name}")
plugins = load_plugins()
strategy = plugins.create("search_strategy", "random", {})
engine_or_science = [name for name in sys.modules
                     if name.split(".")[0] in {"automl_engine", "pandas", "sklearn", "scipy",
                                               "ConfigSpace", "yaml"}]
print(type(strategy).__name__, plugins.registry.names("search_strategy"), engine_or_science)
"""


def test_the_kernel_works_where_only_pluggy_and_numpy_are_installed(tmp_path: Path) -> None:
    environment = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", environment], check=True)
    python = environment / "bin" / "python"
    site = site_packages(python)
    with zipfile.ZipFile(kernel_wheel(tmp_path / "wheel")) as archive:
        archive.extractall(site)  # a pure-Python wheel installed is its files
    for module in (pluggy, numpy):  # the two dependencies, as installed here
        folder = Path(module.__file__).parent
        for installed in folder.parent.glob(f"{folder.name}*"):  # with dist-info and .libs
            (site / installed.name).symlink_to(installed)
    done = subprocess.run(
        [python, "-c", KERNEL_ONLY_SCRIPT], cwd=tmp_path, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "RandomSearch ['random'] []"
