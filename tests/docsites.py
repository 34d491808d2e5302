"""Helpers for the docs-integration tests: count Graphviz runs, read the pictures of a built page.

Graphviz runs are counted where hloviz starts a process (``subprocess.Popen`` of a ``dot``
executable), so a test measures "no Graphviz run" by a counter, not by time.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@contextmanager
def counting_dot_runs(monkeypatch) -> Iterator[list[list[str]]]:
    """Every ``dot`` process started inside the block, as its argv."""
    runs: list[list[str]] = []
    real = subprocess.Popen

    class Counting(real):  # type: ignore[misc, valid-type]
        def __init__(self, args, *a, **k):
            argv = [str(x) for x in (args if isinstance(args, (list, tuple)) else [args])]
            if argv and Path(argv[0]).name in ("dot", "dot.exe"):
                runs.append(argv)
            super().__init__(args, *a, **k)

    monkeypatch.setattr(subprocess, "Popen", Counting)
    try:
        yield runs
    finally:
        monkeypatch.setattr(subprocess, "Popen", real)


def inline_svgs(html: str) -> list[str]:
    """The hloviz pictures inlined in a page (each ``<svg …>…</svg>`` with hloviz's class)."""
    return re.findall(r'<svg\b[^>]*class="hloviz [^"]*"[^>]*>.*?</svg>', html, re.DOTALL)


def titles(svgs: list[str]) -> list[str]:
    return [m.group(1) for s in svgs for m in [re.search(r"<title id=\"[^\"]*\">(.*?)</title>", s, re.DOTALL)] if m]
