"""One node of the scope tree, :class:`Scope`, and :data:`TOP_LEVEL`, the scope of ops named
outside every scope.

In: what the builder (:mod:`.build`, :mod:`.order`, :mod:`.labels`, :mod:`.totals`) fills in
while a tree is made: a scope's path, name, label and kind, its own instructions, its kernels and
phase counts, its children. Out: what one scope says about itself and its place in the tree: its
children in running order, the walks below and above it, its phase, and the paths a user knows
it by (:attr:`Scope.display_path`, :attr:`Scope.plain_path`).

A module of its own because a scope is the tree's model, what every view reads, and needs
nothing of the module it came from; :class:`~hloviz.analysis.scopes.tree.ScopeTree`
(:mod:`.tree`) holds the queries over a whole module's tree (a scope by path, op or instruction,
a kernel's layers, a cut and its graph).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from ...ir import Instruction
from ..opnames import PHASES

__all__ = ["Scope", "TOP_LEVEL"]

#: The scope of ops named outside every scope (``AddN_3``, JAX's argument names): the body of the
#: traced function itself. Like the ``(<computation>)`` scopes of unnamed instructions, it is a
#: scope of hloviz's making, so that the root's children cover every instruction.
TOP_LEVEL = "(top level)"


@dataclass(eq=False)
class Scope:
    """One node of the scope tree: a layer, a block, a name scope, or the instructions of one
    computation that carry no op name.

    ``path`` is the scope's path as the forward op names write it (``transformer_1/block_0_1``;
    JAX transformations unwrapped; "" for the root), ``name`` its last segment as written and
    ``label`` the name a user knows it by (Keras' ``_N`` re-entry suffix taken off). ``depth``
    is 0 for the root (the whole module), 1 for top-level scopes. ``instructions`` are the
    scope's own (not its children's), in text order. ``kernels`` names, in execution order, the
    kernels holding at least one instruction of this scope or below it (post-optimization trees
    only). ``phases`` counts the instructions of this scope and below by phase.
    """

    path: str
    name: str
    depth: int
    parent: Scope | None = field(default=None, repr=False)
    label: str = ""
    #: ``scope`` (from op names), ``top`` (ops named outside every scope, :data:`TOP_LEVEL`),
    #: ``unnamed`` (instructions without an op name, one scope per computation) or ``root``.
    kind: str = "scope"
    instructions: list[Instruction] = field(default_factory=list, repr=False)
    kernels: tuple[str, ...] = field(default=(), repr=False)
    phases: dict[str, int] = field(default_factory=dict, repr=False)
    #: ``kernels`` split by the phase of the ops they hold here (a kernel may be in two).
    kernels_by_phase: dict[str, tuple[str, ...]] = field(default_factory=dict, repr=False)
    #: The scope paths as the op names wrote them (``gradient_tape/model_1/dense_1``, …).
    written_as: set[str] = field(default_factory=set, repr=False)
    _children: dict[str, Scope] = field(default_factory=dict, repr=False)

    @property
    def children(self) -> list[Scope]:
        """Sub-scopes in the order the program runs them: after the scopes they take data
        from, else by their first instruction; hloviz's own scopes (in parentheses) last."""
        return list(self._children.values())

    def child(self, name: str) -> Scope | None:
        return self._children.get(name)

    # --- growing the tree (for :mod:`.build` and :mod:`.order`, while a tree is made) ------------

    def add_child(self, child: Scope) -> Scope:
        """Put ``child`` last among this scope's children, under its name; return it."""
        self._children[child.name] = child
        return child

    def reorder_children(self, children: Iterable[Scope]) -> None:
        """The same children in the order given."""
        new = {c.name: c for c in children}
        if new.keys() != self._children.keys():
            raise ValueError(f"reordering the children of {self.path or '(root)'} must keep the same children")
        self._children = new

    def remove_child(self, name: str) -> None:
        """Take the child ``name`` out of this scope."""
        del self._children[name]

    @property
    def phase(self) -> str:
        """``forward``, ``backward`` or ``optimizer`` when all its instructions agree, else the
        phases present joined by ``+`` in running order (``forward+backward``); "" if empty."""
        present = [p for p in PHASES if self.phases.get(p)]
        return "+".join(present)

    def walk(self) -> Iterator[Scope]:
        """This scope and every scope below it, depth first, in order of appearance."""
        stack: list[Scope] = [self]
        while stack:
            s = stack.pop()
            yield s
            stack.extend(reversed(s.children))

    def all_instructions(self) -> Iterator[Instruction]:
        """The instructions of this scope and of every scope below it."""
        for s in self.walk():
            yield from s.instructions

    def ancestors(self) -> Iterator[Scope]:
        """The enclosing scopes, innermost first (the root last)."""
        s = self.parent
        while s is not None:
            yield s
            s = s.parent

    def contains(self, other: Scope) -> bool:
        """Is ``other`` this scope or below it?"""
        return other is self or any(a is self for a in other.ancestors())

    @property
    def display_path(self) -> str:
        """The path in the names users know (labels joined by ``/``): below JAX's traced
        function, without it (``ViT/blocks/mlp``, not ``jit(train_step)/ViT/blocks/mlp``: every
        op name of a JAX module starts with ``jit(f)``, so it names no layer); the function's own
        scope keeps its name."""
        if self.kind == "root":
            return ""
        chain = [self] + [a for a in self.ancestors() if a.kind != "root"]
        if len(chain) > 1 and chain[-1].is_function:
            chain.pop()
        return "/".join(s.label for s in reversed(chain))

    @property
    def plain_path(self) -> str:
        """:attr:`display_path` with the traced function's own scope by its name
        (``vit_forward``, not ``jit(vit_forward)``): the vocabulary of every table a user reads
        (``stats --by scope``, the explorer's ``plain_name``)."""
        if self.is_function:
            return self.name[self.name.index("(") + 1:-1]
        return self.display_path

    @property
    def is_function(self) -> bool:
        """Is this JAX's scope of the traced function (``jit(f)``, ``pjit(f)``: a top-level
        scope every op name of the module starts with)?"""
        return self.kind == "scope" and self.parent is not None and self.parent.kind == "root" \
            and self.name.startswith(("jit(", "pjit(")) and self.name.endswith(")")

    def __repr__(self) -> str:
        return f"<Scope {self.path or '(root)'}: {sum(self.phases.values())} instructions>"
