"""A computation: :class:`Computation`, the walk over what computations call, and the hook the parser fills.

In: instructions in text order. Out: the named list with its parameters, root and signature, and
:func:`called_closure` over the calls. Its own module because it is the container between an
instruction and the module; :func:`set_text_readers` lets the parser (above the IR) read
signatures kept as text without the IR importing it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..source import Span
    from .instruction import Instruction
    from .module import HloModule
    from .shapes import Shape


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
