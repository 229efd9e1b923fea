"""Lazy registration: a plugin names its factory by import path, and nothing heavy is imported
until a recipe builds it (``automl plugins`` and ``automl validate`` import no torch)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from automl_core import hookimpl, lazy
from automl_core.errors import PluginError
from automl_core.lazy import LazyFactory, lazy_attributes
from automl_core.plugins import load_plugins

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def heavy_module(tmp_path, monkeypatch):
    """A module ``heavy_surrogate`` on the path, not imported yet."""
    (tmp_path / "heavy_surrogate.py").write_text(
        textwrap.dedent(
            '''
            class Forest:
                """A forest."""

                races_budgets = True

                def __init__(self, trees: int = 10, depth: int = 3) -> None:
                    self.trees, self.depth = trees, depth
            '''
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "heavy_surrogate", raising=False)
    yield "heavy_surrogate"
    sys.modules.pop("heavy_surrogate", None)


class LazyPlugin:
    @hookimpl
    def register_surrogates(self, register):
        register("forest", lazy("heavy_surrogate:Forest"), description="a lazy forest")


def test_loading_and_listing_import_nothing_building_imports_once(heavy_module):
    plugins = load_plugins(extra=[LazyPlugin()], entry_points=False)
    registration = plugins.get("surrogate", "forest")
    assert registration.description == "a lazy forest"
    assert "parameters" not in registration.as_dict(parameters=False)
    assert heavy_module not in sys.modules
    forest = plugins.create("surrogate", "forest", {"trees": 5})
    assert heavy_module in sys.modules and (forest.trees, forest.depth) == (5, 3)
    assert registration.obj.is_loaded


def test_parameters_and_class_attributes_come_from_the_factory(heavy_module):
    plugins = load_plugins(extra=[LazyPlugin()], entry_points=False)
    registration = plugins.get("surrogate", "forest")
    assert registration.parameters() == {"trees": 10, "depth": 3}
    assert registration.obj.races_budgets is True
    with pytest.raises(PluginError, match=r"Its parameters: trees, depth"):
        plugins.create("surrogate", "forest", {"leaves": 2})


def test_a_factory_that_cannot_be_imported_is_named_when_used():
    factory = lazy("no_such_package.module:Thing")
    with pytest.raises(PluginError, match=r"cannot import .*no_such_package.module:Thing"):
        factory()
    with pytest.raises(PluginError, match=r"is not callable"):
        LazyFactory("math:pi")()
    with pytest.raises(PluginError, match=r"expected 'package.module:attribute'"):
        lazy("no_colon")


def test_lazy_package_attributes(heavy_module):
    module_getattr = lazy_attributes({"Forest": heavy_module})
    assert heavy_module not in sys.modules
    assert module_getattr("Forest")().trees == 10
    with pytest.raises(AttributeError, match="Tree"):
        module_getattr("Tree")


@pytest.mark.parametrize(
    "command", [["plugins"], ["validate", str(ROOT / "examples/recipes/quickstart.yaml")]]
)
def test_the_cli_imports_no_torch_for_a_recipe_without_torch_components(command):
    """With every installed plugin (the GP surrogate among them), listing plugins and
    validating the quickstart recipe import neither torch nor gpytorch, SMAC3 nor Dask."""
    code = textwrap.dedent(
        f"""
        import contextlib, io, sys
        from automl_engine.cli import main
        sys.argv = ["automl", *{command!r}]
        with contextlib.redirect_stdout(io.StringIO()):
            status = main()
        heavy = [m for m in ("torch", "gpytorch", "smac", "distributed") if m in sys.modules]
        print(status, heavy)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=240, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().splitlines()[-1] == "0 []"
