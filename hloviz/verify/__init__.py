"""What XLA would refuse that hloviz's tolerant parser lets through: :func:`verify`.

hloviz's parser reads what XLA prints, and reads it fast: attribute values and literals stay text
until something asks for them, an opcode it does not know (a newer XLA's) is drawn as "other",
and a shape left out is inferred. That tolerance is what opens modules from any XLA version.
:func:`verify` is the strict second look, for a user who wants to know whether XLA itself would
take a module (one written by hand, or edited): the rules of XLA's parser that the fast reading
does not enforce, each problem with where it is and what XLA expects.

The rules: a literal's nesting and element counts match its shape, and its values fit their
type; the syntax of ``window``, ``result_accuracy``, ``api_version``, the header's
``input_output_alias`` and layouts' ``D(…)``/``P(…)`` parts; operand counts of elementwise ops;
opcodes XLA knows; a computation's written signature against its parameters and root.
XLA's *verifier* rules (async wrappers, conditional selectors, infeed shapes, layout constraints
of custom calls) are not repeated here: they concern running a module, not reading it.

The checks, by what they read: :mod:`.structure` (the walk: statements, async pairs, signatures),
:mod:`.literals` (constants' literals against their shapes), :mod:`.attributes` (attribute
values' and layouts' syntax).
"""

from .structure import verify

__all__ = ["verify"]
