"""The compositions behind the CLI: each takes paths or targets and returns typed results.

The CLI only turns options into calls of these functions and results into output; a Python
user can call the same functions (they are re-exported from :mod:`hloviz`).
"""

from __future__ import annotations

from pathlib import Path

from .ir import ModuleSummary, summarize
from .parser import parse_file


def stats_file(path: str | Path) -> ModuleSummary:
    """Parse one HLO file and count what is in it."""
    return summarize(parse_file(path))
