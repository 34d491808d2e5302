"""What a node says: the label rows and tooltip of an instruction, a constant, a group.

Kept apart from :mod:`hloviz.render.views` so the wording is in one place: header (opcode and
the attribute that tells instructions of that opcode apart), name, shape, then the small
constants written into the label, then the caller's notes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ...analysis.backends import backend_name
from ...analysis.kernels import work_instructions
from ...ir import Computation, Instruction
from ..quoting import shorten
from ..scene import Row

#: Attributes worth a word in the header, by opcode.
_HEADER_ATTRIBUTE = {
    "compare": "direction",
    "custom-call": "custom_call_target",
    "fusion": "kind",
}

_SPACES = re.compile(r"\s+")


def literal_text(inst: Instruction, limit: int = 40) -> str:
    """A constant's value as XLA printed it, on one line and at most ``limit`` characters."""
    raw = inst.literal if inst.literal is not None else "?"
    return shorten(_SPACES.sub(" ", raw.strip()), limit)


def header(inst: Instruction) -> str:
    """``add``, ``parameter 0``, ``compare LT``, ``custom-call __cublas$gemm``, ``reduce (add)``."""
    op = inst.opcode
    if op == "parameter":
        return f"parameter {inst.parameter_number if inst.parameter_number is not None else '?'}"
    attr = _HEADER_ATTRIBUTE.get(op)
    if attr and attr in inst.attributes:
        return f"{op} {shorten(inst.attributes[attr].strip().strip(chr(34)), 40)}"
    applied = inst.calls_by_attribute.get("to_apply")
    if applied and applied[0].root is not None and op != "call":
        return f"{op} ({applied[0].root.opcode})"
    return op


def shape_text(inst: Instruction, limit: int = 48) -> str:
    return shorten(inst.shape.to_text(layout=False), limit)


def instruction_rows(inst: Instruction, *, root: bool = False) -> list[Row]:
    """Header, name and shape of one instruction; a constant also shows its value."""
    head = header(inst)
    rows = [Row(("ROOT " if root else "") + head, bold=True), Row(shorten(inst.name, 48))]
    if inst.opcode == "constant":
        rows.append(Row("= " + literal_text(inst), small=True))
    rows.append(Row(shape_text(inst), small=True))
    return rows


def inline_text(operand_index: int, const: Instruction, via: Instruction | None, *, named: bool) -> str:
    """The row a small constant becomes in its user's label: ``operand 1 = 1000``."""
    text = f"operand {operand_index} = {literal_text(const, 24)}"
    if via is not None:
        text += f" ({via.opcode})"
    if named:
        text += f" · {shorten(const.name, 32)}"
    return text


def tooltip(inst: Instruction, *, source: tuple[str, int] | None = None, name: str | None = None) -> str:
    """``name = shape opcode`` with what it is and where it came from: the user's name for a
    parameter, the op name, and the user's ``file:line`` (``source``, else the metadata's when it
    is not a frame inside TensorFlow, Keras or JAX — a wrong line is worse than none)."""
    from ...analysis.provenance import is_library_path

    parts = [f"{inst.name} = {inst.shape.to_text(layout=False)} {inst.opcode}"]
    if name:
        parts.append(name)
    md = inst.metadata
    if md.op_name:
        parts.append(f"op_name: {md.op_name}")
    if source is None and md.source_file and not is_library_path(md.source_file):
        source = (md.source_file, md.source_line)
    if source is not None:
        parts.append(f"source: {short_path(source[0])}:{source[1]}")
    return shorten(" · ".join(parts), 300)


def short_path(path: str) -> str:
    """A source path without the machine-specific part before ``site-packages/`` (TF's own files)."""
    for marker in ("/site-packages/", "/dist-packages/"):
        if marker in path:
            return path.split(marker, 1)[1]
    return path


def histogram_text(opcodes: Iterable[str], top: int = 3) -> str:
    """``add ×1000, broadcast ×1`` — the most frequent opcodes of a group, counted here, for a label.

    (Terminal text writes counted opcodes as ``1000 add``: :func:`hloviz.analysis.summary.opcode_counts_text`.)
    """
    counts: dict[str, int] = {}
    for op in opcodes:
        counts[op] = counts.get(op, 0) + 1
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    text = ", ".join(f"{op} ×{n}" for op, n in ranked[:top])
    if len(ranked) > top:
        text += f", +{len(ranked) - top} more kinds"
    return text


def instruction_count(fusion: Instruction) -> str:
    """``10 instructions``: the fusion's size as every output states it — its instructions doing
    work (:func:`hloviz.analysis.kernels.work_instructions`), not its constants or parameters."""
    n = len(work_instructions(fusion))
    return f"{n} instruction{'s' if n != 1 else ''}" if n else "no instruction doing work: moves data"


def fusion_title(fusion: Instruction) -> str:
    """``fusion kLoop``; on GPU with how the backend runs it: ``fusion kCustom · Triton GEMM``."""
    title = f"fusion {fusion.fusion_kind or ''}".rstrip()
    backend = backend_name(fusion.backend_kind)
    return f"{title} · {backend}" if backend else title


def fusion_rows(fusion: Instruction, *, root: bool = False) -> list[Row]:
    """A fusion drawn as one node: kind, name, how many instructions of which kinds, shape."""
    work = [i.opcode for i in work_instructions(fusion)]
    return [Row(("ROOT " if root else "") + fusion_title(fusion), bold=True),
            Row(shorten(fusion.name, 48)),
            Row(f"{instruction_count(fusion)}: {histogram_text(work)}" if work else instruction_count(fusion), small=True),
            Row(shape_text(fusion), small=True)]


def body_rows(caller: Instruction, computations: Iterable[Computation]) -> list[Row]:
    """One row per body folded into its caller's node: ``body: %while_body (1200 instructions)``;
    a loop it runs is named too (``to_apply: %call_body (2 instructions) · runs while.4, 14
    trips``): a ``call`` around a loop of two instructions hid a 14-trip backtrace."""
    from ...analysis.loops import known_trip_count

    rows = []
    for attr, called in caller.calls_by_attribute.items():
        for c in called:
            if c in computations:
                n = len(c.instructions)
                loops = [i for i in c.instructions if i.opcode == "while"]
                runs = "".join(f" · runs {w.name}" + (f", {t} trips" if (t := known_trip_count(w)) is not None else "")
                               for w in loops[:2]) if caller.opcode != "while" else ""
                rows.append(Row(f"{attr}: {shorten(c.name, 32)} ({n} instruction{'s' if n != 1 else ''}){runs}",
                                small=True))
    return rows


def _ranges(numbers: list[int]) -> list[str]:
    """``[1, 2, 3, 7, 9, 10]`` → ``["1–3", "7", "9–10"]`` (sorted, distinct input)."""
    out: list[str] = []
    start = prev = None
    for n in numbers:
        if prev is not None and n == prev + 1:
            prev = n
            continue
        if start is not None:
            out.append(str(start) if start == prev else f"{start}–{prev}")
        start = prev = n
    if start is not None:
        out.append(str(start) if start == prev else f"{start}–{prev}")
    return out


def kernel_badge(numbers: Iterable[int], limit: int = 2) -> str:
    """A node's kernel tag: ``#12``, ``#3–5``, ``#3–5, 9``, ``#3–5, 9 …`` (ranges, at most ``limit``)."""
    parts = _ranges(sorted(set(numbers)))
    if not parts:
        return ""
    return "#" + ", ".join(parts[:limit]) + (" …" if len(parts) > limit else "")


def kernel_list(numbers: Iterable[int], limit: int = 4) -> str:
    """A label row naming kernels: ``kernel #4``, ``kernels #1–3, #13, #16 (+2 more)``."""
    ordered = sorted(set(numbers))
    parts = _ranges(ordered)
    if len(ordered) == 1:
        return f"kernel #{ordered[0]}"
    text = "kernels " + ", ".join(f"#{p}" for p in parts[:limit])
    if len(parts) > limit:
        rest = sum(1 for n in ordered if n > int(parts[limit - 1].split("–")[-1]))
        text += f" (+{rest} more)"
    return text
