"""What one snapshot of XLA's pass pipeline holds, reduced to what neighbouring snapshots are
compared by (:mod:`hloviz.analysis.passes`).

A module of ResNet50's size has ~10k instructions and its pipeline writes dozens of snapshots;
keeping every parsed module would cost gigabytes. A :class:`ModuleFacts` keeps, per instruction,
its opcode, computation, op name and a one-line fingerprint (opcode, shape with layout,
operands, attributes but metadata), which is enough to say what a pass added, removed, changed, fused or folded.
Instruction names are unique within a module and XLA keeps them while it compiles, so they are
the identity across snapshots; ``metadata.op_name`` follows a framework op through fusion,
where its instructions are cloned under new names.

In: one parsed snapshot. Out: its :class:`ModuleFacts` (:func:`module_facts`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ...ir import HloModule, Instruction, unescape_string
from ..kernels import SYNTHETIC_OP_NAMES

__all__ = ["ConstantKey", "ModuleFacts", "constant_key", "module_facts", "operand_names"]

#: A constant's identity by value: element type, dimensions, literal text (spaces normalised).
ConstantKey = tuple[str, tuple[int, ...], str]


def constant_key(inst: Instruction) -> ConstantKey:
    """The key by which the same value is recognised under another name (fusion renames
    the constants it pulls into a fused computation)."""
    return inst.shape.element_type, tuple(inst.shape.dims), " ".join((inst.literal or "").split())


@dataclass(frozen=True)
class InstructionFacts:
    """One instruction as neighbouring snapshots compare it."""

    opcode: str
    computation: str
    op_name: str
    fingerprint: str


@dataclass(frozen=True)
class ModuleFacts:
    """A snapshot's instructions, fusions, constants and op names (see the module docstring)."""

    name: str
    instructions: dict[str, InstructionFacts]
    #: Fusion instruction name → its kind (``kLoop``, ``kInput``, …; ``""`` when not printed).
    fusions: dict[str, str]
    #: Constant value → the names of the constants holding it.
    constants: dict[ConstantKey, tuple[str, ...]]
    #: Constants whose literal XLA elided (``{...}``): their values cannot be compared.
    elided_constants: frozenset[str]
    #: op_name → the instructions carrying it.
    op_names: dict[str, tuple[str, ...]]
    #: Fused computation name → the fusion instruction that calls it.
    fused_by: dict[str, str]

    @property
    def instruction_count(self) -> int:
        return len(self.instructions)

    @property
    def fusion_count(self) -> int:
        return len(self.fusions)


def _fingerprint(inst: Instruction) -> str:
    """The instruction's opcode, shape, operands, literal and attributes (not its metadata), from
    the parsed instruction: used when its printed line is not at hand."""
    operands = ",".join(o.name for o in inst.operands)
    calls = ",".join(c.name for c in inst.called_computations)
    extra = f" {inst.literal}" if inst.literal is not None and len(inst.literal) <= 200 else ""
    attrs = ", ".join(f"{k}={v}" for k, v in inst.attributes.items() if k != "metadata")
    return f"{inst.opcode} {inst.shape} ({operands}){' calls=' + calls if calls else ''}{extra} {attrs}"


_NAME = re.compile(r"%([\w.\-]+)")


def operand_names(fingerprint: str) -> list[str]:
    """The names an instruction's fingerprint refers to after its own (its operands, and the
    computations it calls): ``%a = f32[] add(%b, %c)`` → ``b``, ``c``. Names printed without
    ``%`` (a fingerprint rebuilt from the parsed instruction) are read between the first
    parentheses."""
    if fingerprint.startswith("%"):
        return _NAME.findall(fingerprint)[1:]
    start = fingerprint.find("(")
    end = fingerprint.find(")", start)
    if start < 0 or end < 0:
        return []
    return [n.strip() for n in fingerprint[start + 1:end].split(",") if n.strip()]


#: ``, metadata={...}`` in a printed instruction (quoted strings may hold braces).
_METADATA = re.compile(r',\s*metadata=\{(?:[^{}"]|"(?:[^"\\]|\\.)*")*\}')
_OP_NAME = re.compile(r'\bop_name="((?:[^"\\]|\\.)*)"')


class _Lines:
    """The snapshot's printed lines, so that an instruction's fingerprint is its own line less
    its metadata (a string slice, not a rebuild from the parsed shape and attributes: 3× faster
    on ResNet50's snapshots). A line that does not start with the instruction is not used."""

    def __init__(self, text: str | None) -> None:
        self.lines = text.split("\n") if text is not None else None

    def line_of(self, inst: Instruction) -> str | None:
        if self.lines is None or not 0 < inst.line <= len(self.lines):
            return None
        line = self.lines[inst.line - 1].lstrip()
        line = line.removeprefix("ROOT ")
        if not (line.startswith((f"%{inst.name} ", f"{inst.name} "))):
            return None
        return line


def _metadata_span(line: str) -> tuple[int, int] | None:
    """Where ``, metadata={...}`` is in a printed instruction (None without one): found with
    ``str.find`` (a regular expression over every line was a third of the reading time), the
    regular expression kept for metadata whose strings hold braces or escapes."""
    start = line.find(", metadata={")
    if start < 0:
        return None
    end = line.find("}", start)
    if end > 0:
        seg = line[start:end]
        if "\\" not in seg and "{" not in seg[12:] and seg.count('"') % 2 == 0:
            return start, end + 1
    m = _METADATA.search(line, start)
    return (m.start(), m.end()) if m else None


def _facts_of(inst: Instruction, lines: _Lines) -> tuple[str, str]:
    """(fingerprint, op_name) of one instruction."""
    line = lines.line_of(inst)
    if line is None:
        return _fingerprint(inst), inst.metadata.op_name or ""
    span = _metadata_span(line)
    if span is None:
        return line, ""
    meta = line[span[0]:span[1]]
    at = meta.find('op_name="')
    op = ""
    if at >= 0:
        close = meta.find('"', at + 9)
        if "\\" in meta:
            m = _OP_NAME.search(meta)
            op = unescape_string(m.group(1)) if m else ""
        elif close > 0:
            op = meta[at + 9:close]
    return line[:span[0]] + line[span[1]:], op


def module_facts(module: HloModule, text: str | None = None) -> ModuleFacts:
    """The :class:`ModuleFacts` of a parsed snapshot (``text``: the text it was parsed from,
    which makes fingerprints cheap)."""
    lines = _Lines(text)
    instructions: dict[str, InstructionFacts] = {}
    fusions: dict[str, str] = {}
    constants: dict[ConstantKey, list[str]] = {}
    elided: set[str] = set()
    op_names: dict[str, list[str]] = {}
    fused_by: dict[str, str] = {}
    for comp in module.computations:
        for inst in comp.instructions:
            fingerprint, op = _facts_of(inst, lines)
            instructions[inst.name] = InstructionFacts(inst.opcode, comp.name, op, fingerprint)
            if op and op not in SYNTHETIC_OP_NAMES:
                op_names.setdefault(op, []).append(inst.name)
            if inst.opcode == "fusion":
                fusions[inst.name] = inst.attributes.get("kind", "")
                for called in inst.called_computations:
                    fused_by[called.name] = inst.name
            elif inst.opcode == "constant":
                if inst.is_elided_constant:
                    elided.add(inst.name)
                else:
                    constants.setdefault(constant_key(inst), []).append(inst.name)
    return ModuleFacts(module.name, instructions, fusions, {k: tuple(v) for k, v in constants.items()},
                       frozenset(elided), {k: tuple(v) for k, v in op_names.items()}, fused_by)
