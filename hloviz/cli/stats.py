"""``hloviz stats``: the facts of one module (or, once capture lands, of a target)."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from .. import api
from . import app


@app.command()
def stats(
    file: Path = typer.Argument(..., help="An HLO text file (.hlo/.txt, optionally .gz/.xz)."),
    top: int = typer.Option(10, help="How many opcodes to list."),
) -> None:
    """Summarise an HLO module: computations, instructions, top opcodes, fusions by kind."""
    summary = api.stats_file(file)
    console = Console()
    console.print(f"[bold]{summary.name}[/]: {summary.computations} computations, "
                  f"{summary.instructions} instructions")
    table = Table("opcode", "count", title="top opcodes")
    for opcode, count in list(summary.opcodes.items())[:top]:
        table.add_row(opcode, str(count))
    console.print(table)
    if summary.fusions_by_kind:
        kinds = Table("fusion kind", "count", title="fusions")
        for kind, count in summary.fusions_by_kind.items():
            kinds.add_row(kind, str(count))
        console.print(kinds)
