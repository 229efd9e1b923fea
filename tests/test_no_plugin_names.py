"""The kernel and the engine name no plugin (issue 45): no string in their code is the name a
plugin registers a component under, or the name of a plugin's distribution, and the engine
ships no recipe (recipes name plugins). The defaults live in the `automl` distribution.

Docstrings and comments may mention plugins (they explain); code that *uses* a plugin's
name would make the engine depend on a plugin it does not declare."""

from __future__ import annotations

import ast
import functools
from importlib import metadata
from pathlib import Path

import pytest

from automl_core.plugins import load_plugins

ROOT = Path(__file__).resolve().parents[1]
KERNEL_AND_ENGINE = [ROOT / "automl_core", ROOT / "plugins" / "automl-engine" / "automl_engine"]
#: The distributions the engine may name: itself, what it depends on, and `automl`, the
#: name of the whole framework that error messages point users to.
OURS = {"automl-core", "automl-engine", "automl-spaces", "automl"}
#: Strings that are a plugin's name by coincidence, and why they are not a use of it.
NOT_A_PLUGIN = {
    # the recipe keyword `resampling: auto`, and the kernel's AUTO_POLICY_SELECTOR: the
    # selector registered under that name, whichever plugin registers it
    "auto",
    # sklearn.externals.array_api_compat.dask, a module the run folder keeps from importing
    "dask",
}


def code_strings(path: Path) -> list[tuple[int, str]]:
    """The string constants of a module's code, docstrings left out: (line, text)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                docstrings.add(id(body[0].value))
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings
    ]


@functools.cache
def plugin_names() -> dict[str, str]:
    """Every name a plugin registers (a component, a recipe, a suite...) -> its
    distribution, for the plugins of other distributions than ours."""
    plugins = load_plugins()
    return {
        registration.name: registration.origin.distribution
        for registration in plugins.registry.all()
        if registration.origin.distribution not in OURS
    }


@functools.cache
def plugin_distributions() -> frozenset[str]:
    names = {dist.metadata["Name"] for dist in metadata.distributions()}
    return frozenset({name for name in names if name and name.startswith("automl-")} - OURS)


def modules() -> list[Path]:
    return sorted(p for folder in KERNEL_AND_ENGINE for p in folder.rglob("*.py"))


def test_the_check_finds_what_it_looks_for():
    """The names are there to look for (else the test below would pass vacuously)."""
    names = plugin_names()
    assert names.get("mcts") == "automl-mcts" and names.get("caruana") == "automl-ensemble"
    assert "automl-bench" in plugin_distributions()
    assert len(modules()) > 40


@pytest.mark.parametrize("module", modules(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_code_string_is_a_plugin_name(module):
    names, distributions = plugin_names(), plugin_distributions()
    found = []
    for line, text in code_strings(module):
        if text in names and text not in NOT_A_PLUGIN:
            found.append(f"line {line}: {text!r} is {names[text]}'s")
        found += [
            f"line {line}: {text!r} names the distribution {d}" for d in distributions if d in text
        ]
    assert not found, f"{module.relative_to(ROOT)} names plugins:\n  " + "\n  ".join(found)


def test_the_engine_ships_no_recipe():
    shipped = list((ROOT / "plugins" / "automl-engine").rglob("*.yaml"))
    shipped = [p for p in shipped if "build" not in p.parts]
    assert not shipped, f"the engine ships recipes, which name plugins: {shipped}"
