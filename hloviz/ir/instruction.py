"""One HLO instruction: :class:`Instruction` and the attribute names that call computations.

In: what the parser resolved (name, opcode, shape, operands, raw attribute text). Out: an object
compared by identity whose attributes and metadata are read on demand. Its own module because
the instruction is the unit every analysis walks; the containers around it live in
:mod:`.computation` and :mod:`.module`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING

from .metadata import EMPTY_METADATA, Metadata, parse_metadata

if TYPE_CHECKING:
    from .computation import Computation
    from .shapes import Shape

#: The attributes of an instruction that has none (read-only, like every instruction's attributes).
EMPTY_ATTRIBUTES: Mapping[str, str] = MappingProxyType({})


# Attributes whose value names computations, in the order XLA prints them.
CALLED_COMPUTATION_ATTRIBUTES = (
    "calls", "to_apply", "condition", "body", "branch_computations",
    "true_computation", "false_computation", "async_computation",
    "select", "scatter", "called_computations",
)
#: Of those, the ones whose value is a braced list (``{%a, %b}``).
LIST_CALL_ATTRIBUTES = frozenset({"branch_computations", "called_computations"})


class Instruction:
    """One HLO instruction: ``name = shape opcode(operands), attributes``.

    ``operands`` and ``called_computations`` are resolved objects. ``attributes`` maps each
    remaining attribute name to its raw text as printed (``{1,0}``, ``kLoop``, ``"..."``), in
    text order; ``metadata`` is parsed from it on first use. ``literal`` is the raw literal
    of a constant (``42``, ``{1, 2}``, ``{...}`` when XLA elided it), and ``parameter_number``
    the index of a parameter.
    """

    # Defaults live on the class, so the parser sets only what an instruction has: most
    # instructions have no literal, no called computations and no control predecessors.
    # Containers are replaced, never mutated in place, so the shared empty defaults are safe.
    operands: list[Instruction] = ()  # type: ignore[assignment]
    called_computations: list[Computation] = ()  # type: ignore[assignment]
    #: Which attribute named each called computation: ``{"calls": [c], "to_apply": [...]}``.
    calls_by_attribute: dict[str, list[Computation]] = MappingProxyType({})  # type: ignore[assignment]
    control_predecessors: list[Instruction] = ()  # type: ignore[assignment]
    parent: Computation | None = None
    literal: str | None = None
    parameter_number: int | None = None
    #: The attributes: a read-only mapping, shared by every instruction of the same attribute text.
    _attributes: Mapping[str, str] = EMPTY_ATTRIBUTES
    #: Their parsed metadata, or None until first read. (Sound to keep: the mapping it comes from
    #: never changes; assigning new attributes resets it.)
    _metadata: Metadata | None = EMPTY_METADATA

    def __init__(self, name: str, opcode: str, shape: Shape, line: int = 0,
                 shared: tuple[Mapping[str, str], Metadata | None] | None = None) -> None:
        """``shared``: the attributes and their parsed metadata, as :meth:`share_attributes` takes
        them (given here, they cost the parser no second call per instruction)."""
        self.name = name
        self.opcode = opcode
        self.shape = shape
        self.line = line
        if shared is not None:
            # every key an instance gets later is stored now, in one order: CPython's shared-key
            # instance dicts stay compact only so (a key first stored after others makes the
            # instance's dict a full one: 100 MB more on the 312k-instruction benchmark module)
            self._attributes, self._metadata = shared

    @property
    def attributes(self) -> Mapping[str, str]:
        """Attribute name → raw value text, in text order (called computations excluded).

        A read-only mapping (``types.MappingProxyType``): the parser splits each distinct
        attribute text once and every instruction with that text shares the result, so that
        reading it costs one attribute load. To change an instruction's attributes, assign a new
        mapping (``inst.attributes = {**inst.attributes, "k": "v"}``); that changes no other
        instruction, and its :attr:`metadata` is read again from the new one.
        """
        return self._attributes

    @attributes.setter
    def attributes(self, value: Mapping[str, str]) -> None:
        self._attributes = MappingProxyType(dict(value))  # a copy: the caller's dict may change later
        self._metadata = None  # read again from the new attributes

    def share_attributes(self, attributes: Mapping[str, str], metadata: Metadata | None = None) -> None:
        """Builder API: the attributes are ``attributes``, a read-only mapping the caller may
        hand to other instructions too (the parser gives every instruction with the same
        attribute text the same split of it, a ``MappingProxyType`` over a dict nobody else
        holds). ``metadata``, when given, is ``attributes["metadata"]`` parsed (shared the same
        way: it is a value); None: parsed on first read."""
        self._attributes = attributes
        self._metadata = metadata

    @property
    def metadata(self) -> Metadata:
        """The parsed ``metadata={...}`` attribute (parsed on first read, once per distinct
        text in a module: instructions of one framework op share one :class:`Metadata`)."""
        metadata = self._metadata
        if metadata is None:
            raw = self._attributes.get("metadata")
            computation = self.parent
            module = computation.parent if computation is not None else None
            metadata = self._metadata = parse_metadata(raw) if raw is None or module is None else module.metadata_of(raw)
        return metadata

    @property
    def is_root(self) -> bool:
        return self.parent is not None and self.parent.root is self

    @property
    def fusion_kind(self) -> str | None:
        """``kLoop``, ``kInput``, ``kOutput`` or ``kCustom`` for a fusion, else None."""
        return self.attributes.get("kind") if self.opcode == "fusion" else None

    @property
    def backend_kind(self) -> str | None:
        """How the backend runs this instruction, as XLA wrote it: a fusion's ``backend_config``
        kind (``__triton_gemm``, ``__triton``, ``__cudnn$fusion``, ``__custom_fusion``,
        ``__ynn_fusion`` on CPU …) or the target of a custom-call into one of XLA's libraries
        (``__cublas$gemm``, ``__cudnn$fmhaSoftmax``); None for anything else."""
        if self.opcode == "fusion":
            m = _BACKEND_KIND.search(self.attributes.get("backend_config", ""))
            return m.group(1) if m else None
        if self.opcode == "custom-call":
            target = self.attributes.get("custom_call_target", "").strip('"')
            return target if target.startswith("__") else None
        return None

    @property
    def is_elided_constant(self) -> bool:
        return self.opcode == "constant" and self.literal is not None and self.literal.strip() == "{...}"

    @property
    def is_elided_get_tuple_element(self) -> bool:
        """A get-tuple-element the text left out, its users naming ``%tuple#index`` (XLA's newer
        dumps); the parser made it back, named ``tuple#index`` (:mod:`hloviz.parser.tuple_index`)."""
        return self.opcode == "get-tuple-element" and "#" in self.name

    def __repr__(self) -> str:
        return f"<Instruction {self.name} = {self.shape} {self.opcode}>"


# The "kind" inside a backend_config's fusion_backend_config (GPU) or fusion_config (CPU), in
# the config's JSON, its quoted form (\"kind\") or the relaxed form XLA also reads (kind:"...").
# Objects nested before it are skipped, two deep (JAX 0.11 on GPU writes its
# block_level_fusion_config, with output_tiles inside, before the kind); possessive, so a
# hostile config costs one pass.
_BACKEND_KIND = re.compile(r'fusion_(?:backend_)?config\\?"?\s*:\s*\{(?:[^{}]|\{(?:[^{}]++|\{[^{}]*+\})*+\})*?'
                           r'\bkind\\?"?\s*:\s*\\?"([^"\\]+)')
