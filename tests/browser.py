"""A real headless Chromium for the tests: Playwright for Python driving the *system* Chromium.

Playwright never downloads a browser here: it is launched with ``executable_path`` set to the
Chromium that ``scripts/system-deps.sh`` installs (``make test`` never runs ``playwright
install``). :func:`open_page` loads a page and records every console message, uncaught error
and Content-Security-Policy violation, so a test can assert there were none.
"""

from __future__ import annotations

import shutil
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest

#: Flags for Chromium in a container: no sandbox (root, no user namespaces), no GPU.
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def chromium_path() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


@contextmanager
def chromium() -> Iterator[object]:
    """A launched browser (skips the test without Playwright or a system Chromium)."""
    sync_api = pytest.importorskip("playwright.sync_api")
    path = chromium_path()
    if path is None:
        pytest.skip("no chromium")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=path, args=ARGS)
        try:
            yield browser
        finally:
            browser.close()


@dataclass
class Loaded:
    """A page and what went wrong on it."""

    page: object
    problems: list[str] = field(default_factory=list)


# Records CSP violations (Playwright reports console messages and errors itself).
_WATCH = """
window.__hvProblems = [];
document.addEventListener("securitypolicyviolation", function (e) {
  window.__hvProblems.push("csp: " + e.violatedDirective + " " + e.blockedURI);
});
"""


@contextmanager
def served(result) -> Iterator[str]:
    """The report of ``result`` (an :class:`hloviz.api.ShowResult`) served as ``hloviz show --open``
    serves it, in a thread, for as long as the block runs: its address."""
    import threading

    from hloviz.api.serve import ReportServer

    server = ReportServer({p.name: p for p in result.files.values()}, result.on_demand)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.url
    finally:
        server.shutdown()
        thread.join()
        server.close()


def open_page(browser, path: Path | str, *, fragment: str = "", javascript: bool = True, ready: bool = True,
              width: int = 1400, height: int = 1000) -> Loaded:
    """Load ``path`` (a file, or the address of a served report: :func:`served`; with
    ``#fragment``); wait until the explorer says it is ready."""
    context = browser.new_context(java_script_enabled=javascript, viewport={"width": width, "height": height})
    page = context.new_page()
    loaded = Loaded(page)
    page.on("console", lambda m: loaded.problems.append(f"console.{m.type}: {m.text}"))
    page.on("pageerror", lambda e: loaded.problems.append(f"error: {e}"))
    page.on("requestfailed", lambda r: loaded.problems.append(f"request failed: {r.url}"))
    home = path.split("/report.html")[0] if isinstance(path, str) else "file:"
    page.on("request", lambda r: None if r.url.startswith(("file:", "data:", "blob:", home)) else
            loaded.problems.append(f"request: {r.url}"))
    if javascript:
        page.add_init_script(_WATCH)
    url = path if isinstance(path, str) else path.resolve().as_uri()
    page.goto(url + (f"#{fragment}" if fragment else ""))
    if javascript and ready:
        page.wait_for_selector("#hv[data-ready]", state="attached", timeout=30000)
    return loaded


def problems(loaded: Loaded) -> list[str]:
    """Everything that went wrong on the page so far (console messages, errors, CSP, requests)."""
    found = list(loaded.problems)
    try:
        found += loaded.page.evaluate("window.__hvProblems || []")
    except Exception:  # noqa: BLE001 - a page without script: evaluate raises whatever the driver does
        pass
    return found


def png_colours(png: bytes) -> int:
    """How many distinct byte values the image data holds: a blank page has very few."""
    assert png.startswith(b"\x89PNG")
    data, pos = b"", 8
    while pos < len(png):
        length = int.from_bytes(png[pos:pos + 4], "big")
        kind = png[pos + 4:pos + 8]
        if kind == b"IDAT":
            data += png[pos + 8:pos + 8 + length]
        pos += 12 + length
    return len(set(zlib.decompress(data)))


def search(page, query: str) -> None:
    """Type ``query`` into the explorer's search box and wait for its answer."""
    page.fill("#hv-search", query)
    page.wait_for_function("q => document.getElementById('hv-results').getAttribute('data-query') === q", arg=query)
