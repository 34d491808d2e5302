"""Helpers for the docs-integration tests: count Graphviz runs, read the pictures of a built page.

Graphviz runs are counted by the ``dot`` program itself: inside :func:`counting_dot_runs`, the
``dot`` hloviz finds (``HLOVIZ_DOT``, and the first ``dot`` on ``PATH``) is a small shell script
that appends its arguments to a log and then execs the real Graphviz. Every route by which
hloviz starts ``dot`` — directly, through its ``setpriv … sh -c … exec "$@"`` launcher, through a
``dot`` server, from any thread or child process — runs that script, so "no Graphviz run" is
read from the log, not from time and not from guessing which ``Popen`` argv is a ``dot``.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _read_runs(log: Path) -> list[list[str]]:
    text = log.read_text(encoding="utf-8") if log.exists() else ""
    return [line.split("\x1f")[1:] for line in text.splitlines() if line.split("\x1f")[0] == "dot"]


@contextmanager
def counting_dot_runs(monkeypatch=None) -> Iterator[list[list[str]]]:
    """Every ``dot`` process started inside the block, as its arguments (after the program);
    the list is filled when the block ends. The stand-in runs the real ``dot`` with the same
    arguments, so the pictures are Graphviz's own."""
    from hloviz.render.layout.runs.graphviz_run import find_dot

    del monkeypatch  # kept for the callers' signature; the block restores what it sets itself
    real = find_dot()
    folder = Path(tempfile.mkdtemp(prefix="hloviz-dotcount-"))
    log = folder / "runs.log"
    script = folder / "dot"
    # One line per run: "dot", then each argument after \x1f; one short append each (O_APPEND),
    # so runs started at once from several threads all land.
    script.write_text("#!/bin/sh\n"
                      "{ printf 'dot'; for a in \"$@\"; do printf '\\037%s' \"$a\"; done; printf '\\n'; } "
                      f">> {shlex.quote(str(log))}\n"
                      f"exec {shlex.quote(real)} \"$@\"\n", encoding="utf-8")
    script.chmod(0o755)
    runs: list[list[str]] = []
    try:
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("HLOVIZ_DOT", str(script))
            mp.setenv("PATH", f"{folder}{os.pathsep}{os.environ.get('PATH', '')}")
            yield runs
    finally:
        runs[:] = _read_runs(log)
        shutil.rmtree(folder, ignore_errors=True)


def inline_svgs(html: str) -> list[str]:
    """The hloviz pictures inlined in a page (each ``<svg …>…</svg>`` with hloviz's class)."""
    return re.findall(r'<svg\b[^>]*class="hloviz [^"]*"[^>]*>.*?</svg>', html, re.DOTALL)


def titles(svgs: list[str]) -> list[str]:
    return [m.group(1) for s in svgs for m in [re.search(r"<title id=\"[^\"]*\">(.*?)</title>", s, re.DOTALL)] if m]
