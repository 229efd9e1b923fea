"""``automl report RUN_DIR`` and ``automl dashboard RUN_DIR``."""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

REPORT_HELP = "write a run's report: one HTML page and its figures (default RUN_DIR/report/)"
DASHBOARD_HELP = "serve a run's report on 127.0.0.1, drawn again while the run writes"


def configure_report(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_dir", type=Path, help="a run folder (holding history.sqlite)")
    parser.add_argument(
        "--out", type=Path, help="folder for index.html and its PNGs (default RUN_DIR/report)"
    )
    parser.add_argument("--quiet", action="store_true", help="print nothing")


def cmd_report(args: argparse.Namespace) -> int:
    from automl_report.render import render_report

    began = time.perf_counter()
    out = args.out if args.out is not None else args.run_dir / "report"
    if args.out is None and args.run_dir.is_dir() and not os.access(args.run_dir, os.W_OK):
        from automl_core.errors import AutoMLError

        raise AutoMLError(
            f"{args.run_dir} is read-only, and the report is written into it by default: "
            "write it elsewhere with --out FOLDER (the run is only read)"
        )
    path = render_report(args.run_dir, out)
    if not args.quiet:
        print(f"report: {path} ({time.perf_counter() - began:.1f}s)")
    return 0


def configure_dashboard(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_dir", type=Path, help="a run folder, running or finished")
    parser.add_argument(
        "--port", type=int, default=8050, help="port on 127.0.0.1 (default 8050; 0: any free)"
    )
    parser.add_argument(
        "--host",
        default="127.0.0.1",
        choices=("127.0.0.1", "::1", "localhost"),
        help="loopback address to listen on (only loopback addresses are offered)",
    )
    parser.add_argument(
        "--refresh", type=int, default=5, help="seconds between the page's reloads (default 5)"
    )


def cmd_dashboard(args: argparse.Namespace) -> int:
    from automl_report.dashboard import serve

    serve(args.run_dir, port=args.port, host=args.host, refresh_seconds=max(1, args.refresh))
    return 0
