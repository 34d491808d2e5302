"""What one snapshot of XLA's pass pipeline holds, reduced to what neighbouring snapshots are
compared by (:mod:`hloviz.analysis.passes`).

A module of ResNet50's size has ~10k instructions and its pipeline writes dozens of snapshots;
keeping every parsed module would cost gigabytes. A :class:`ModuleFacts` keeps, per instruction,
its opcode, computation, op name and a one-line fingerprint (opcode, shape with layout,
operands, attributes but metadata), which is enough to say what a pass added, removed, changed, fused or folded.
Instruction names are unique within a module and XLA keeps them while it compiles, so they are
the identity across snapshots; ``metadata.op_name`` follows a framework op through fusion,
where its instructions are cloned under new names.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..ir import HloModule, Instruction
from .kernels import SYNTHETIC_OP_NAMES

__all__ = ["ConstantKey", "ModuleFacts", "constant_key", "module_facts"]

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
    operands = ",".join(o.name for o in inst.operands)
    calls = ",".join(c.name for c in inst.called_computations)
    extra = f" {inst.literal}" if inst.literal is not None and len(inst.literal) <= 200 else ""
    attrs = ", ".join(f"{k}={v}" for k, v in inst.attributes.items() if k != "metadata")
    return f"{inst.opcode} {inst.shape} ({operands}){' calls=' + calls if calls else ''}{extra} {attrs}"


def module_facts(module: HloModule) -> ModuleFacts:
    """The :class:`ModuleFacts` of a parsed snapshot."""
    instructions: dict[str, InstructionFacts] = {}
    fusions: dict[str, str] = {}
    constants: dict[ConstantKey, list[str]] = {}
    elided: set[str] = set()
    op_names: dict[str, list[str]] = {}
    fused_by: dict[str, str] = {}
    for comp in module.computations:
        for inst in comp.instructions:
            op = inst.metadata.op_name or ""
            instructions[inst.name] = InstructionFacts(inst.opcode, comp.name, op, _fingerprint(inst))
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
