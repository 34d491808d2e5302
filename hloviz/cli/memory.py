"""``hloviz memory TARGET``: the compiled program's memory — XLA's total by kind, the peak along
the schedule, the buffers live at the peak with their layer and source line, and bytes at the
peak per layer. ``--json`` gives the same (keys: :meth:`hloviz.analysis.memory.MemoryReport.to_dict`)."""

from __future__ import annotations

import sys
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from .. import api
from ..errors import visible
from ..units import binary_size
from .root import app
from .targets import TargetOptions, note, print_json, target_options

#: Rows of the buffer and layer tables unless --all.
ROWS = 10


@app.command()
@target_options
def memory(
    source: TargetOptions,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON instead of tables.")] = False,
    show_all: Annotated[bool, typer.Option("--all", help=f"List every buffer live at the peak and every layer "
                                                          f"(default: the first {ROWS}).")] = False,
) -> None:
    """How much memory TARGET's compiled program takes, and where it goes.

    XLA's own buffer assignment when the target has it (a live TensorFlow or JAX capture, a dump
    folder with *-buffer-assignment.txt, a saved capture that kept it); otherwise an estimate from
    the optimized HLO by XLA's rules, which says so.
    """
    live, settings = source.live()
    result = api.memory(live, **settings.keywords(), notify=note)
    if as_json:
        print_json(result.to_dict())
        return
    console = Console(highlight=False, width=None if sys.stdout.isatty() else 160)
    print_report(result.label, result.report, console, None if show_all else ROWS)


def _t(text: object) -> str:
    return escape(visible(str(text)))


def size(n: int) -> str:
    """Bytes for a reader: ``163888 B (160.0 KiB)``."""
    return f"{n} B" if abs(n) < 1024 else f"{n} B ({binary_size(n)})"


def print_report(label: str, report, console: Console, rows: int | None) -> None:
    """The text report (``hloviz memory``; also used by ``stats``)."""
    from ..analysis.memory.report import kind_label

    r = report
    console.print(f"[bold]{_t(label)}[/]: memory {'from ' if r.source == 'xla' else ''}{_t(r.origin)}")
    for line in r.notes:
        console.print(f"[dim]note: {_t(line)}[/]")
    kinds = Table("kind", "bytes", title=f"total {size(r.total_bytes)}")
    for k, v in r.by_kind.items():
        kinds.add_row(kind_label(k), Text(size(v)))
    console.print(kinds)
    where = f"at position {r.peak.time} of {len(r.instructions)} ({r.peak.instruction})"
    console.print(f"peak: [bold]{_t(size(r.peak.bytes))}[/] live {_t(where)}")
    table = Table("buffer", "shape", "bytes", "kind", "live", "layer", "source", "last user",
                  title=f"buffers live at the peak ({len(r.buffers_at_peak)})")
    for b in r.buffers_at_peak[:rows]:
        name = b.instruction + (f"{{{','.join(map(str, b.index))}}}" if b.index else "")
        table.add_row(Text(visible(name)), Text(visible(b.shape)), Text(size(b.bytes)), b.kind,
                      f"{b.start}-{b.end}", Text(visible(b.scope)), Text(visible(b.source)),
                      Text(visible(b.last_user)))
    console.print(table)
    if rows is not None and len(r.buffers_at_peak) > rows:
        console.print(f"[dim]… {len(r.buffers_at_peak) - rows} more buffers (--all lists them)[/]")
    if r.scopes:
        layers = Table("layer / scope", "bytes at the peak", "share", title="by layer at the peak")
        for path, n in r.scopes[:rows]:
            share = f"{100 * n / r.peak.bytes:.1f}%" if r.peak.bytes else ""
            layers.add_row(Text(visible(path)), Text(size(n)), share)
        console.print(layers)
