"""automl-bench is a distribution of its own: with it, the core has the ablate and compare
commands and the suite and system kinds; without it (its entry point not loaded), none of
them, and `automl ablate` names the distribution to install."""

from __future__ import annotations

import pytest

from automl_core import hookimpl
from automl_core.hookspecs import KINDS
from automl_core.plugins import LOAD_PLUGINS_ENV, load_plugins
from automl_engine.cli import main


def test_with_the_bench_its_kinds_and_suites_are_registered():
    plugins = load_plugins()
    assert {"suite", "system"} <= set(KINDS)
    # the specs were added to this run's manager (add_hookspecs), not only imported
    hooks = plugins.manager.hook
    assert hooks.register_suites.spec is not None and hooks.register_systems.spec is not None
    assert "keel-small" in plugins.registry.names("suite")
    origin = plugins.get("suite", "keel-small").origin
    assert origin.distribution == "automl-bench"


@pytest.mark.parametrize("command", ["ablate", "compare"])
def test_without_the_bench_its_commands_say_how_to_get_them(monkeypatch, capsys, command):
    monkeypatch.setenv(LOAD_PLUGINS_ENV, "sklearn")
    assert main([command, "--help"]) == 2
    error = capsys.readouterr().err
    assert f"'automl {command}' is not a command here" in error
    assert "the `automl` distribution installs every command" in error


def test_without_the_bench_a_plugin_with_optional_suites_still_loads(monkeypatch):
    monkeypatch.setenv(LOAD_PLUGINS_ENV, "metadata")
    plugins = load_plugins()
    assert not plugins.broken
    assert "pmf" in plugins.registry.names("benchmark")
    assert plugins.registry.names("suite") == []


def test_with_the_bench_the_same_plugin_registers_its_suites(monkeypatch):
    monkeypatch.setenv(LOAD_PLUGINS_ENV, "metadata,bench")
    assert "pmf-test" in load_plugins().registry.names("suite")


def test_a_plugin_command_is_added_and_a_clash_with_a_core_command_is_refused(capsys):
    class Commands:
        @hookimpl
        def register_commands(self, register):
            register("hello", lambda parser: parser.add_argument("who"), _hello, help="greet")
            register("run", lambda parser: None, _hello)

    plugins = load_plugins(extra=[Commands()])
    from automl_engine.cli import build_parser

    with pytest.warns(UserWarning, match=r"failed to register its commands: .*'run' exists"):
        parser = build_parser(plugins)
    args = parser.parse_args(["hello", "world"])
    assert args.handler(args) == 0
    assert capsys.readouterr().out == "hello world\n"


def test_a_plugin_starts_a_command_group_of_its_own(capsys):
    """Any two-word name starts a group (a third-party plugin's as much as automl-metadata's
    ``data``); a group named like a command is refused with a warning."""

    class Grouped:
        @hookimpl
        def register_commands(self, register):
            register("greet hello", lambda parser: parser.add_argument("who"), _hello)
            register("run twice", lambda parser: None, _hello)

    from automl_engine.cli import build_parser

    with pytest.warns(UserWarning, match=r"'run' is a command, not a group of actions"):
        parser = build_parser(load_plugins(extra=[Grouped()]))
    args = parser.parse_args(["greet", "hello", "you"])
    assert args.handler(args) == 0 and capsys.readouterr().out == "hello you\n"


def _hello(args) -> int:
    print(f"hello {args.who}")
    return 0
