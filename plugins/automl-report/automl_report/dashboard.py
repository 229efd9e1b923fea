"""``automl dashboard``: the run's page served on the loopback address while the run writes.

The history is the only source and is only read (opened read-only); the page is drawn into
a temporary folder, never into the run folder. A request for the page finds it drawn again
when the history changed since the last drawing (the size and modification time of the
history, of its write-ahead log and of the summary:
:func:`~automl_report.reading.history_stamp`); a request for a figure never draws, so a page
costs one drawing at most, however fast the run writes. The page reloads itself every few
seconds (a meta refresh: no script).
"""

from __future__ import annotations

import shutil
import signal
import sys
import tempfile
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from automl_engine.history import RunHistory
from automl_report.reading import history_path, history_stamp
from automl_report.render import PAGE_FILE, render_report

#: The only addresses the dashboard listens on: a run's history (its configurations,
#: errors and tracebacks) is not for the network.
LOOPBACK = ("127.0.0.1", "::1", "localhost")
CONTENT_TYPES = {".html": "text/html; charset=utf-8", ".png": "image/png"}


class LivePage:
    """The page of one run folder, drawn again when its history changed."""

    def __init__(self, run_dir: Path, refresh_seconds: int = 5) -> None:
        # a folder without a history, or with one that holds no run, is refused before
        # serving (not answered with HTTP 500 at each request)
        RunHistory(history_path(run_dir), read_only=True).close()
        self.run_dir = Path(run_dir)
        self.refresh_seconds = refresh_seconds
        self.root = Path(tempfile.mkdtemp(prefix="automl-dashboard-"))
        self.current: Path | None = None
        self.stamp: tuple[int, ...] | None = None
        self.drawings = 0
        self._lock = threading.Lock()

    def folder(self, redraw: bool = True) -> Path:
        """The folder of the latest drawing; with ``redraw``, drawn again first when the
        history changed since (figures are asked with ``redraw=False``: they belong to the
        page already sent)."""
        with self._lock:
            stamp = history_stamp(self.run_dir)
            if self.current is None or (redraw and stamp != self.stamp):
                self._draw(stamp)
            assert self.current is not None
            return self.current

    def _draw(self, stamp: tuple[int, ...]) -> None:
        self.drawings += 1
        folder = self.root / f"page-{self.drawings}"
        render_report(self.run_dir, folder, live=True, refresh_seconds=self.refresh_seconds)
        previous, self.current = self.current, folder
        self.stamp = stamp
        if previous is not None:  # the one before stays for a browser still loading it
            older = self.root / f"page-{self.drawings - 2}"
            shutil.rmtree(older, ignore_errors=True)

    def close(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def loopback_host(header: str | None) -> bool:
    """Whether a request's ``Host`` header names the loopback (``127.0.0.1``, ``localhost``,
    ``[::1]``, with any port). A page on another host name that resolves to 127.0.0.1
    (DNS rebinding) would otherwise read the run's history through the visitor's browser."""
    if not header:
        return False
    host = header.strip().lower()
    if host.startswith("["):  # [::1]:8050
        host = host[1 : host.find("]")] if "]" in host else ""
    else:
        host = host.rsplit(":", 1)[0] if host.count(":") == 1 else host
    return host in LOOPBACK


def make_server(live: LivePage, host: str = "127.0.0.1", port: int = 8050) -> ThreadingHTTPServer:
    """A threading HTTP server for ``live`` on a loopback address (any other is refused)."""
    if host not in LOOPBACK:
        raise ValueError(f"the dashboard listens only on a loopback address, not {host!r}")

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # http.server's name
            if not loopback_host(self.headers.get("Host")):
                self.send_error(HTTPStatus.MISDIRECTED_REQUEST, "not a loopback Host")
                return
            name = self.path.split("?", 1)[0].lstrip("/") or PAGE_FILE
            suffix = Path(name).suffix
            if "/" in name or suffix not in CONTENT_TYPES:
                self.send_error(HTTPStatus.NOT_FOUND)
                return
            try:
                body = (live.folder(redraw=name == PAGE_FILE) / name).read_bytes()
            except FileNotFoundError:
                self.send_error(HTTPStatus.NOT_FOUND)
                return
            except Exception as error:  # a damaged history: say it on the page
                self.send_error(HTTPStatus.INTERNAL_SERVER_ERROR, str(error)[:200])
                return
            self.send_response(HTTPStatus.OK)
            self.send_header("Content-Type", CONTENT_TYPES[suffix])
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass  # one line per image request would drown the terminal

    server_class = ThreadingHTTPServer
    if ":" in host:
        import socket

        class IPv6Server(ThreadingHTTPServer):
            address_family = socket.AF_INET6

        server_class = IPv6Server
    return server_class((host, port), Handler)


def serve(
    run_dir: Path, port: int = 8050, host: str = "127.0.0.1", refresh_seconds: int = 5
) -> None:
    """Serve the page until interrupted (Ctrl-C)."""
    live = LivePage(run_dir, refresh_seconds)
    server = make_server(live, host, port)
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _interrupt)  # `kill` cleans up as Ctrl-C does
    address = server.server_address
    shown = f"[{address[0]}]" if ":" in str(address[0]) else address[0]
    print(f"serving {run_dir} on http://{shown}:{address[1]}/ (Ctrl-C to stop)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print("stopped", file=sys.stderr)
    finally:
        server.server_close()
        live.close()


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt
