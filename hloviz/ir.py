"""The HLO model: :class:`Shape`, :class:`Instruction`, :class:`Computation`, :class:`HloModule`.

Vocabulary follows XLA's own (module, computation, instruction, opcode, operand, fusion,
entry, root). Values (shapes, layouts, metadata) are frozen and compare by value; containers
(instructions, computations, modules) compare by identity, because two ``add`` instructions
with equal fields are still two different instructions. Use :func:`hloviz.to_text` to compare
modules structurally.

Attribute values are kept as the raw text XLA printed (``Instruction.attributes``) and
interpreted only on demand; instructions whose attribute text is the same share one split of it
until one of them is read, and the metadata is parsed once per distinct text in a module.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from .source import Span

# Bits per element, for byte counts. Sub-byte types are counted as XLA packs them by default
# (unpacked: one byte each) only when a layout says so; here they count their nominal width.
ELEMENT_BITS: dict[str, int] = {
    "pred": 8, "s1": 1, "u1": 1, "s2": 2, "u2": 2, "s4": 4, "u4": 4, "s8": 8, "u8": 8,
    "s16": 16, "u16": 16, "s32": 32, "u32": 32, "s64": 64, "u64": 64,
    "f16": 16, "bf16": 16, "f32": 32, "f64": 64, "c64": 64, "c128": 128,
    "f8e5m2": 8, "f8e4m3fn": 8, "f8e4m3b11fnuz": 8, "f8e5m2fnuz": 8, "f8e4m3fnuz": 8,
    "f8e4m3": 8, "f8e3m4": 8, "f8e8m0fnu": 8, "f4e2m1fn": 4,
    "token": 0, "opaque": 0, "tuple": 0,
}

_INT = re.compile(r"[+-]?[0-9]+")

DYNAMIC = -1
"""Marks a dimension printed as ``?`` (unbounded dynamic)."""


@dataclass(frozen=True, slots=True)
class Layout:
    """A shape's layout, kept as the text between the braces (e.g. ``1,0:T(8,128)(2,1)S(1)``).

    The minor-to-major order is parsed eagerly because the printer and the diff use it;
    tiling and memory space are read from the text when asked for.
    """

    text: str

    @property
    def minor_to_major(self) -> tuple[int, ...]:
        head = self.text.split(":", 1)[0].strip()
        return tuple(int(d) for d in head.split(",") if d.strip()) if head else ()

    @property
    def tiles(self) -> tuple[tuple[int | str, ...], ...]:
        """Each ``T(...)`` tile of the layout; ``*`` (combined dimension) is kept as a string."""
        if ":" not in self.text:
            return ()
        m = re.search(r"T((?:\([^)]*\))+)", self.text.split(":", 1)[1])
        if not m:
            return ()
        return tuple(
            tuple(int(x) if _INT.fullmatch(x.strip()) else x.strip() for x in t.split(",") if x.strip())
            for t in re.findall(r"\(([^)]*)\)", m.group(1))
        )

    @property
    def memory_space(self) -> int | None:
        if ":" not in self.text:
            return None
        m = re.search(r"S\((\d+)\)", self.text.split(":", 1)[1])
        return int(m.group(1)) if m else None

    def __str__(self) -> str:
        return "{" + self.text + "}"


@dataclass(frozen=True, slots=True)
class Shape:
    """An HLO shape: an array (``f32[2,<=3,?]{1,0}``), a tuple, ``token[]`` or ``opaque[]``.

    ``dims`` holds sizes (bounds for ``<=N`` dimensions, :data:`DYNAMIC` for ``?``);
    ``dynamic`` says which dimensions are dynamic. For tuples, ``element_type`` is ``"tuple"``
    and ``tuple_shapes`` holds the elements.
    """

    element_type: str
    dims: tuple[int, ...] = ()
    dynamic: tuple[bool, ...] = ()
    layout: Layout | None = None
    tuple_shapes: tuple[Shape, ...] = ()
    #: element_count, computed on first use (a shape of 100k dimensions must not cost 100k
    #: multiplications at every look).
    _elements: int = field(default=-1, init=False, repr=False, compare=False, hash=False)

    @property
    def is_tuple(self) -> bool:
        return self.element_type == "tuple"

    @property
    def is_array(self) -> bool:
        return self.element_type not in ("tuple", "token", "opaque")

    @property
    def rank(self) -> int:
        return len(self.dims)

    @property
    def element_count(self) -> int:
        """Number of elements of an array shape (bounds used for ``<=N``; ``?`` counts as 0)."""
        if self._elements < 0:
            n = 1
            for d in self.dims:
                n *= max(d, 0)
            object.__setattr__(self, "_elements", n)
        return self._elements

    @property
    def byte_size(self) -> int:
        """Bytes the data takes (sum over leaves for tuples); no padding or tiling counted."""
        if self.is_tuple:
            return sum(s.byte_size for s in self.tuple_shapes)
        bits = ELEMENT_BITS.get(self.element_type, 0)
        return (self.element_count * bits + 7) // 8

    def leaves(self) -> Iterator[Shape]:
        """The array/token leaves of this shape, depth first."""
        if self.is_tuple:
            for s in self.tuple_shapes:
                yield from s.leaves()
        else:
            yield self

    def to_text(self, *, layout: bool = True) -> str:
        if self.is_tuple:
            return "(" + ", ".join(s.to_text(layout=layout) for s in self.tuple_shapes) + ")"
        parts: list[str] = []
        for d, dyn in zip(self.dims, self.dynamic):
            parts.append("?" if d == DYNAMIC else (f"<={d}" if dyn else str(d)))
        text = f"{self.element_type}[{','.join(parts)}]"
        if layout and self.layout is not None:
            text += str(self.layout)
        return text

    def __str__(self) -> str:
        return self.to_text()


INFERRED = Shape("inferred")
"""Placeholder for a shape the text left out and hloviz could not infer (XLA would infer it)."""


@dataclass(frozen=True, slots=True)
class Metadata:
    """The ``metadata={...}`` of an instruction: where it came from in the framework.

    ``op_name`` is TensorFlow's op name (``add_41``, ``dense/MatMul``) or JAX's name stack;
    it is what links pre- and post-optimization instructions back to the user's code.
    """

    op_type: str = ""
    op_name: str = ""
    source_file: str = ""
    source_line: int = 0
    extra: tuple[tuple[str, str], ...] = ()


#: The metadata of an instruction that has none (shared, since Metadata is immutable).
EMPTY_METADATA = Metadata()
#: The attributes of an instruction that has none (read-only, like every instruction's attributes).
EMPTY_ATTRIBUTES: Mapping[str, str] = MappingProxyType({})


def quoted_string_pattern(newlines: bool = False) -> str:
    """A regular expression for one quoted string with C escapes, that never backtracks.

    The usual ``"(?:[^"\\]|\\.)*"`` keeps one backtracking entry per character: a 40 MB
    ``op_name`` cost gigabytes. Unrolled (a run of plain characters, then escape + run …) it
    keeps none per plain character, and with possessive quantifiers (Python ≥ 3.11) none at
    all. ``newlines`` lets the string span lines (metadata bodies); the parser's line scanner
    does not.
    """
    plain = r'[^"\\]' if newlines else r'[^"\\\n]'
    more = "*+" if sys.version_info >= (3, 11) else "*"
    return rf'"{plain}{more}(?:\\.{plain}{more}){more}"'


# The key starts where a word starts: tried inside a long word, ``\w+=`` would run to the word's
# end from every one of its characters (a 100 KB word: seconds).
_META_FIELD = re.compile(r'(?<!\w)(\w++)=(' + quoted_string_pattern(newlines=True) + r'|\{[^{}]*\}|[^\s}]+)')


_KNOWN_METADATA = ("op_type", "op_name", "source_file", "source_line")
_PLAIN_STRING = r'"([^"\\\n]*+)"(?: |(?=\}))'
#: Metadata as XLA prints it: the known fields in XLA's order, strings without escapes, then
#: fields whose values are words (``stack_frame_id=3``), one space apart.
_USUAL_METADATA = re.compile(
    rf'\{{(?:op_type={_PLAIN_STRING})?(?:op_name={_PLAIN_STRING})?(?:source_file={_PLAIN_STRING})?'
    r'(?:source_line=(\d++)(?: |(?=\})))?((?:[A-Za-z_]\w*+=[^\s"{}\\]++(?: |(?=\})))*+)\}\Z')
_WORD_FIELD = re.compile(r'([A-Za-z_]\w*+)=([^\s"{}\\]++)')


def parse_metadata(raw: str | None) -> Metadata:
    """Parse the text of a ``metadata={...}`` attribute (braces included or not)."""
    if not raw:
        return EMPTY_METADATA
    usual = _USUAL_METADATA.match(raw)
    if usual is not None:  # one match instead of a step per field; the same result
        op_type, op_name, source_file, line, rest = usual.groups()
        if not rest:
            return Metadata(op_type or "", op_name or "", source_file or "", int(line) if line else 0)
        words: list[tuple[str, str]] = _WORD_FIELD.findall(rest)
        # (every known key starts "op_" or "source_": a rest without either repeats none of them)
        if ("op_" not in rest and "source_" not in rest) or not any(key in _KNOWN_METADATA for key, _ in words):
            return Metadata(op_type or "", op_name or "", source_file or "", int(line) if line else 0, tuple(words))
    body = raw.strip()
    if body.startswith("{") and body.endswith("}"):
        body = body[1:-1]
    known: dict[str, str] = {}
    extra: list[tuple[str, str]] = []
    for key, value in _META_FIELD.findall(body):
        if value.startswith('"'):
            value = unescape_string(value[1:-1])
        if key in ("op_type", "op_name", "source_file", "source_line"):
            known[key] = value
        else:
            extra.append((key, value))
    line = known.get("source_line", "0")
    return Metadata(
        op_type=known.get("op_type", ""),
        op_name=known.get("op_name", ""),
        source_file=known.get("source_file", ""),
        source_line=int(line) if _INT.fullmatch(line) else 0,
        extra=tuple(extra),
    )


_SIMPLE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\", "'": "'"}
_ESCAPE = re.compile(r"\\([ntr\"\\'])")


def unescape_string(s: str) -> str:
    r"""Undo the C escapes XLA uses in quoted strings (``\"``, ``\\``, ``\n``, ``\t``).

    One regular-expression pass (an op_name of millions of escapes costs one C loop, not a
    Python step per character); other backslashes are kept as written."""
    if "\\" not in s:
        return s
    return _ESCAPE.sub(lambda m: _SIMPLE_ESCAPES[m.group(1)], s)


def escape_string(s: str) -> str:
    """Quote-safe form of ``s`` for HLO text (inverse of :func:`unescape_string`)."""
    return s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")


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
_BACKEND_KIND = re.compile(r'fusion_(?:backend_)?config\\?"?\s*:\s*\{[^{}]*?\bkind\\?"?\s*:\s*\\?"([^"\\]+)')


class _TextReaders:
    """The parser's readers for the parts of the IR that are kept as text until first read.

    The IR sits below the parser and never imports it; :mod:`hloviz.parser` registers its
    readers here (:func:`set_text_readers`) when it is imported, which ``import hloviz`` does.
    """

    @staticmethod
    def parse_signature(text: str, span: Span | None) -> tuple[list[tuple[str, Shape]], Shape]:
        raise RuntimeError("no signature reader: import hloviz.parser before reading signatures")


_READERS = _TextReaders()


def set_text_readers(*, parse_signature: Callable[[str, Span | None], tuple[list[tuple[str, Shape]], Shape]]) -> None:
    """Register how signatures kept as text are read (called by the parser)."""
    _READERS.parse_signature = parse_signature  # type: ignore[method-assign]


class Computation:
    """A named list of instructions with parameters and one root.

    ``instructions`` are in text order. ``parameters`` are ordered by parameter number.
    ``execution_thread`` is XLA's thread name (``main`` unless the text says otherwise).
    """

    __slots__ = ("name", "instructions", "root", "is_entry", "execution_thread", "line",
                 "parent", "by_name", "signature", "signature_span", "synthetic")

    def __init__(self, name: str, *, is_entry: bool = False, line: int = 0) -> None:
        self.name = name
        self.instructions: list[Instruction] = []
        self.root: Instruction | None = None
        self.is_entry = is_entry
        self.execution_thread = "main"
        self.line = line
        self.parent: HloModule | None = None
        #: Instruction name → instruction, kept by :meth:`add` (read it; add through :meth:`add`).
        self.by_name: dict[str, Instruction] = {}
        #: The signature as written in the header (``(p: f32[]) -> f32[]``), if it had one, and
        #: where it starts in the source (it may go on over several lines).
        self.signature: str | None = None
        self.signature_span: Span | None = None
        #: True for computations XLA's parser creates from sugar (``custom-call-start``); not printed.
        self.synthetic = False

    @property
    def parameters(self) -> list[Instruction]:
        params = [i for i in self.instructions if i.opcode == "parameter"]
        params.sort(key=lambda i: i.parameter_number if i.parameter_number is not None else 0)
        return params

    @property
    def program_shape(self) -> tuple[list[Shape], Shape | None]:
        """Parameter shapes and result shape."""
        return [p.shape for p in self.parameters], (self.root.shape if self.root else None)

    @property
    def declared_signature(self) -> tuple[list[tuple[str, Shape]], Shape] | None:
        """The header's ``[(parameter name, shape)]`` and result shape, parsed on demand."""
        if self.signature is None:
            return None
        return _READERS.parse_signature(self.signature, self.signature_span)

    def users(self) -> dict[Instruction, list[Instruction]]:
        """Instruction → the instructions of this computation that use it as an operand.

        Computed on demand (not kept by the parser) so that parsing stays fast.
        """
        out: dict[Instruction, list[Instruction]] = {i: [] for i in self.instructions}
        for inst in self.instructions:
            for op in inst.operands:
                out[op].append(inst)
        return out

    def instruction(self, name: str) -> Instruction:
        """The instruction called ``name`` (with or without a leading ``%``)."""
        return self.by_name[name.lstrip("%")]

    def get(self, name: str) -> Instruction | None:
        return self.by_name.get(name.lstrip("%"))

    def add(self, instruction: Instruction) -> Instruction:
        """Builder API: append ``instruction`` (its name must be new in this computation)."""
        instruction.parent = self
        self.instructions.append(instruction)
        self.by_name[instruction.name] = instruction
        return instruction

    def __iter__(self) -> Iterator[Instruction]:
        return iter(self.instructions)

    def __len__(self) -> int:
        return len(self.instructions)

    def __repr__(self) -> str:
        return f"<Computation {self.name}: {len(self.instructions)} instructions>"


def called_closure(roots: Iterable[Computation], *, follow: Callable[[Instruction], bool] | None = None,
                   keep: Callable[[Computation], bool] | None = None) -> Iterator[Computation]:
    """``roots`` and, transitively, the computations their instructions call, each once, in
    depth-first text order. ``follow`` picks the calling instructions to descend through (all by
    default); ``keep`` drops computations (and what only they call) from the walk."""
    stack = [c for c in reversed(list(roots)) if keep is None or keep(c)]
    seen: set[int] = set()
    while stack:
        comp = stack.pop()
        if id(comp) in seen:
            continue
        seen.add(id(comp))
        yield comp
        for inst in reversed(comp.instructions):
            if inst.called_computations and (follow is None or follow(inst)):
                stack.extend(c for c in reversed(inst.called_computations) if keep is None or keep(c))


class HloModule:
    """A parsed HLO module: header attributes, computations in text order, and the entry.

    ``attributes`` holds the header's ``key=value`` pairs as raw text
    (``is_scheduled`` → ``"true"``, ``entry_computation_layout`` → ``"{(f32[])->f32[]}"``).
    """

    __slots__ = ("name", "attributes", "computations", "entry", "filename", "by_name", "stack_frame_tables",
                 "parsed_metadata")

    def __init__(self, name: str, *, filename: str = "<string>") -> None:
        self.name = name
        self.attributes: dict[str, str] = {}
        self.computations: list[Computation] = []
        self.entry: Computation | None = None
        self.filename = filename
        #: Computation name → computation, kept by :meth:`add` (read it; add through :meth:`add`).
        self.by_name: dict[str, Computation] = {}
        #: Newer XLA prints FileNames / FunctionNames / FileLocations / StackFrames tables after
        #: the header; metadata then refers to them by ``stack_frame_id``. Rows kept as raw text.
        self.stack_frame_tables: dict[str, dict[int, str]] = {}
        #: ``metadata={...}`` text → its :class:`Metadata`, filled as instructions' metadata is
        #: read: a module of 300k instructions has a few thousand distinct texts.
        self.parsed_metadata: dict[str, Metadata] = {}

    def metadata_of(self, raw: str) -> Metadata:
        """The :class:`Metadata` of a ``metadata={...}`` text of this module, parsed once per
        distinct text (kept in :attr:`parsed_metadata`)."""
        metadata = self.parsed_metadata.get(raw)
        if metadata is None:
            metadata = self.parsed_metadata[raw] = parse_metadata(raw)
        return metadata

    @property
    def is_scheduled(self) -> bool:
        return self.attributes.get("is_scheduled") == "true"

    @property
    def entry_computation_layout(self) -> str | None:
        return self.attributes.get("entry_computation_layout")

    def computation(self, name: str) -> Computation:
        return self.by_name[name.lstrip("%")]

    def get_computation(self, name: str) -> Computation | None:
        return self.by_name.get(name.lstrip("%"))

    def add(self, computation: Computation) -> Computation:
        computation.parent = self
        self.computations.append(computation)
        self.by_name[computation.name] = computation
        return computation

    def instructions(self) -> Iterator[Instruction]:
        """Every instruction of every computation, in text order."""
        for c in self.computations:
            yield from c.instructions

    @property
    def instruction_count(self) -> int:
        return sum(len(c.instructions) for c in self.computations)

    def callers(self) -> dict[str, list[Instruction]]:
        """Computation name → the instructions that call it (fusion, while, call, reduce …)."""
        out: dict[str, list[Instruction]] = {}
        for inst in self.instructions():
            for c in inst.called_computations:
                out.setdefault(c.name, []).append(inst)
        return out

    def __repr__(self) -> str:
        return f"<HloModule {self.name}: {len(self.computations)} computations, {self.instruction_count} instructions>"


@dataclass(frozen=True)
class ModuleSummary:
    """Counts that ``hloviz stats`` prints for a single module."""

    name: str
    computations: int
    instructions: int
    opcodes: dict[str, int] = field(default_factory=dict[str, int])
    fusions_by_kind: dict[str, int] = field(default_factory=dict[str, int])


def summarize(module: HloModule) -> ModuleSummary:
    """Count computations, instructions, opcodes and fusions by kind."""
    opcodes: dict[str, int] = {}
    kinds: dict[str, int] = {}
    for inst in module.instructions():
        opcodes[inst.opcode] = opcodes.get(inst.opcode, 0) + 1
        if inst.opcode == "fusion":
            k = inst.attributes.get("kind", "?")
            kinds[k] = kinds.get(k, 0) + 1
    opcodes = dict(sorted(opcodes.items(), key=lambda kv: (-kv[1], kv[0])))
    return ModuleSummary(module.name, len(module.computations), module.instruction_count, opcodes, kinds)
