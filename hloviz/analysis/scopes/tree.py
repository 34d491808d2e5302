"""The model's own structure: a tree of scopes (layers, blocks, name scopes) built from op names.

Every instruction TensorFlow or JAX emits carries its op's name (``metadata.op_name``), and the
name is a path: ``transformer_1/block_0_1/attention_1/Softmax`` is the op ``Softmax`` in the
scope ``transformer_1/block_0_1/attention_1``. :func:`build_scope_tree` files every instruction
of a module (pre- or post-optimization, fused computations included) under the scope its op name
gives, as :mod:`hloviz.analysis.opnames` reads it:

* the backward pass of a layer (``gradient_tape/…``, JAX's ``transpose(jvp(…))``) goes into the
  layer's own scope, its instructions marked ``backward``; an optimizer's update is ``optimizer``;
* instructions without an op name (or with TF's argument/result plumbing names ``XLA_Args`` /
  ``XLA_Retvals``), and the tape's top-level sums of gradients (``AddN``), go to the layer their
  data flow names (:class:`hloviz.analysis.attribution.FlowPlacer`: the innermost scope of the
  named instructions that consume them, else of those that produce their operands, with their
  phase); inside a fused computation, a reducer or a called function they belong to their
  caller's scope; what data flow does not place goes to a scope of its own per computation,
  ``(<computation name>)``, and ops named outside every scope to :data:`TOP_LEVEL`; so the
  root's children cover all;
* a called function's ops (JAX's nested ``jit``, a ``call`` before optimization) are named
  relative to the call, as XLA's inliner will name them;
* entry parameters named after a layer's variable (``model/dense/kernel``, JAX's
  ``params['Dense_0']['kernel']``) are filed in that layer;
* in a post-optimization module each kernel is attributed to every scope whose work it runs,
  literals aside (:attr:`Scope.kernels`): a fusion that spans two layers is listed under both,
  and :meth:`ScopeTree.scopes_of_kernel` / :meth:`ScopeTree.layers_of` say which, heaviest work
  first — the one answer the picture, the explorer, the kernel table and ``--json`` give.

Scopes are found by path, by Keras layer name (``block_5_expand`` answers for
``block_5_expand_1``), by a full op name or by a unique substring (:meth:`ScopeTree.find`); an
unknown name gets the closest matches (:meth:`ScopeTree.closest`). A *cut* through the tree
(:meth:`ScopeTree.cut`) is the set of scopes a picture draws as nodes, and
:meth:`ScopeTree.graph` the data flow between them (the instruction graph's quotient by scope).

This module is :class:`ScopeTree`, the queries over the tree those rules fill in; its nodes,
:class:`Scope` and :data:`TOP_LEVEL`, are the model (:mod:`.scope`). In: the scopes and the
filing :mod:`.build` made. Out: the answers every view asks for (a scope by path, name or
instruction; a kernel's layers; a cut and its graph).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

from ...ir import HloModule, Instruction
from ..kernels import KernelReport
from ..opnames import PHASES, parse_op_name
from .scope import TOP_LEVEL, Scope

if TYPE_CHECKING:
    import networkx as nx

# Scope, PHASES and TOP_LEVEL stay importable from here, where the tree's readers always found them.
__all__ = ["Scope", "ScopeTree", "PHASES", "TOP_LEVEL"]


class ScopeTree:
    """The scope tree of one module (see the module docstring); build it with
    :func:`build_scope_tree`."""

    def __init__(self, module: HloModule, root: Scope, of: dict[Instruction, Scope],
                 phase: dict[Instruction, str], stage: str, report: KernelReport | None, *,
                 op_scope: dict[str, Scope] | None = None,
                 votes: dict[Instruction, tuple[Scope, str]] | None = None,
                 literals: Mapping[int, set[int]] | None = None,
                 fusion_callers: dict[str, Instruction] | None = None, own_updates: Sequence[Scope] = ()) -> None:
        self.module = module
        self.root = root
        self.stage = stage
        self.kernel_report = report
        self._of = of
        self._phase = phase
        self._by_path = {s.path: s for s in root.walk()}
        self._kernel_scopes: dict[str, tuple[Scope, ...]] = {}
        #: :meth:`layers_of` answered by vote, per kernel (a reused tree is asked again by every
        #: picture of a page: ``--scope``'s fusions, each closed fusion's layer); emptied by
        #: whatever refiles an instruction
        self._voted: dict[Instruction, tuple[Scope, ...]] = {}
        #: A framework op's name → the scope its instructions were filed under.
        self._op_scope: dict[str, Scope] = op_scope if op_scope is not None else {}
        #: The instructions filed by their own op name (the ones whose scope is a vote) → their
        #: scope and phase, as filed.
        self._votes: dict[Instruction, tuple[Scope, str]] = votes if votes is not None else {}
        #: id(computation) → the ids of its literal instructions (found while placing by data flow).
        self._literals: dict[int, set[int]] = dict(literals) if literals is not None else {}
        #: Fused computation name → the first fusion calling it (None: not gathered while building).
        self._fusion_callers: dict[str, Instruction] | None = fusion_callers
        #: The scopes holding an update the user wrote and named (TensorFlow, no optimizer named):
        #: their optimizer work stays in them (:func:`hloviz.analysis.updates.update_targets`).
        self.own_updates: tuple[Scope, ...] = tuple(own_updates)
        #: Optimizer op name → path of the layer whose variables it updates
        #: (:func:`hloviz.analysis.updates.optimizer_targets`; empty until computed).
        self.updates: dict[str, str] = {}

    # --- walking -------------------------------------------------------------------------------

    def walk(self) -> Iterator[Scope]:
        """Every scope, the root first, depth first in order of appearance."""
        return self.root.walk()

    def __len__(self) -> int:
        return len(self._by_path)

    def get(self, path: str) -> Scope | None:
        """The scope at exactly ``path`` ("" is the root)."""
        return self._by_path.get(path.strip("/"))

    @property
    def paths(self) -> Mapping[str, Scope]:
        """Every scope by its path ("" is the root); read only."""
        return self._by_path

    @property
    def filing(self) -> Mapping[Instruction, Scope]:
        """Every filed instruction → its (innermost) scope; read only. The same answers as
        :meth:`scope_of` / :meth:`is_filed`, as a mapping for the walks that ask it per operand."""
        return self._of

    @property
    def phases(self) -> Mapping[Instruction, str]:
        """Every filed instruction → its phase (``forward``, ``backward``, ``optimizer``); read
        only. An instruction missing here is ``forward`` (:meth:`phase_of`)."""
        return self._phase

    @property
    def fusion_callers(self) -> Mapping[str, Instruction] | None:
        """Fused computation name → the first fusion calling it, as gathered while the tree was
        built; None when the builder did not gather them (the caller then finds them itself)."""
        return self._fusion_callers

    def filed(self) -> Iterable[tuple[Instruction, Scope]]:
        """Every instruction of the module with the (innermost) scope it was filed under."""
        return self._of.items()

    def scope_of(self, instruction: Instruction) -> Scope:
        """The (innermost) scope an instruction was filed under."""
        return self._of[instruction]

    def scope_of_op(self, op_name: str, op_type: str = "") -> Scope:
        """The scope of a framework op given by name (an op of the pre-optimization graph, or
        one that never reached the HLO, such as TF's ``Const``): where its instructions were
        filed, else the deepest existing scope on its name's path (the root at worst)."""
        hit = self._op_scope.get(op_name)
        if hit is not None:
            return hit
        parts = parse_op_name(op_name, op_type).scope
        if not parts:
            top = self.root.child(TOP_LEVEL)
            return top if top is not None else self.root
        s = self.root
        for part in parts:
            nxt = s.child(part)
            if nxt is None:
                break
            s = nxt
        return s

    def phase_of(self, instruction: Instruction) -> str:
        """``forward``, ``backward`` or ``optimizer``."""
        return self._phase.get(instruction, "forward")

    def is_filed(self, instruction: Instruction) -> bool:
        """Was ``instruction`` filed under a scope of this tree (is it of this module)?"""
        return instruction in self._of

    # --- changing the tree (for :mod:`.build`, before anyone reads it) --------------------------

    def refile(self, instruction: Instruction, scope: Scope, phase: str) -> None:
        """Record ``instruction`` as filed under ``scope`` with ``phase`` (the caller moves it
        between the scopes' ``instructions`` lists)."""
        self._of[instruction] = scope
        self._phase[instruction] = phase
        self._voted.clear()

    def remove_empty(self, scope: Scope) -> None:
        """Take ``scope``, which holds no instruction and no child, out of the tree."""
        if scope.instructions or scope.children or scope.parent is None:
            raise ValueError(f"only an empty scope below the root can be removed, not {scope!r}")
        scope.parent.remove_child(scope.name)
        self._by_path.pop(scope.path, None)

    def set_kernel_scopes(self, kernel: str, scopes: tuple[Scope, ...]) -> None:
        """Record the scopes ``kernel`` is attributed to, heaviest first (what
        :meth:`scopes_of_kernel` and :meth:`layers_of` answer)."""
        self._kernel_scopes[kernel] = scopes
        self._voted.clear()

    def at_depth(self, scope: Scope, depth: int) -> Scope:
        """``scope`` itself if it is no deeper than ``depth``, else its ancestor at ``depth``."""
        while scope.depth > depth and scope.parent is not None:
            scope = scope.parent
        return scope

    def cut(self, depth: int) -> list[Scope]:
        """The scopes a picture at ``depth`` draws: every scope at that depth, and every shallower
        scope with instructions of its own (a leaf above ``depth``, or the root's loose ops).
        Each instruction belongs to exactly one of them: ``at_depth(scope_of(i), depth)``."""
        out = []
        for s in self.walk():
            if s.depth == depth or (s.depth < depth and s.instructions):
                out.append(s)
        return out

    @property
    def model_depth(self) -> int:
        """How many levels above the model's own scopes the tree starts: 1 when the traced
        function is a scope of its own (JAX writes ``jit(f)/…`` in front of every op name, so
        Flax's ``Net/Dense_0`` sits at depth 3), else 0. A depth asked of :func:`scope_rows` or a
        picture counts from the model when added to it."""
        named = [c for c in self.root.children if c.kind == "scope"]
        return 1 if len(named) == 1 and named[0].name.startswith(("jit(", "pjit(")) else 0

    @property
    def max_depth(self) -> int:
        return max(s.depth for s in self.walk())

    # --- kernels -------------------------------------------------------------------------------

    def scopes_of_kernel(self, kernel: str) -> tuple[Scope, ...]:
        """The innermost scopes holding the ops of ``kernel`` (several when a fusion spans layers)."""
        return self._kernel_scopes.get(kernel.lstrip("%"), ())

    def layers_with_phases(self, kernel: Instruction) -> list[tuple[Scope, set[str]]]:
        """The scopes whose work the kernel instruction ``kernel`` runs, heaviest first, with the
        phases of that work: :func:`hloviz.analysis.attribution.kernel_scopes` over the
        instructions filed by their op names (literals aside); a kernel none of whose
        instructions votes, its own instruction's scope (by op name or data flow). The one rule
        every view follows: the picture draws a kernel in the first, the rest list all."""
        from ..attribution import kernel_votes, literal_ids

        comp = kernel.parent
        lits: set[int] = set()
        if comp is not None:
            got = self._literals.get(id(comp))
            if got is None:
                got = self._literals[id(comp)] = literal_ids(comp)
            lits = got
        # a dict read, not a Python call, per instruction (the 300k-instruction module's picture
        # votes on 127k of them)
        found = kernel_votes(kernel, self._votes.get, literals=lits)
        if not found and kernel in self._of:
            found = [(self._of[kernel], {self.phase_of(kernel)})]
        return found

    def layers_of(self, kernel: Instruction) -> tuple[Scope, ...]:
        """The scopes of :meth:`layers_with_phases`, heaviest first."""
        hit = self._kernel_scopes.get(kernel.name)  # instruction names are unique in a module
        if hit is not None:
            return hit
        voted = self._voted.get(kernel)
        if voted is None:
            voted = self._voted[kernel] = tuple(s for s, _p in self.layers_with_phases(kernel))
        return voted

    def kernel_spans(self, kernel: str, depth: int) -> tuple[Scope, ...]:
        """The scopes of a cut at ``depth`` that ``kernel`` holds ops of, in order of appearance."""
        seen: dict[int, Scope] = {}
        for s in self.scopes_of_kernel(kernel):
            a = self.at_depth(s, depth)
            seen.setdefault(id(a), a)
        return tuple(seen.values())

    # --- lookups -------------------------------------------------------------------------------

    def find(self, query: str, *, substring: bool = True) -> list[Scope]:
        """Scopes answering to ``query``, best kind of match first (and only that kind):

        1. the exact path, or the path as an op name wrote it (``gradient_tape/…`` included);
        2. the path with Keras' re-entry suffixes left out (``model/block_5_expand``);
        3. an op name: the scope of that op (``…/block_5_expand_1/Conv2D``);
        4. scopes whose last segments match (``block_5_expand``, ``block_5/expand``);
        5. scopes named as a block of them (``block_5`` → ``block_5_expand``, ``block_5_add``…:
           Keras applications name a block's layers so; not ``block_50``);
        6. a substring of a path or label, if it picks out scopes (the outermost of them) —
           unless ``substring`` is False.
        """
        from .find import find_scopes

        return find_scopes(self, query, substring=substring)

    def closest(self, query: str, n: int = 5) -> list[str]:
        """Up to ``n`` scopes that look most like ``query`` (for "did you mean"), each by the path
        users know (:attr:`Scope.display_path`, as ``stats --by scope`` writes it), which
        :meth:`find` takes back."""
        from .find import closest_scopes

        return closest_scopes(self, query, n)

    # --- the scope-level graph -----------------------------------------------------------------

    def graph(self, depth: int | None = None, *, scopes: Iterable[Scope] | None = None) -> nx.DiGraph:
        """The data flow between the scopes of a cut: the instruction graph's quotient by scope.

        Nodes are scope paths (attributes ``scope``: the :class:`Scope`, ``instructions``: how
        many it stands for); an edge ``a → b`` means some instruction of ``a`` is an operand of
        one of ``b`` (attributes ``count``: how many such operand uses, ``bytes``: the bytes
        they carry). ``depth`` picks the cut (:meth:`cut`; default: the deepest), or ``scopes``
        gives any set of scopes that covers the tree without overlap (an instruction goes to
        the innermost given scope that contains it). Operand edges of every computation count,
        fused ones included, and a called computation's parameters link to the caller's operands.
        """
        from .graph import scope_graph

        return scope_graph(self, depth, scopes=scopes)

    def to_dict(self, depth: int | None = None) -> dict:
        """The tree as nested JSON-ready data, down to ``depth`` (all when None): for each scope
        ``path``, ``name``, ``label``, ``kind``, ``depth``, ``phase``, ``instructions`` (how many,
        its own and below), ``kernels`` (names; post-optimization trees), ``children``."""
        def node(s: Scope) -> dict:
            out = {"path": s.path, "name": s.name, "label": s.label, "kind": s.kind, "depth": s.depth,
                   "phase": s.phase, "instructions": sum(s.phases.values()), "kernels": list(s.kernels)}
            if depth is None or s.depth < depth:
                out["children"] = [node(c) for c in s.children]
            return out

        return node(self.root)

    def __repr__(self) -> str:
        return f"<ScopeTree {self.module.name} ({self.stage}): {len(self)} scopes>"
