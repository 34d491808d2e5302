"""``hloviz stats TARGET``: what XLA did, in tables — instructions before/after, the kernels,
the folded constants, and a one-line verdict such as ``1000 ops → 1 kernel``.

``--json`` prints the same facts as JSON (keys: :mod:`hloviz.analysis.export`). Every number
comes from the HLO; source lines come from the capture's source map when it has one.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Column, Table
from rich.text import Text

from .. import api
from ..analysis.glossary import (
    FOLDED,
    FOLDED_BY,
    FOLDED_CONSTANT,
    KERNEL,
    NEW_CONSTANT,
    OP,
    STATUSES,
    WORK_INSTRUCTION,
)
from ..errors import InputError, visible
from ..units import binary_size
from .root import app
from .targets import TargetOptions, note, print_json, target_options

if TYPE_CHECKING:
    from ..analysis.kernels import Kernel

# (the analyses' helpers are imported in the functions that print: every command's start
# imports this module, and `hloviz dump` prints none of its tables)

#: Rows shown per table unless --all.
ROWS = 20


@app.command()
@target_options
def stats(
    source: TargetOptions,
    as_json: Annotated[bool, typer.Option("--json", help="Print the facts as JSON instead of tables.")] = False,
    show_all: Annotated[bool, typer.Option("--all", help=f"List every kernel and folded constant (default: the "
                                                          f"first {ROWS}); with --by scope, every scope at every "
                                                          f"level.")] = False,
    by: Annotated[str, typer.Option("--by", help="Group the numbers by 'kernel' (default) or by 'scope': one "
                                                 "row per layer / name scope of the model, from the op names.",
                                    metavar="kernel|scope")] = "kernel",
    depth: Annotated[int | None, typer.Option("--depth", help="With --by scope: the deepest level listed, "
                                                              "counted from the model (1: its top-level scopes, "
                                                              "below JAX's jit(f); default: 2 in the table, "
                                                              "every level in --json or with --all).",
                                              min=0)] = None,
    sort: Annotated[str | None, typer.Option(
        "--sort", help="List the kernels biggest first by flops, bytes (read + written) or instructions "
                       "(default: in execution order). With --json, the kernels list is in this order too.",
        metavar="flops|bytes|instructions", show_default=False)] = None,
    top: Annotated[int | None, typer.Option(
        "--top", help="List only the first N kernels (with --sort: the N biggest); with --json, only these "
                      "N are in the kernels list (kernel_count stays the total).", metavar="N",
        show_default=False)] = None,
) -> None:
    """Summarise what XLA did to TARGET: instructions before/after, kernels, folded constants.

    Given one HLO file, reports that file's facts (the kernels of an optimized module, or the
    counts of a pre-optimization one). With --by scope, what became of each layer: its ops
    before optimization, the kernels holding them after, what was folded or eliminated, and
    the FLOPs and bytes of its kernels. With --sort flops --top 10, the ten kernels doing the
    most arithmetic.
    """
    if depth is not None and by != "scope":
        raise typer.BadParameter("--depth applies to --by scope", param_hint="--depth")
    _check_kernel_options(sort, top, by, show_all)
    live, settings = source.live()
    result = api.stats(live, **settings.keywords(), notify=note, by=by,
                       depth=depth if depth is not None or as_json or show_all else (2 if by == "scope" else None))
    if as_json:
        data = result.to_dict()
        if sort is not None or top is not None:
            data["kernels"] = _ordered(result, data["kernels"], sort, top)
            data["kernels_listed"] = {"sort": sort, "top": top}
        print_json(data)
        return
    # Piped output is not squeezed to 80 columns: long kernel names and paths stay readable.
    console = Console(highlight=False, width=None if sys.stdout.isatty() else 160)
    if result.scopes is not None:
        _print_scopes(result, console, None if show_all else 4 * ROWS)
        return
    _print(result, console, None if show_all else ROWS, sort=sort, top=top)


def _check_kernel_options(sort: str | None, top: int | None, by: str, show_all: bool) -> None:
    """``--sort`` and ``--top`` order and cut the kernel table: one clear message for a value or
    a combination that means nothing."""
    from ..analysis.kernels import KERNEL_SORTS

    if sort is not None and sort not in KERNEL_SORTS:
        raise InputError(f"--sort {sort!r}: expected one of {', '.join(KERNEL_SORTS)}")
    if top is not None and top < 1:
        raise InputError(f"--top {top}: expected 1 or more kernels")
    for given, name in ((sort, "--sort"), (top, "--top")):
        if given is not None and by != "kernel":
            raise InputError(f"{name} orders the kernel table; --by {by} lists scopes",
                             hint=f"drop --by {by}, or {name}")
    if top is not None and show_all:
        raise InputError("give --top N or --all, not both")


def _ordered(result: api.Stats, rows: list[dict], sort: str | None, top: int | None) -> list[dict]:
    """The JSON kernel rows in ``--sort`` order (as the table: :func:`sorted_kernels`), cut to ``--top``."""
    from ..analysis.kernels import sorted_kernels

    kernels = result.analysis.kernels.kernels if result.analysis.kernels is not None else ()
    position = {id(k): i for i, k in enumerate(kernels)}  # the rows are the kernels, in execution order
    return [rows[position[id(k)]] for k in sorted_kernels(kernels, sort)[:top]]


def _print_scopes(result: api.Stats, console: Console, rows: int | None) -> None:
    """``--by scope``: the counts, then one row per scope, indented by depth."""
    a = result.analysis
    console.print(f"[bold]{_t(result.label)}[/]")
    # a scope of parameters and plumbing only (no ops, no kernels) says nothing in a table; --json keeps it
    scopes = tuple(r for r in result.scopes or () if r.depth == 0 or r.ops or r.kernels)
    table = _Table("scope", "phase", "ops", "kernels", "folded", "eliminated", "flops", "bytes",
                  title=f"by scope ({len(scopes)} scopes; a kernel holding ops of two scopes is listed in both)")
    for r in _listed(scopes, rows, _model_depth(result)):
        name = r.label if r.depth else f"(module) {r.label}"
        if r.loop_text:  # a loop's body: its kernels are listed once, and run this many times
            name += f" {r.loop_text}"
        phase = r.phase.replace("forward", "fwd").replace("backward", "bwd").replace("optimizer", "opt")
        # scope and kernel names come from the HLO: text, never rich markup
        table.add_row(Text("  " * max(r.depth - 1, 0) + name), phase,
                      "—" if r.ops is None else str(r.ops), Text(_kernel_list(r.kernels)),
                      "—" if r.folded is None else str(r.folded or ""),
                      "—" if r.eliminated is None else str(r.eliminated or ""),
                      _count(r.flops) if r.flops else "", binary_size(r.bytes) if r.bytes else "")
    console.print(table)
    _more(console, len(scopes), rows, "scopes")
    console.print(f"[bold]{_t(a.verdict)}[/]")


def _model_depth(result: api.Stats) -> int:
    """Levels above the model's own scopes (1 under JAX's ``jit(f)``, else 0)."""
    return next((t.model_depth for t in result.trees or () if t is not None), 0)


def _listed(scopes: tuple, rows: int | None, model: int = 0) -> list:
    """The scope rows the table shows, in tree order: all when they fit in ``rows``, else the
    top level first (the module, the model, the loss, the optimizer: a training step's
    phases, which a big model's hundred layers would push past the cut), then the deeper rows
    in order until ``rows`` are listed."""
    if rows is None or len(scopes) <= rows:
        return list(scopes)
    top = {i for i, r in enumerate(scopes) if r.depth <= 1 + model}
    keep = set(sorted(top)[:rows])
    for i in range(len(scopes)):
        if len(keep) >= rows:
            break
        keep.add(i)
    return [r for i, r in enumerate(scopes) if i in keep]


def _kernel_list(names: tuple[str, ...], limit: int = 3) -> str:
    if not names:
        return ""
    shown = ", ".join(names[:limit])
    return f"{len(names)}: {shown}" + (", …" if len(names) > limit else "")


def _t(text: object) -> str:
    """Text from the input, safe in a rich console: no terminal escapes or bidi overrides
    (:func:`hloviz.errors.visible`), and no rich markup (``[bold]`` in an op name stays text)."""
    return escape(visible(str(text)))


class _Table(Table):
    """A rich Table whose cells are always :func:`_t`-safe."""

    def add_row(self, *cells: object, **kwargs: object) -> None:  # type: ignore[override]
        super().add_row(*(_t(c) for c in cells), **kwargs)  # type: ignore[arg-type]


def _count(n: int) -> str:
    for unit, size in (("T", 10**12), ("G", 10**9), ("M", 10**6), ("k", 10**3)):
        if n >= size:
            return f"{n / size:.3g}{unit}"
    return str(n)


def _names(ops: tuple[str, ...], limit: int = 4) -> str:
    if len(ops) <= limit:
        return ", ".join(ops)
    return f"{', '.join(ops[:2])}, …, {ops[-1]} ({OP.count(len(ops))})"


def _print_kernels(kernels: tuple[Kernel, ...], console: Console, rows: int | None, lookup, *,
                   sort: str | None, top: int | None, layer_of: dict[str, str] | None = None,
                   runs: dict[str, int | None] | None = None) -> None:
    """The kernel table: in execution order, or biggest first by ``sort``; each kernel's layer
    (its ops' common scope) beside its source lines, which on a Keras model are the model call."""
    from ..analysis.export import source_lines
    from ..analysis.kernels import sorted_kernels
    from ..analysis.loops import trips_text
    from ..analysis.summary import histogram_text

    several = len({k.computation for k in kernels}) > 1
    layer_of = layer_of if layer_of is not None else {k.name: k.layer for k in kernels}
    layers = any(layer_of.get(k.name) for k in kernels)
    title = f"{KERNEL.plural} ({len(kernels)})"
    if sort is not None:
        title = f"{KERNEL.plural} ({len(kernels)}), {'the ' + str(min(rows, len(kernels))) + ' ' if rows else ''}" \
                f"{'with the most ' + sort if sort != 'bytes' else 'reading and writing the most bytes'}"
    # names stay whole (a test, a grep and a reader look them up): they fold, others give way
    name_width = min(24, max(len(k.name) for k in kernels))
    table = _Table(Column("kernel", overflow="fold", min_width=name_width),
                   *(["computation"] if several else []), "kind", WORK_INSTRUCTION.plural, OP.plural,
                   "read", "written", "flops", *([Column("layer", overflow="fold")] if layers else []),
                   Column("source lines", overflow="fold"), title=title)
    for k in sorted_kernels(kernels, sort)[:rows]:
        ops = histogram_text(k.opcodes, 3)
        if k.target:
            ops += f" {k.target}"
        lines = source_lines(k.op_names, k.sources, lookup)
        # a loop body's kernel is listed once; ``×3``: it runs three times (XLA's trip count)
        where = f"{k.computation} {trips_text(runs[k.computation])}" if runs and k.computation in runs \
            else k.computation
        table.add_row(k.name, *([where] if several else []), k.kind_text,
                      f"{k.instructions}: {ops}", str(k.ops), binary_size(k.bytes_read),
                      binary_size(k.bytes_written), _count(k.flops) if k.flops else "",
                      *([_layer(layer_of.get(k.name, ""))] if layers else []), _lines(lines))
    console.print(table)
    if top is None:
        _more(console, len(kernels), rows, "kernels")
    elif len(kernels) > top:
        console.print(f"[dim]… {len(kernels) - top} more kernels (a larger --top, or --all, lists them)[/]")


def _layer(text: str, segments: int = 3) -> str:
    """A kernel's layer for a table cell: its last ``segments`` scopes (the model's name and outer
    blocks are the same on every row; ``--json`` keeps the whole path) and the phase, short."""
    path, paren, phase = (" " + text if text.startswith("(") else text).partition(" (")  # ("(backward)": no scope)
    parts = path.split("/")
    if len(parts) > segments and " + " not in path:
        path = "…/" + "/".join(parts[-segments:])
    if paren:
        phase = phase.rstrip(")").replace("forward", "fwd").replace("backward", "bwd").replace("optimizer", "opt")
        path += f" ({phase})"
    return path.strip()


def _print(result: api.Stats, console: Console, rows: int | None, *, sort: str | None = None,
           top: int | None = None) -> None:
    from ..analysis.export import source_lines

    a = result.analysis
    lookup = result.source if result.info.get("source_map") else None
    console.print(f"[bold]{_t(result.label)}[/]")
    for line in result.notes:
        console.print(f"[dim]note: {_t(line)}[/]")

    counts = _Table("", "pre-optimization", "optimized", title="instructions")
    for label, attr in (("computations", "computations"), ("instructions", "instructions"),
                        (WORK_INSTRUCTION.plural, "work"), ("distinct op names on them", "op_names")):
        counts.add_row(label, *(str(getattr(c, attr)) if c else "—" for c in (a.pre, a.post)))
    if a.kernels is not None:
        counts.add_row(KERNEL.plural, "—", str(a.kernels.count))
    console.print(counts)
    if a.mapping is not None:
        _print_statuses(a, console)
    _print_opcodes(result, console, 10 if rows is not None else None)

    if a.kernels is not None and a.kernels.kernels:
        _print_kernels(a.kernels.kernels, console, top if top is not None else rows, lookup, sort=sort, top=top,
                       layer_of=result.kernel_layers(), runs=result.loop_runs)

    if a.folding is not None:
        if a.folding.folded:
            table = _Table("constant", "value", "folded from", "used by", "by", "source lines",
                           title=f"{FOLDED_CONSTANT.plural} ({len(a.folding.folded)})")
            for f in a.folding.folded[:rows]:
                lines = source_lines(f.from_ops, (), lookup) if lookup else []
                table.add_row(f.constant, f.value, _names(f.from_ops) or f.note, ", ".join(f.into),
                              FOLDED_BY.get(f.by, f.by), _lines(lines))
            console.print(table)
            _more(console, len(a.folding.folded), rows, FOLDED_CONSTANT.plural)
        else:
            console.print(f"{FOLDED_CONSTANT.plural}: none")
        if a.folding.new_constants:
            news = a.folding.new_constants
            console.print(f"{NEW_CONSTANT.plural} (not folds; XLA wrote them while rewriting): "
                          + _t(", ".join(f"{f.constant} = {f.value}" for f in news[:rows])))
            _more(console, len(news), rows, NEW_CONSTANT.plural)
        unlinked = [m.op_name for m in a.mapping.ops if m.status == "folded" and not m.constants] \
            if a.mapping is not None else list(a.folding.computed)
        if unlinked:
            console.print(f"{FOLDED.word} into no new constant (equal to a constant already there, or unused): "
                          f"{_t(_names(tuple(unlinked), 8))}")
    if result.memory is not None:
        _print_memory(result.memory, console)
    console.print(f"[bold]{_t(a.summary.verdict())}[/]")


def _print_memory(m, console: Console) -> None:
    """Three lines of memory (``hloviz memory`` has the rest)."""
    from ..analysis.memory.report import kind_label
    from .memory import size

    said = "XLA's buffer assignment" if m.source == "xla" else "estimated from the HLO"
    console.print(f"memory: {_t(size(m.total_bytes))} ({_t(said)}); "
                  + _t(", ".join(f"{kind_label(k)} {size(v)}" for k, v in m.by_kind.items() if v)))
    console.print(f"memory peak: {_t(size(m.peak.bytes))} live at position {m.peak.time} ({_t(m.peak.instruction)}); "
                  "hloviz memory lists the buffers")


def _print_statuses(a, console: Console) -> None:
    """What became of the function's ops: one row per status, adding up to the op count."""
    from ..analysis.summary import types_text

    assert a.mapping is not None
    counts = a.mapping.counts
    table = _Table("status", OP.plural, "which", title=f"{OP.plural} of the function ({len(a.mapping.ops)})")
    for key, term in STATUSES.items():
        if key == "no_work":
            which = types_text(a.mapping.no_work_types, 6)
        else:
            which = _names(tuple(m.op_name for m in a.mapping.ops if m.status == key), 3)
        table.add_row(term.word, str(counts[key]), which)
    table.add_row("total", str(sum(counts.values())), "")
    console.print(table)


def _print_opcodes(result: api.Stats, console: Console, top: int | None) -> None:
    """The most frequent opcodes of each module side by side, then fusions by kind."""
    sums = result.summaries
    if not sums:
        return
    pre, post = sums.get("pre"), sums.get("post")
    names = sorted({op for s in sums.values() for op in s.opcodes},
                   key=lambda op: (-max(s.opcodes.get(op, 0) for s in sums.values()), op))
    table = _Table("opcode", "pre-optimization", "optimized", title="top opcodes" if top else "opcodes")
    for op in names[:top]:
        table.add_row(op, *(str(s.opcodes.get(op, 0)) if s else "—" for s in (pre, post)))
    console.print(table)
    if top is not None and len(names) > top:
        console.print(f"[dim]… {len(names) - top} more opcodes (--all lists them)[/]")
    for side, s in (("pre-optimization", pre), ("optimized", post)):
        if s is not None and s.fusions_by_kind:
            kinds = ", ".join(f"{k} {n}" for k, n in sorted(s.fusions_by_kind.items(), key=lambda kv: (-kv[1], kv[0])))
            console.print(f"fusions by kind ({side}): {_t(kinds)}")


def _lines(lines: list[str], limit: int = 3) -> str:
    return ", ".join(lines[:limit]) + (f" +{len(lines) - limit} more" if len(lines) > limit else "")


def _more(console: Console, total: int, rows: int | None, what: str) -> None:
    if rows is not None and total > rows:
        console.print(f"[dim]… {total - rows} more {what} (--all lists them)[/]")
