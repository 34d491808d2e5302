"""The composition behind ``hloviz versions``: one function under several releases, side by side.

:func:`versions` captures a ``model.py:function`` under each ``--tf`` / ``--jax`` release (each
in its managed environment, see :mod:`hloviz.capture.releases.envs`) — or reads capture folders made
earlier — and returns a :class:`VersionsResult`: the matrix (kernels, fusions by kind, folded
constants, bytes and FLOP estimates per version, all read from the HLO) and the diff of each
version against the previous one, made by the same matcher and report as ``hloviz diff``.
``--fail-on`` checks compare every version against the first, so a CI job can guard an upgrade.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ..units import binary_size

if TYPE_CHECKING:
    from ..capture import Capture
    from .diff import DiffResult

__all__ = ["VersionColumn", "VersionsResult", "versions"]

#: ``on_phase(label, phase, detail)``: progress of one version's capture (see hloviz.capture.releases.envs.Phases).
PhaseCallback = Callable[[str, str, "str | None"], None]


@dataclass(frozen=True)
class VersionColumn:
    """One version's facts, every number read from its optimized (and pre-optimization) HLO."""

    label: str  # "TF 2.17.1", or the folder name of a capture without versions
    framework: str | None
    version: str | None  # the exact release the capture ran under
    requested: str | None  # what was asked for (--tf 2.17), None for a capture folder
    python: str | None
    capture: str  # the capture folder
    kernel_count: int
    fusions_by_kind: dict[str, int]
    folded_count: int
    bytes_read: int
    bytes_written: int
    flops: int
    instructions: dict[str, int | None]  # "pre" / "post" instruction counts
    seconds: dict[str, float] = field(default_factory=dict)  # phase → seconds (live captures)
    #: Kernels whose FLOPs hloviz cannot estimate (custom-calls such as oneDNN's matmul), by target.
    unestimated: tuple[str, ...] = ()
    #: Memory: ``{"source", "total_bytes", "peak_bytes", "by_kind"}`` (None when it could not be read).
    memory: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"label": self.label}
        if self.framework:
            data[self.framework] = self.version
        data.update({"requested": self.requested, "python": self.python, "capture": self.capture,
                     "kernel_count": self.kernel_count, "fusions_by_kind": self.fusions_by_kind,
                     "folded_count": self.folded_count, "bytes_read": self.bytes_read,
                     "bytes_written": self.bytes_written, "flops": self.flops,
                     "flops_not_estimated": list(self.unestimated), "instructions": self.instructions,
                     "memory": self.memory, "seconds": self.seconds})
        return data


@dataclass(frozen=True)
class VersionsResult:
    """The matrix, the consecutive diffs, and the diffs against the first version (for checks)."""

    function: str
    columns: tuple[VersionColumn, ...]
    diffs: tuple[DiffResult, ...]  # version i-1 → i
    against_first: tuple[DiffResult, ...] = ()  # version 0 → i, i ≥ 2 (0 → 1 is diffs[0])

    def failed(self, checks: Sequence[str]) -> list[str]:
        """The ``--fail-on`` checks that any version fails against the first one."""
        failed: list[str] = []
        for d in (self.diffs[:1] + self.against_first):
            failed += [c for c in d.failed(checks) if c not in failed]
        return failed

    def rows(self) -> list[tuple[str, list[str]]]:
        """The matrix as ``(row label, one cell per version)``: what text and markdown print."""
        cols = self.columns
        rows = [("kernels", [str(c.kernel_count) for c in cols]),
                ("fusions by kind", [_kinds(c.fusions_by_kind) for c in cols]),
                ("folded constants", [str(c.folded_count) for c in cols]),
                ("bytes read (estimate)", [binary_size(c.bytes_read) for c in cols]),
                ("bytes written (estimate)", [binary_size(c.bytes_written) for c in cols]),
                ("FLOPs (estimate)", [_count(c.flops) for c in cols]),
                ("instructions pre → optimized", [f"{_opt(c.instructions.get('pre'))} → {_opt(c.instructions.get('post'))}"
                                                  for c in cols]),
                ("python", [c.python or "—" for c in cols])]
        if any(c.memory for c in cols):
            rows[-1:-1] = [("memory total", [_memory_cell(c.memory, "total_bytes") for c in cols]),
                           ("memory peak", [_memory_cell(c.memory, "peak_bytes") for c in cols])]
        if any(c.seconds for c in cols):
            rows.append(("time", [_seconds(c.seconds) for c in cols]))
        rows.append(("capture", [c.capture for c in cols]))
        return rows

    def notes(self) -> list[str]:
        """What the numbers leave out: kernels without a FLOP estimate make versions look apart;
        memory estimated where a capture holds no XLA buffer assignment."""
        out = [f"{c.label}: FLOPs leave out {len(c.unestimated)} custom-call kernel(s) hloviz cannot estimate "
               f"({', '.join(sorted(set(c.unestimated)))})" for c in self.columns if c.unestimated]
        estimated = [c.label for c in self.columns if c.memory and c.memory["source"] != "xla"]
        if estimated:
            out.append(f"{', '.join(estimated)}: memory estimated from the HLO text (the capture holds no XLA "
                       "buffer assignment); hloviz memory CAPTURE says more")
        return out

    def to_text(self, *, limit: int = 40) -> str:
        head = ["", *[c.label for c in self.columns]]
        table = [head] + [[label, *cells] for label, cells in self.rows()]
        widths = [max(len(r[i]) for r in table) for i in range(len(head))]
        out = [f"hloviz versions: {self.function}", ""]
        out += ["  " + "  ".join(cell.ljust(widths[i]) for i, cell in enumerate(r)).rstrip() for r in table]
        out += [f"note: {n}" for n in self.notes()]
        for d in self.diffs:
            out += ["", d.to_text(limit=limit).rstrip("\n")]
        return "\n".join(out) + "\n"

    def to_markdown(self, *, limit: int = 40) -> str:
        """A PR comment: the matrix, then each diff's. Text from the HLO or a capture (the
        function, version labels, fusion kinds, custom-call targets, Python, where it came from)
        is a code span, inert on GitHub (see :func:`hloviz.analysis.diff.report.markdown_code`)."""
        from ..analysis.diff.report import markdown_code as code

        out = [f"## hloviz versions: {code(self.function, in_table=False)}", "",
               "| | " + " | ".join(code(c.label) for c in self.columns) + " |",
               "|---|" + "---|" * len(self.columns)]
        out += [f"| {label} | " + " | ".join(code(c) if label in _FREE_TEXT_ROWS else _md(c) for c in cells) + " |"
                for label, cells in self.rows()]
        out += [f"\n> {code(c.label, in_table=False)}: FLOPs leave out {len(c.unestimated)} custom-call kernel(s) "
                f"hloviz cannot estimate ({', '.join(code(t, in_table=False) for t in sorted(set(c.unestimated)))})"
                for c in self.columns if c.unestimated]
        for d in self.diffs:
            out += ["", d.to_markdown(limit=limit).rstrip("\n")]
        return "\n".join(out) + "\n"

    def to_dict(self) -> dict[str, Any]:
        return {"function": self.function,
                "versions": [c.to_dict() for c in self.columns],
                "diffs": [{"from": d.before.label, "to": d.after.label, "diff": d.to_dict()} for d in self.diffs]}

    def to_html(self, *, budget: int = 300, timeout: float | None = None) -> str:
        """One self-contained page: the matrix, then each diff's picture (both sides side by side)
        with its summary. Needs Graphviz for the pictures."""
        from ..analysis.diff.report import summary_lines
        from ..render.page.html import inline_svg, page

        esc = html.escape
        parts = [f"<h1>hloviz versions: {esc(self.function)}</h1>", "<table><thead><tr><th></th>"
                 + "".join(f"<th>{esc(c.label)}</th>" for c in self.columns) + "</tr></thead><tbody>"]
        for label, cells in self.rows():
            parts.append(f"<tr><th>{esc(label)}</th>" + "".join(f"<td>{esc(c)}</td>" for c in cells) + "</tr>")
        parts.append("</tbody></table>")
        parts += [f'<p class="notes">{esc(n)}</p>' for n in self.notes()]
        for d in self.diffs:
            picture = d.picture("svg", budget=budget, timeout=timeout)
            parts.append(f"<h2>{esc(d.before.label)} → {esc(d.after.label)}</h2>")
            parts.append('<table class="facts">' + "".join(
                f"<tr><th>{esc(k)}</th><td>{esc(v)}</td></tr>" for k, v in summary_lines(d.diff)) + "</table>")
            if picture.notes:
                parts.append('<ul class="notes">' + "".join(f"<li>{esc(n)}</li>" for n in picture.notes) + "</ul>")
            parts.append(f'<div class="picture">{inline_svg(picture.svg_text())}</div>')
        return page(f"hloviz versions: {self.function}", "\n".join(parts))


#: Rows of the matrix whose cells are text from the HLO or a capture, not hloviz's numbers.
_FREE_TEXT_ROWS = frozenset({"fusions by kind", "python", "capture"})


def _md(text: str) -> str:
    return text.replace("|", "\\|")


def _kinds(kinds: dict[str, int]) -> str:
    return ", ".join(f"{k} {n}" for k, n in sorted(kinds.items(), key=lambda kv: (-kv[1], kv[0]))) or "none"


def _opt(n: int | None) -> str:
    return "—" if n is None else str(n)


def _count(n: int) -> str:
    for unit, size in (("T", 10**12), ("G", 10**9), ("M", 10**6), ("k", 10**3)):
        if n >= size:
            return f"{n / size:.3g}{unit}"
    return str(n)


def _seconds(seconds: dict[str, float]) -> str:
    """``install 27.7s + capture 12.4s`` (install: resolving, downloading, installing, checking)."""
    if not seconds:
        return "—"
    install = sum(s for phase, s in seconds.items() if phase != "capturing")
    capture = seconds.get("capturing", 0.0)
    return (f"install {install:.1f}s + " if install >= 0.05 else "cached environment + ") + f"capture {capture:.1f}s"


def _column(cap: Capture, label: str, capture_path: str, requested: str | None,
            seconds: dict[str, float]) -> VersionColumn:
    from ..analysis import analyze
    from ..ir import summarize

    post = cap.post_module()
    if post is None:
        raise InputError(f"{label}: the capture has no optimized module (post.hlo); versions compares optimized HLO")
    pre = cap.pre_module()
    a = analyze(pre, post, info=cap.info)
    info = cap.info
    framework = next((k for k in ("tensorflow", "jax") if info.get(k)), None)
    ks = a.kernels
    assert ks is not None
    return VersionColumn(
        label=label, framework=framework, version=info.get(framework) if framework else None,
        requested=requested, python=info.get("python"), capture=capture_path, kernel_count=ks.count,
        fusions_by_kind=summarize(post).fusions_by_kind,
        folded_count=len(a.folding.folded) if a.folding is not None else 0,
        bytes_read=ks.bytes_read, bytes_written=ks.bytes_written, flops=ks.flops,
        instructions={"pre": pre.instruction_count if pre is not None else None, "post": post.instruction_count},
        seconds=dict(seconds),
        unestimated=tuple(k.target or k.name for k in ks.kernels if k.opcode == "custom-call" and not k.flops),
        memory=_memory(cap))


def _memory(cap: Capture) -> dict[str, Any] | None:
    from ..errors import HlovizError
    from .memory import memory_of

    try:
        m = memory_of(cap)
    except HlovizError:
        return None
    return {"source": m.source, "total_bytes": m.total_bytes, "peak_bytes": m.peak.bytes, "by_kind": dict(m.by_kind)}


def _memory_cell(memory: dict[str, Any] | None, key: str) -> str:
    if not memory:
        return "—"
    return binary_size(int(memory[key]))


def _label_of(info: dict, fallback: str) -> str:
    for key, short in (("tensorflow", "TF"), ("jax", "JAX")):
        if info.get(key):
            return f"{short} {info[key]}"
    return fallback


def _unique(labels: list[str]) -> list[str]:
    seen: dict[str, int] = {}
    out = []
    for label in labels:
        seen[label] = seen.get(label, 0) + 1
        out.append(label if seen[label] == 1 else f"{label} ({seen[label]})")
    return out


def versions(target: str | None = None, *, tf: Sequence[str] = (), jax: Sequence[str] = (),
             captures: Sequence[str | Path] = (), save: str | Path | None = None, args: Sequence[str] = (),
             device: str | None = None, verbose: bool = False, notify: Callable[[str], None] | None = None,
             on_phase: PhaseCallback | None = None) -> VersionsResult:
    """Capture ``target`` under each release of ``tf`` (or ``jax``), in the order given, or read
    ``captures`` (capture folders); then the matrix and the diffs (see the module docstring).

    Live captures are saved to ``save`` (default ``hloviz-out/versions``) as
    ``<function>-tf<version>``, the folder names ``samples/captures`` uses.
    """
    from ..capture import load_target, save_capture
    from .diff import DiffResult, load_side

    if tf and jax:
        raise InputError("give --tf or --jax versions, not both: one function runs under one framework")
    releases = [("tensorflow", "tf", v) for v in tf] + [("jax", "jax", v) for v in jax]
    if releases and captures:
        raise InputError("give a model.py:function TARGET with --tf/--jax versions, or capture folders, not both")
    if releases:
        if not target:
            raise InputError("--tf/--jax need a model.py:function TARGET to capture")
        if len(releases) < 2:
            raise InputError("give at least two versions to compare, e.g. --tf 2.17 --tf 2.21")
        from ..capture.releases.envs import check_release

        for framework, _short, version in releases:  # every one, before minutes of installing the first
            check_release(framework, version)
        dupes = {v for _, _, v in releases if sum(1 for _, _, w in releases if w == v) > 1}
        if dupes:
            raise InputError(f"version {min(dupes)} is given twice")
    elif len(captures) < 2:
        raise InputError("give a model.py:function TARGET with at least two --tf (or --jax) versions, "
                         "or at least two capture folders",
                         hint="e.g. hloviz versions samples/fused_additions.py:fused_additions --tf 2.17 --tf 2.21")

    loaded: list[tuple[Capture, str, str | None, dict]] = []  # capture, folder, requested, seconds
    if releases:
        from ..capture.releases.envs import Phases
        from ..capture.target import split_function_target

        parts = split_function_target(target)  # type: ignore[arg-type]
        if parts is None or Path(str(target)).is_dir():
            raise InputError(f"{target} is not a model.py:function target; --tf/--jax capture a function",
                             hint="to compare capture folders, give them without --tf/--jax")
        out_root = Path(save) if save is not None else Path("hloviz-out") / "versions"
        for framework, short, version in releases:
            label = f"{short} {version}"
            phases = Phases((lambda lb: (lambda phase, detail: on_phase(lb, phase, detail)))(label)
                            if on_phase is not None else None)
            tf_release, jax_release = (version, None) if framework == "tensorflow" else (None, version)
            cap = load_target(str(target), args=tuple(args), device=device, verbose=verbose, notify=notify,
                              on_phase=phases.start, tf=tf_release, jax=jax_release)
            phases.finish()
            name = re.sub(r"[^\w.\-]+", "_", cap.label)
            folder = save_capture(cap, out_root / f"{name}-{short}{version}")
            loaded.append((cap, str(folder), version, dict(phases.seconds)))
    else:
        for c in captures:
            cap = load_target(str(c), notify=notify)
            loaded.append((cap, str(c), None, {}))

    labels = _unique([_label_of(cap.info, Path(folder).name) for cap, folder, _, _ in loaded])
    columns = tuple(_column(cap, label, folder, req, secs)
                    for (cap, folder, req, secs), label in zip(loaded, labels))
    sides = [load_side(cap, "post") for cap, _, _, _ in loaded]
    from ..analysis.diff import diff_modules
    from .sides import DiffSide

    sides = [DiffSide(s.module, label, s.info) for s, label in zip(sides, labels)]
    diffs = tuple(DiffResult(diff_modules(a.module, b.module), a, b, "post") for a, b in pairwise(sides))
    against_first = tuple(DiffResult(diff_modules(sides[0].module, b.module), sides[0], b, "post") for b in sides[2:])
    function = str(loaded[0][0].info.get("function") or loaded[0][0].label)
    return VersionsResult(function, columns, diffs, against_first)
