"""The HLO model: :class:`Shape`, :class:`Instruction`, :class:`Computation`, :class:`HloModule`.

Vocabulary follows XLA's own (module, computation, instruction, opcode, operand, fusion,
entry, root). Values (shapes, layouts, metadata) are frozen and compare by value; containers
(instructions, computations, modules) compare by identity, because two ``add`` instructions
with equal fields are still two different instructions. Use :func:`hloviz.to_text` to compare
modules structurally.

Attribute values are kept as the raw text XLA printed (``Instruction.attributes``) and
interpreted only on demand; instructions whose attribute text is the same share one split of it
until one of them is read, and the metadata is parsed once per distinct text in a module.

The model is a package, one module per kind of thing, bottom up: :mod:`.shapes` (values with
sizes), :mod:`.metadata` (where an instruction came from), :mod:`.instruction`,
:mod:`.computation`, :mod:`.module`. Import from ``hloviz.ir``: every public name is here.
"""

from .shapes import DYNAMIC, ELEMENT_BITS, INFERRED, Layout, Shape
from .metadata import (EMPTY_METADATA, Metadata, escape_string, parse_metadata, quoted_string_pattern, stack_frames,
                       unescape_string)
from .instruction import CALLED_COMPUTATION_ATTRIBUTES, EMPTY_ATTRIBUTES, LIST_CALL_ATTRIBUTES, Instruction
from .computation import Computation, called_closure, set_text_readers
from .module import HloModule, ModuleSummary, summarize

__all__ = [
    "DYNAMIC", "ELEMENT_BITS", "INFERRED", "Layout", "Shape",
    "EMPTY_METADATA", "Metadata", "escape_string", "parse_metadata", "quoted_string_pattern", "stack_frames",
    "unescape_string",
    "CALLED_COMPUTATION_ATTRIBUTES", "EMPTY_ATTRIBUTES", "LIST_CALL_ATTRIBUTES", "Instruction",
    "Computation", "called_closure", "set_text_readers",
    "HloModule", "ModuleSummary", "summarize",
]
