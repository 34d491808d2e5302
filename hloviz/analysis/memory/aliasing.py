"""Which results must share storage with an operand or a parameter, as the HLO text says.

In: an instruction (``output_to_operand_aliasing``, or an in-place opcode such as
``dynamic-update-slice``/``scatter``, or a fusion rooted in one) or a module
(``input_output_alias``). Out: ``(output index, operand/parameter number, operand index)``
triples. Its own module because these are XLA's aliasing attributes read as text, apart from the
dataflow rules (:mod:`.dataflow`) that merge the buffers they name.
"""

from __future__ import annotations

import re

from hloviz.ir import HloModule, Instruction
from hloviz.opcodes import IN_PLACE

__all__ = ["entry_aliases", "in_place_pairs"]

_ALIAS_PAIR = re.compile(r"\{([\d,\s]*)\}\s*:\s*\(\s*(\d+)\s*,\s*\{([\d,\s]*)\}")


def _index(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in text.replace(" ", "").split(",") if p)


def in_place_pairs(inst: Instruction) -> list[tuple[tuple[int, ...], int, tuple[int, ...]]]:
    """(output index, operand number, operand index) that must share a buffer: an in-place op's
    result and its first operand; a fusion's ``output_to_operand_aliasing``, or the operand its
    fused root updates in place."""
    if inst.opcode in IN_PLACE:
        return [((), 0, ())]
    text = inst.attributes.get("output_to_operand_aliasing")
    if text:
        return [(_index(m.group(1)), int(m.group(2)), _index(m.group(3))) for m in _ALIAS_PAIR.finditer(text)]
    fused = inst.called_computations[0] if inst.called_computations else None
    root = fused.root if fused is not None else None
    if root is not None and root.opcode in IN_PLACE and root.operands:
        target = root.operands[0]
        while target.opcode == "bitcast" and target.operands:
            target = target.operands[0]
        if target.opcode == "parameter" and target.parameter_number is not None:
            return [((), target.parameter_number, ())]
    return []


def entry_aliases(module: HloModule) -> list[tuple[tuple[int, ...], int, tuple[int, ...]]]:
    """(output index, parameter number, parameter index) of the module's ``input_output_alias``:
    a donated parameter and the output that reuses its buffer."""
    text = module.attributes.get("input_output_alias", "")
    return [(_index(m.group(1)), int(m.group(2)), _index(m.group(3))) for m in _ALIAS_PAIR.finditer(text)]
