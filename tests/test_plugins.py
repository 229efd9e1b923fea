"""The plugin manager and registries: built-ins, duplicates, broken plugins, the env filter."""

from __future__ import annotations

import sys
import types

import pytest

from automl_core import __version__, hookimpl
from automl_core.errors import PluginError, UnknownComponentError
from automl_core.plugins import (
    API_DECLARATION,
    DEFAULTS_ENTRY_POINT_GROUP,
    LOAD_PLUGINS_ENV,
    PLUGIN_API,
    load_plugins,
)


class StrategyPlugin:
    """Registers one strategy under a given name, as if from a given distribution."""

    def __init__(self, name: str, distribution: str) -> None:
        self.strategy_name = name
        self.distribution = distribution
        self.__name__ = f"{distribution}-plugin"

    @hookimpl
    def register_search_strategies(self, register):
        register(self.strategy_name, lambda: None, description=f"from {self.distribution}")


def test_builtins_are_registered_as_plugins():
    plugins = load_plugins(entry_points=False)
    assert plugins.registry.names("search_strategy") == ["random"]
    assert plugins.registry.names("executor") == ["processes", "sequential"]
    assert {"sklearn", "csv", "keel"} <= set(plugins.registry.names("dataset_source"))
    random = plugins.get("search_strategy", "random")
    assert random.origin.distribution == "automl-core"
    assert random.parameters() == {"include_default": False, "max_retries": 200}


def test_duplicate_name_is_an_error_naming_both_distributions():
    plugins = load_plugins(
        extra=[StrategyPlugin("tpe", "dist-one"), StrategyPlugin("tpe", "dist-two")],
        entry_points=False,
    )
    with pytest.raises(PluginError, match=r"'tpe' is registered by more than one plugin") as info:
        plugins.get("search_strategy", "tpe")
    assert "dist-one" in str(info.value) and "dist-two" in str(info.value)
    assert "tpe" in plugins.registry.names("search_strategy")  # still listed, as a conflict


def test_a_plugin_may_not_reuse_a_builtin_name():
    plugins = load_plugins(extra=[StrategyPlugin("random", "impostor")], entry_points=False)
    with pytest.raises(PluginError, match="more than one plugin") as info:
        plugins.get("search_strategy", "random")
    assert "automl-core" in str(info.value) and "impostor" in str(info.value)


def test_unknown_name_lists_the_closest_registered_names():
    plugins = load_plugins(entry_points=False)
    with pytest.raises(UnknownComponentError, match=r"did you mean 'random'") as info:
        plugins.get("search_strategy", "randon")
    assert info.value.known == ["random"]


def test_a_plugin_whose_registration_raises_is_reported_and_others_load():
    class Broken:
        __name__ = "broken-plugin"

        @hookimpl
        def register_surrogates(self, register):
            register("good-looking", lambda: None)
            raise RuntimeError("cannot find my model file")

    plugins = load_plugins(extra=[Broken(), StrategyPlugin("fine", "ok-dist")], entry_points=False)
    assert [b.name for b in plugins.broken] == ["broken-plugin"]
    assert "cannot find my model file" in plugins.broken[0].error
    assert "good-looking" not in plugins.registry.names("surrogate")  # nothing half-registered
    assert "fine" in plugins.registry.names("search_strategy")


def test_registering_a_non_callable_is_reported():
    class Sloppy:
        __name__ = "sloppy"

        @hookimpl
        def register_surrogates(self, register):
            register("not-a-factory", 42)

    plugins = load_plugins(extra=[Sloppy()], entry_points=False)
    assert "must be callable" in plugins.broken[0].error


def test_misspelled_hook_fails_loudly():
    class Misspelled:
        __name__ = "misspelled"

        @hookimpl
        def register_surrogate(self, register):  # missing "s"
            pass

    with pytest.raises(
        PluginError,
        match=r"plugin 'misspelled' implements hooks that no plugin declares: "
        r"'register_surrogate' \(did you mean 'register_surrogates'\?\)",
    ):
        load_plugins(extra=[Misspelled()], entry_points=False)


def test_an_installed_plugin_with_a_misspelled_hook_is_broken_and_the_others_load(
    monkeypatch,
):
    """One third-party plugin's typo must not stop every command: it is listed as broken,
    with the hook it meant, and the other installed plugins load."""
    typo = "@hookimpl\ndef register_warmstarter(register):\n    register('never', lambda: None)\n"
    install_fake_plugins(
        monkeypatch, ("good", "automl-fake-good", GOOD), ("typo", "automl-fake-typo", typo)
    )
    monkeypatch.delenv(LOAD_PLUGINS_ENV, raising=False)
    plugins = load_plugins()
    assert plugins.get("surrogate", "fake-rf").origin.distribution == "automl-fake-good"
    (broken,) = plugins.broken
    assert (broken.name, broken.distribution) == ("typo", "automl-fake-typo")
    assert "'register_warmstarter' (did you mean 'register_warmstarters'?)" in broken.error
    assert "typo" not in plugins.origins


class FakeDistribution:
    def __init__(self, name: str) -> None:
        self.metadata = {"Name": name}
        self.version = "9.9"


class FakeEntryPoint:
    def __init__(self, name: str, module: str, dist: str) -> None:
        self.name = name
        self.value = module
        self.dist = FakeDistribution(dist)

    def load(self):
        import importlib

        return importlib.import_module(self.value)


#: An installed plugin's module that registers a surrogate.
GOOD = "@hookimpl\ndef register_surrogates(register):\n    register('fake-rf', lambda: None)\n"


def install_fake_plugins(monkeypatch, *plugins: tuple[str, str, str | None]) -> None:
    """Installed plugins as entry points: ``(name, distribution, module code)``, the code
    after ``from automl_core import hookimpl``; None for a module that fails to import."""
    points = []
    for name, distribution, code in plugins:
        module_name = f"fake_{name}_plugin" if code is not None else "fake_missing_module_xyz"
        if code is not None:
            module = types.ModuleType(module_name)
            exec("from automl_core import hookimpl\n" + code, module.__dict__)
            monkeypatch.setitem(sys.modules, module_name, module)
        points.append(FakeEntryPoint(name, module_name, distribution))
    monkeypatch.setattr(
        "automl_core.plugins.metadata.entry_points",
        lambda group: points if group == "automl_core" else [],
    )


@pytest.fixture
def fake_entry_points(monkeypatch):
    """Two installed plugins as entry points: one imports fine, one raises on import."""
    install_fake_plugins(
        monkeypatch, ("good", "automl-fake-good", GOOD), ("bad", "automl-fake-bad", None)
    )


def test_entry_point_that_fails_to_import_is_reported(fake_entry_points, monkeypatch):
    monkeypatch.delenv(LOAD_PLUGINS_ENV, raising=False)
    plugins = load_plugins()
    assert plugins.get("surrogate", "fake-rf").origin.distribution == "automl-fake-good"
    assert plugins.get("surrogate", "fake-rf").origin.version == "9.9"
    (broken,) = plugins.broken
    assert broken.name == "bad" and broken.distribution == "automl-fake-bad"
    assert "fake_missing_module_xyz" in broken.error


def test_a_plugin_of_another_plugin_api_is_refused_and_named(monkeypatch):
    """A plugin declaring only an API this core does not provide is listed as broken with
    the API it needs and the core's; one declaring this API (or a tuple with it) loads."""
    modules = {}
    cases = [("future", "2"), ("current", "(1, 2)"), ("plain", "None"), ("text", "'1'")]
    for name, declared in cases:
        module = types.ModuleType(f"fake_{name}_plugin")
        exec(
            f"from automl_core import hookimpl\nAUTOML_PLUGIN_API = {declared}\n"
            "@hookimpl\ndef register_surrogates(register):\n"
            f"    register('{name}-surrogate', lambda: None)\n",
            module.__dict__,
        )
        monkeypatch.setitem(sys.modules, module.__name__, module)
        modules[name] = FakeEntryPoint(name, module.__name__, f"automl-{name}")
    monkeypatch.setattr(
        "automl_core.plugins.metadata.entry_points",
        lambda group: list(modules.values()) if group == "automl_core" else [],
    )
    monkeypatch.delenv(LOAD_PLUGINS_ENV, raising=False)
    plugins = load_plugins()
    assert plugins.registry.names("surrogate") == ["current-surrogate", "plain-surrogate"]
    future, text = sorted(plugins.broken, key=lambda b: b.name)
    assert future.name == "future" and future.distribution == "automl-future"
    assert f"needs plugin API 2; automl-core {__version__} provides plugin API 1" in future.error
    assert "declares AUTOML_PLUGIN_API = '1': expected an integer" in text.error


def test_env_var_restricts_which_plugins_load(fake_entry_points, monkeypatch):
    monkeypatch.setenv(LOAD_PLUGINS_ENV, "automl-fake-good")  # by distribution name
    plugins = load_plugins()
    assert plugins.registry.names("surrogate") == ["fake-rf"]
    assert plugins.broken == []  # "bad" was never imported
    monkeypatch.setenv(LOAD_PLUGINS_ENV, "")
    plugins = load_plugins()
    assert plugins.registry.names("surrogate") == []
    assert plugins.registry.names("search_strategy") == ["random"]  # built-ins always load


def install_fake_defaults(monkeypatch, module_name: str) -> None:
    """One installed distribution's default plugin (entry-point group
    ``automl_core.defaults``), and no other entry point."""
    point = FakeEntryPoint(module_name, module_name, "automl-fake-engine")
    monkeypatch.setattr(
        "automl_core.plugins.metadata.entry_points",
        lambda group: [point] if group == DEFAULTS_ENTRY_POINT_GROUP else [],
    )


def test_an_installed_distributions_defaults_load_whatever_the_filter_says(monkeypatch):
    """The engine's executors, sources and recipes come through ``automl_core.defaults``:
    loaded with the kernel's random search, also with the other entry points off or
    filtered out, and from the distribution that declares them."""
    module = types.ModuleType("fake_engine_defaults")
    exec("from automl_core import hookimpl\n" + GOOD, module.__dict__)
    monkeypatch.setitem(sys.modules, module.__name__, module)
    install_fake_defaults(monkeypatch, module.__name__)
    monkeypatch.setenv(LOAD_PLUGINS_ENV, "")
    for entry_points in (True, False):
        plugins = load_plugins(entry_points=entry_points)
        assert plugins.registry.names("surrogate") == ["fake-rf"]
        assert plugins.get("surrogate", "fake-rf").origin.distribution == "automl-fake-engine"
    assert load_plugins(defaults=False).registry.names("surrogate") == []


def test_a_default_plugin_that_cannot_be_imported_is_an_error_naming_its_distribution(
    monkeypatch,
):
    """Not a broken plugin quietly listed: without its defaults the installation cannot
    run a recipe, so loading stops and says which distribution to reinstall."""
    install_fake_defaults(monkeypatch, "fake_missing_engine_module_xyz")
    with pytest.raises(
        PluginError,
        match=r"automl-fake-engine 9\.9 cannot be imported .*"
        r"fake_missing_engine_module_xyz.*reinstall automl-fake-engine",
    ):
        load_plugins()


def test_create_reports_bad_parameters_with_the_allowed_ones(plugins):
    with pytest.raises(PluginError, match=r"include_default, max_retries"):
        plugins.create("search_strategy", "random", {"nonsense": 1})


def test_create_reports_a_refused_parameter_value_as_a_plugin_error():
    """A component's own check of a value (a ValueError) reaches the user as a clear error
    naming the component, not a traceback."""

    def picky(k: int = 1) -> object:
        if k < 1:
            raise ValueError(f"k: got {k}, expected an integer >= 1")
        return object()

    class PickyPlugin:
        @hookimpl
        def register_warmstarters(self, register):
            register("picky", picky)

    plugins = load_plugins(extra=[PickyPlugin()], entry_points=False)
    with pytest.raises(PluginError, match=r"cannot build warmstarter 'picky'.*k: got 0"):
        plugins.create("warmstarter", "picky", {"k": 0})


def test_a_factory_asking_for_the_registry_gets_the_one_that_builds_it():
    """A component that builds others (a provider wrapping another, a source joining two)
    builds them from the registry that built it, so it sees what the run sees (plugins
    registered in the process too); a recipe can neither see nor set that parameter."""

    class Wrapping:
        def __init__(self, inner: str = "inner", *, registry) -> None:
            self.inner = registry.create("warmstarter", inner, {})

    class Inner:
        pass

    class InProcess:
        @hookimpl
        def register_warmstarters(self, register):
            register("wrapping", Wrapping)
            register("inner", Inner)

    plugins = load_plugins(extra=[InProcess()], entry_points=False)
    assert isinstance(plugins.create("warmstarter", "wrapping", {}).inner, Inner)
    assert plugins.get("warmstarter", "wrapping").parameters() == {"inner": "inner"}
    with pytest.raises(PluginError, match="'registry' is given by the core"):
        plugins.create("warmstarter", "wrapping", {"registry": None})


def test_every_plugin_of_this_repository_declares_the_plugin_api(monkeypatch):
    """So that the day the API changes, a plugin not updated with it is refused by name
    rather than failing inside a run."""
    monkeypatch.delenv(LOAD_PLUGINS_ENV, raising=False)
    plugins = load_plugins()
    modules = {
        name: plugins.manager.get_plugin(name)
        for name, origin in plugins.origins.items()
        if origin.distribution.startswith("automl-") and origin.distribution != "automl-core"
    }
    assert len(modules) >= 20
    undeclared = [n for n, m in modules.items() if getattr(m, API_DECLARATION, None) != PLUGIN_API]
    assert undeclared == []


def test_the_developers_plugin_filter_does_not_reach_the_tests():
    """A developer's ``AUTOML_LOAD_PLUGINS`` (trying one plugin alone) left set in the shell
    must not change what the tests load: the repository's conftest unsets it. Here a test
    that needs the installed plugins (validating the quickstart, which names automl-sklearn's
    space) runs with the filter set to load none of them."""
    import os
    import subprocess
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    needs_plugins = "tests/test_examples.py::test_an_example_recipe_validates[quickstart]"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", needs_plugins],
        env={**os.environ, LOAD_PLUGINS_ENV: "no-such-plugin"},
        capture_output=True,
        text=True,
        cwd=root,
    )
    assert done.returncode == 0, done.stdout[-2000:]
