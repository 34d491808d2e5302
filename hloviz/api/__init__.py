"""The compositions behind the CLI: each takes targets or paths and returns typed results.

The CLI only turns options into calls of these functions and results into output; a Python
user calls the same functions. One module per command family:

- :mod:`.stats` — :func:`stats` (``hloviz stats``), :func:`dump` (``hloviz dump``)
- :mod:`.report` — :func:`show` (``hloviz show``), :mod:`.serve` — :func:`serve_report` (``show --open``);
  :mod:`.pictures` — :func:`render` (``hloviz render``)
- :mod:`.diff` — :func:`diff` (``hloviz diff``); :mod:`.fit` keeps both commands' default
  overview within a page
- :mod:`.versions` — :func:`versions` (``hloviz versions``)
- :mod:`.memory` — :func:`memory` (``hloviz memory``)
- :mod:`.passes` — :func:`passes` (``hloviz passes``), :mod:`.pass_versions` (``hloviz versions --passes``)

Results display themselves in Jupyter (``_repr_svg_`` / ``_repr_html_``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import lazy_names

if TYPE_CHECKING:  # what the names are, for type checkers and readers; imported on first use below
    from .diff import DiffResult, DiffSide, diff
    from .memory import Memory, memory
    from .options import CaptureOptions as CaptureOptions, DrawOptions as DrawOptions  # re-exported
    from .options import FitOptions as FitOptions  # re-exported
    from .passes import PassesResult, passes
    from .pictures import render
    from .report import ShowResult, show
    from .serve import serve_report
    from .stats import Stats, dump, scope_trees, stats
    from .versions import VersionColumn, VersionsResult, versions

# Each command's module is imported when its function is first used: the CLI names every command
# at its start, and importing all of them took ~50 ms of each command's start (issue 32).
__getattr__, __dir__ = lazy_names(globals(), {
    ".diff": ("DiffResult", "DiffSide", "diff"),
    ".memory": ("Memory", "memory"),
    ".options": ("CaptureOptions", "DrawOptions", "FitOptions"),
    ".passes": ("PassesResult", "passes"),
    ".pictures": ("render",),
    ".report": ("ShowResult", "show"),
    ".serve": ("serve_report",),
    ".stats": ("Stats", "dump", "scope_trees", "stats"),
    ".versions": ("VersionColumn", "VersionsResult", "versions"),
})

__all__ = ["DiffResult", "DiffSide", "Memory", "PassesResult", "ShowResult", "Stats", "VersionColumn", "VersionsResult",
           "diff", "dump", "memory", "passes", "render", "scope_trees", "serve_report", "show", "stats",
           "versions"]
