"""``hloviz show --open``: the report served on this machine, its detail drawn when opened.

:func:`hloviz.api.show` writes the report with its explorer's first picture; what opens from it
(a layer, a block, a fusion) is drawn by the result's
:class:`~hloviz.render.page.explorer.on_demand.OnDemand` when the page asks. This module is the
one way the page asks: a small HTTP server bound to ``127.0.0.1`` on a free port, under a random
path only this run knows (another user of the machine, or a web page in the browser, cannot
guess it), answering

* ``/<token>/<file>`` — the report folder's files ``show`` wrote (nothing else of the folder);
  ``report.html`` with its Content-Security-Policy opened to this server only (``connect-src
  'self'``) and a ``<meta name="hloviz-server">`` that tells the page it is served (the file on
  disk stays as written: it forbids every fetch);
* ``/<token>/view?key=K`` — view ``K`` drawn (JSON, :meth:`OnDemand.view`), 404 for a key the
  page was never offered, 422 when Graphviz found no layout in time.

Requests are answered one at a time, in the thread that serves (the pictures share each
module's trees and the running ``dot`` processes, :mod:`hloviz.render.reuse`).
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import parse_qs, unquote, urlsplit

if TYPE_CHECKING:
    from http.server import BaseHTTPRequestHandler

    from ..render.page.explorer.on_demand import OnDemand
    from .report import ShowResult

__all__ = ["ReportServer", "serve_report"]

#: What tells the served page that it may ask for views (the file on disk never has it).
SERVED_MARK = '<meta name="hloviz-server" content="on-demand">'


class ReportServer:
    """The report folder ``files`` (name → path) served at :attr:`url`, views drawn by ``on_demand``."""

    def __init__(self, files: Mapping[str, Path], on_demand: OnDemand | None, *, port: int = 0) -> None:
        from http.server import HTTPServer  # on first use: every other command starts without it

        self.files = {name: Path(path) for name, path in files.items()}
        self.on_demand = on_demand
        self.token = secrets.token_urlsafe(16)
        self.drawn = 0
        self._http = HTTPServer(("127.0.0.1", port), _handler(self))

    @property
    def url(self) -> str:
        """The report's address (the folder's other files lie beside it)."""
        return f"http://127.0.0.1:{self._http.server_address[1]}/{self.token}/report.html"

    def serve_forever(self) -> None:
        """Answer requests until :meth:`shutdown` (from another thread) or Ctrl-C."""
        from ..render.layout.runs.dotserver import dot_servers
        from ..render.reuse import drawings_reused

        with drawings_reused(), dot_servers():
            self._http.serve_forever(poll_interval=0.2)

    def shutdown(self) -> None:
        self._http.shutdown()

    def close(self) -> None:
        self._http.server_close()

    def answer(self, path: str) -> tuple[int, str, bytes]:
        """The status, content type and body for a GET of ``path``."""
        parts = urlsplit(path)
        prefix = f"/{self.token}/"
        if not parts.path.startswith(prefix):
            return 404, "text/plain", b"not found"
        name = unquote(parts.path[len(prefix):])
        if name == "view":
            return self._view(parse_qs(parts.query).get("key", [""])[0])
        if name not in self.files:
            return 404, "text/plain", b"not found"
        data = self.files[name].read_bytes()
        if name == "report.html":
            return 200, "text/html; charset=utf-8", served_page(data.decode("utf-8")).encode("utf-8")
        kind = "image/svg+xml" if name.endswith(".svg") else "text/plain; charset=utf-8"
        return 200, kind, data

    def _view(self, key: str) -> tuple[int, str, bytes]:
        if self.on_demand is None:
            return 404, "application/json", b'{"error": "this report draws no view on demand"}'
        try:
            got = self.on_demand.view(key)
        except Exception as err:  # noqa: BLE001 - one picture failing must not stop the server
            return 500, "application/json", json.dumps({"error": f"could not draw {key}: {err}"}).encode("utf-8")
        if got is None:
            known = self.on_demand.offered(key)
            why = (f"Graphviz found no layout for {key} in time" if known
                   else f"{key} is not a view this report offers")
            return (422 if known else 404), "application/json", json.dumps({"error": why}).encode("utf-8")
        self.drawn += 1
        return 200, "application/json", json.dumps(got, separators=(",", ":")).encode("utf-8")


def served_page(html: str) -> str:
    """``report.html`` as this server sends it: allowed to fetch from the server, and told so."""
    return html.replace("default-src 'none'", "default-src 'none'; connect-src 'self'", 1).replace(
        '<meta charset="utf-8">', f'<meta charset="utf-8">\n{SERVED_MARK}', 1)


def _handler(server: ReportServer) -> type[BaseHTTPRequestHandler]:
    from http.server import BaseHTTPRequestHandler

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # the name http.server calls
            status, kind, body = server.answer(self.path)
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:  # http.server's names
            pass  # the terminal shows hloviz's own lines, not a request log

    return Handler


def serve_report(result: ShowResult, *, open_browser: bool = True, say: Callable[[str], None] = print,
                 port: int = 0) -> None:
    """Serve the report ``result`` wrote until Ctrl-C, opening it in a browser (``show --open``)."""
    files = {path.name: path for path in result.files.values()}
    server = ReportServer(files, result.on_demand, port=port)
    say(f"serving the report at {server.url} (Ctrl-C stops; the explorer draws a layer, block or fusion "
        "when you open it)")
    if open_browser:
        import webbrowser

        if not webbrowser.open(server.url):
            say(f"hloviz: could not start a browser; open {server.url} yourself")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
