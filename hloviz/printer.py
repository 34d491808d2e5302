"""IR → canonical HLO text: :func:`to_text`.

The text is what XLA's parser accepts and what :func:`hloviz.parse` reads back into an equal
module, so ``to_text(parse(to_text(m))) == to_text(m)``. It is canonical: one spelling per
module (``%`` before every name, one space after commas, attributes in a fixed order), which is
what the diff needs to fingerprint instructions. Attribute values are printed exactly as they
were read, since hloviz keeps them as raw text.
"""

from __future__ import annotations

import re

from .ir import CALLED_COMPUTATION_ATTRIBUTES, INFERRED, LIST_CALL_ATTRIBUTES, Computation, HloModule, Instruction

# Attributes printed last, in this order, after the op-specific ones (as XLA does).
_TRAILING = ("sharding", "frontend_attributes", "origin", "statistics", "metadata", "backend_config")
_TABLES = ("FileNames", "FunctionNames", "FileLocations", "StackFrames")


def to_text(module: HloModule) -> str:
    """The canonical HLO text of ``module``."""
    out: list[str] = []
    header = f"HloModule {module.name}"
    for key, value in module.attributes.items():
        header += f", {key}={_one_line(value)}"
    out.append(header)
    out.append("")
    for table in _TABLES:
        rows = module.stack_frame_tables.get(table)
        if rows:
            out.append(table)
            out.extend(f"{k} {v}" for k, v in rows.items())
            out.append("")
    for comp in module.computations:
        if comp.synthetic:
            continue
        out.append(computation_text(comp))
        out.append("")
    return "\n".join(out)


def computation_text(comp: Computation) -> str:
    """One computation: header, instructions, closing brace."""
    entry = "ENTRY " if comp.is_entry else ""
    shapes = [p.shape for p in comp.parameters] + ([comp.root.shape] if comp.root is not None else [])
    if any(s is INFERRED for s in shapes) or comp.root is None:
        lines = [f"{entry}%{comp.name} {{"]  # XLA infers the signature, as the source did
    else:
        params = ", ".join(f"{p.name}: {p.shape}" for p in comp.parameters)
        lines = [f"{entry}%{comp.name} ({params}) -> {comp.root.shape} {{"]
    root = comp.root
    for inst in comp.instructions:
        if inst.is_elided_get_tuple_element and inst is not root:
            continue  # printed as its users' operand, %tuple#index, as the text had it
        lines.append("  " + ("ROOT " if inst is root else "") + instruction_text(inst))
    closing = "}"
    if comp.execution_thread != "main":
        closing += f', execution_thread="{comp.execution_thread}"'
    lines.append(closing)
    return "\n".join(lines)


def _shape(inst: Instruction) -> str:
    return "" if inst.shape is INFERRED else str(inst.shape)


# Spaces around a newline, matched from the start of their run only: tried from every space of
# a long run, ``\s*\n`` would scan the rest of it each time.
_LINE_BREAK = re.compile(r"(?<![^\S\n])[^\S\n]*+\n\s*+")


def _one_line(value: str) -> str:
    """Values written over several lines print on one (HLO strings never hold a raw newline)."""
    return _LINE_BREAK.sub(" ", value) if "\n" in value else value


def instruction_text(inst: Instruction, *, names: bool = True, metadata: bool = True) -> str:
    """``%name = shape opcode(operands), attributes`` for one instruction.

    With ``names=False`` the instruction's own name is left out and operands are written as
    their positions (``$0``), and ``metadata=False`` drops metadata: the diff uses this form to
    compare instructions whose names differ between XLA versions.
    """
    if inst.opcode == "constant":
        args = _one_line(inst.literal or "")
    elif inst.opcode == "parameter":
        args = str(inst.parameter_number)
    elif names:
        args = ", ".join(f"%{o.name}" for o in inst.operands)
    else:
        args = ", ".join(f"${k}" for k in range(len(inst.operands)))
    shape = _shape(inst)
    text = f"{shape} {inst.opcode}({args})" if shape else f"{inst.opcode}({args})"
    if names:
        text = f"%{inst.name} = {text}"
    attrs = inst.attributes
    for key, value in attrs.items():
        if key not in _TRAILING:
            text += f", {key}={_one_line(value)}"
    calls = _printed_calls(inst)
    for key in CALLED_COMPUTATION_ATTRIBUTES:
        called = calls.get(key)
        if not called:
            continue
        if names:
            listed = ", ".join(f"%{c.name}" for c in called)
        else:
            listed = ", ".join("$c" for _ in called)
        text += f", {key}={{{listed}}}" if key in LIST_CALL_ATTRIBUTES else f", {key}={listed}"
    if inst.control_predecessors and names:
        text += ", control-predecessors={" + ", ".join(f"%{p.name}" for p in inst.control_predecessors) + "}"
    for key in _TRAILING:
        if key in attrs and (metadata or key != "metadata"):
            text += f", {key}={_one_line(attrs[key])}"
    return text


def _printed_calls(inst: Instruction) -> dict[str, list[Computation]]:
    """The called computations as the text names them: the computation XLA's parser makes from
    async sugar (``fusion-start(...), calls=f``) is left out, and what its op calls is printed
    in its place."""
    calls = inst.calls_by_attribute
    if not any(c.synthetic for c in inst.called_computations):
        return calls  # type: ignore[return-value]
    out = {k: [c for c in v if not c.synthetic] for k, v in calls.items()}
    for c in inst.called_computations:
        if c.synthetic and c.root is not None:
            for key, called in c.root.calls_by_attribute.items():
                out[key] = [*out.get(key, []), *called]
    return {k: v for k, v in out.items() if v}
