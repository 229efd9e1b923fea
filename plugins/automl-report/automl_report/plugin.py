"""The module named by the ``automl_core`` entry point ``report``: it only registers the
``report`` and ``dashboard`` commands (matplotlib and scikit-learn are imported when a page is
first drawn, so that ``automl`` starts as fast without it)."""

from __future__ import annotations

from automl_core import hookimpl
from automl_core.hookspecs import RegisterCommand

#: The automl-core plugin API this plugin is written for (automl_core.plugins.PLUGIN_API).
AUTOML_PLUGIN_API = 1


@hookimpl
def register_commands(register: RegisterCommand) -> None:
    from automl_report import commands

    register("report", commands.configure_report, commands.cmd_report, help=commands.REPORT_HELP)
    register(
        "dashboard",
        commands.configure_dashboard,
        commands.cmd_dashboard,
        help=commands.DASHBOARD_HELP,
    )
