"""Which layers an instruction and a kernel belong to: one answer for every view.

The scope tree (:mod:`hloviz.analysis.scopes`) files each instruction by its op name. Two kinds
of instructions say nothing true through their names, and this module decides for them:

* **Literals.** A constant, and what XLA builds from constants alone (a ``broadcast`` of an
  epsilon, an ``iota``), is not a layer's work: XLA merges equal literals across layers (one
  ``1e-3`` broadcast serves two batch norms) and keeps one of the op names. Such instructions
  never carry a kernel into a layer (:func:`literal_ids`).
* **Instructions without an op name.** XLA creates some (a weight-gradient convolution that a
  layout pass rebuilt, the copies of a weight before a transposed use). A convolution or ``dot``
  goes to the layer whose forward convolution reads the same activation
  (:mod:`hloviz.analysis.gradients`: what it computes, whoever reads the result — the optimizer,
  under SGD). The rest go to the layer their
  *data flow* names (:class:`FlowPlacer`): the innermost scope shared by the named instructions
  that consume their result (looking inside consuming fusions at the parameter they arrive at),
  else by those that produce their operands; with the phase those instructions have, so a
  gradient lands in its forward layer, marked ``backward``.

:func:`kernel_scopes` is the one function that orders a kernel's layers, heaviest work first:
the picture draws the kernel in the first, the side panel, the kernel table, ``stats --by
scope`` and ``--json`` list all of them in this order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING

from ..ir import Computation, Instruction, called_closure
from ..opcodes import HEAVY_WORK, LITERAL_SOURCES, NOT_PLACED_BY_FLOW, SCOPE_NEUTRAL
from .opnames import keras_layer_name

if TYPE_CHECKING:
    from .scopes import Scope

__all__ = ["HEAVY_WORK", "FlowPlacer", "common_scope", "kernel_scopes", "kernel_votes", "layer_text", "literal_ids"]

#: Opcodes that only spread a value to a shape: listed with their scope, but no weight in the vote.
_SPREADS = frozenset({"broadcast"})
_SOURCES = LITERAL_SOURCES
_NOT_PLACED = NOT_PLACED_BY_FLOW
#: How far data-flow evidence is followed through unnamed instructions inside a fusion.
_INSIDE_DEPTH = 8


def literal_ids(comp: Computation, literal_params: Iterable[int] = ()) -> set[int]:
    """``id()`` of the instructions of ``comp`` computed from literals alone: constants and
    iotas, and every instruction all of whose operands are literals (``broadcast(constant)``).
    ``literal_params`` numbers the parameters that receive a literal from the caller."""
    fed = set(literal_params)
    out: set[int] = set()
    for inst in comp.instructions:  # text order: operands come first
        if inst.opcode == "parameter":
            if inst.parameter_number in fed:
                out.add(id(inst))
        elif inst.opcode in _SOURCES or (inst.operands and all(id(o) in out for o in inst.operands)):
            out.add(id(inst))
    return out


def kernel_scopes(kernel: Instruction, scope_of: Callable[[Instruction], Scope | None],
                  phase_of: Callable[[Instruction], str], *, literals: set[int] | None = None,
                  ) -> list[tuple[Scope, set[str]]]:
    """The scopes whose work ``kernel`` runs, heaviest first, each with the phases of that work.

    A scope's weight is the sum over its instructions in the kernel (the kernel itself, its fused
    computations, reducers and callees) of :data:`HEAVY_WORK` (0 for a broadcast, 1 for other
    work); bookkeeping (parameters, tuples, bitcasts) and literals never vote (``literals``: the
    ``id()`` of the literal instructions of the kernel's computation, :func:`literal_ids`).
    Ties go to the scope whose work comes nearest the kernel's result (latest in the fused
    computation, which XLA writes operands first): a fusion that recomputes one batch norm to
    finish the next is the next one's. A broadcast gives its scope a phase only where that scope
    does no other work in the kernel: XLA copies a forward broadcast of a weight into the backward
    fusion that reads it (an RMSNorm's scale), which runs no forward work; a scope with nothing but
    broadcasts in a kernel where others work is not listed (a bias broadcast XLA shared between two
    calls of one layer). ``scope_of`` returns
    None for instructions that name no scope (they do not vote). Empty when nothing votes.
    """
    def filed(i: Instruction) -> tuple[Scope, str] | None:
        s = scope_of(i)
        return None if s is None else (s, phase_of(i))

    return kernel_votes(kernel, filed, literals=literals)


def kernel_votes(kernel: Instruction, filed: Callable[[Instruction], tuple[Scope, str] | None], *,
                 literals: set[int] | None = None) -> list[tuple[Scope, set[str]]]:
    """:func:`kernel_scopes` with one lookup per instruction: ``filed`` gives an instruction's
    scope and phase at once (None: it names no scope), as a dict's ``get`` does — the loop
    below runs once per instruction of every kernel of a module."""
    votes: dict[int, int] = {}
    last: dict[int, int] = {}
    found: dict[int, tuple[Scope, set[str]]] = {}
    spread: dict[int, set[str]] = {}  # the phases of a scope's broadcasts, where it has no other work
    heavy, spreads = HEAVY_WORK, _SPREADS
    for n, i in _working(kernel, literals or set()):
        hit = filed(i)
        if hit is None:
            continue
        s, phase = hit
        key = id(s)
        slot = found.get(key)
        if slot is None:
            slot = found[key] = (s, set())
            votes[key] = 0
        op = i.opcode
        weight = heavy.get(op, 0 if op in spreads else 1)
        (slot[1] if weight else spread.setdefault(key, set())).add(phase)
        votes[key] += weight
        last[key] = n
    for key, phases in spread.items():
        found[key][1].update(() if found[key][1] else phases)
    if any(votes.values()):  # a scope whose only part is a broadcast XLA shared with it does no work here
        found = {k: v for k, v in found.items() if votes[k]}
    return [found[k] for k in sorted(found, key=lambda k: (-votes[k], -last[k]))]


def _working(kernel: Instruction, outer: set[int]) -> Iterator[tuple[int, Instruction]]:
    """The instructions of ``kernel`` that may vote, each with its position (the kernel's own
    instruction 0, then its computations' in order): neither bookkeeping nor built from literals
    alone (``outer``: the ``id()`` of the literals of the kernel's computation)."""
    neutral = SCOPE_NEUTRAL
    sources = _SOURCES
    if kernel.opcode != "fusion" and kernel.opcode not in neutral and id(kernel) not in outer:
        yield 0, kernel  # a fusion's own name is its root's: its fused instructions vote
    direct = kernel.called_computations
    if not direct:
        return
    fed = {k for k, o in enumerate(kernel.operands) if id(o) in outer}
    n = 0
    for comp in called_closure(direct):
        lits: set[int] = set()
        top = comp in direct  # a nested computation's parameters count as data
        for i in comp.instructions:  # operands come first
            n += 1
            op = i.opcode
            if op == "parameter":
                if top and i.parameter_number in fed:
                    lits.add(id(i))
                continue
            if op in sources:
                lits.add(id(i))
                continue
            operands = i.operands
            if operands and lits:
                for o in operands:
                    if id(o) not in lits:
                        break
                else:
                    lits.add(id(i))
                    continue
            if op not in neutral:
                yield n, i


def layer_text(found: list[tuple[Scope, set[str]]]) -> str:
    """A kernel's layers (:func:`kernel_scopes`' answer) as one cell of a table: the innermost
    named scope holding them all, by the names users know, as ``stats --by scope`` writes them
    (:attr:`Scope.plain_path`: ``resblock/res_bn``, not the op names' ``resblock_1/res_bn_1``), else their top-level scopes joined by
    `` + `` (a layer's gradient fused with the optimizer's update: ``model + adam``); the phase
    follows in parentheses unless it is the forward pass alone — alone where no scope is named (a
    TensorFlow step's gradient of an op written at its top level: ``(backward)``, not "")."""
    from .opnames import PHASES

    phases = set().union(*(p for _s, p in found)) if found else set()
    phase = " (" + "+".join(p for p in PHASES if p in phases) + ")" if phases and phases != {"forward"} else ""
    named = [s for s, _p in found if s.kind == "scope"]
    if not named:
        return phase.strip()
    shared: Scope | None = named[0]
    for s in named[1:]:
        shared = common_scope(shared, s)
        if shared is None:
            break
    if shared is not None:
        text = shared.plain_path or shared.path
    else:
        tops: dict[str, None] = {}
        for s in named:
            top = ([s, *s.ancestors()][-2]) if s.depth > 1 else s
            tops.setdefault(top.plain_path or top.path, None)
        names = list(tops)
        text = " + ".join(names[:3]) + (f" + {len(names) - 3} more" if len(names) > 3 else "")
    return text + phase


class FlowPlacer:
    """Places instructions without an op name by their data flow (see the module docstring).

    ``named`` maps each instruction filed by its op name to its scope and phase. :meth:`place`
    answers for one unnamed instruction of a computation that runs on its own (the entry, a
    loop body); answers are memoised, and unnamed neighbours are placed first (consumers before
    producers), so a chain of unnamed copies follows the layer at its end.
    """

    def __init__(self, named: Mapping[Instruction, tuple[Scope, str]]) -> None:
        self.named = named
        self.placed: dict[int, tuple[Scope, str] | None] = {}
        self._users: dict[int, dict[Instruction, list[Instruction]]] = {}
        self._literals: dict[int, set[int]] = {}
        self._contents: dict[int, list[tuple[Scope, str]]] = {}
        self._params: dict[int, dict[int | None, list[Instruction]]] = {}
        #: the phase data flow gives an instruction it places in no layer (see :meth:`phase`)
        self.phases: dict[int, str] = {}

    def users(self, comp: Computation) -> dict[Instruction, list[Instruction]]:
        got = self._users.get(id(comp))
        if got is None:
            got = self._users[id(comp)] = comp.users()
        return got

    def literals(self, comp: Computation) -> set[int]:
        got = self._literals.get(id(comp))
        if got is None:
            got = self._literals[id(comp)] = literal_ids(comp)
        return got

    def place_computation(self, comp: Computation) -> None:
        """Place every unnamed instruction of ``comp``: by consumers (last first), then by
        producers (first first) for those no consumer names."""
        from .gradients import gradient_layers

        by_work = gradient_layers(comp, self.named, self.literals(comp))
        for inst, hit in by_work.items():  # what it computes beats who reads it (the optimizer)
            self.placed[id(inst)] = hit
        todo = [i for i in comp.instructions if i not in self.named and i.opcode not in _NOT_PLACED
                and id(i) not in self.literals(comp) and i not in by_work]
        for inst in reversed(todo):
            self.placed[id(inst)] = self._from(evidence := self._consumers(inst, comp), readers=True)
            if evidence:
                self.phases[id(inst)] = _phase(evidence, readers=True)
        for inst in todo:
            if self.placed.get(id(inst)) is None:
                self.placed[id(inst)] = self._from(evidence := self._producers(inst, comp), readers=False)
                if evidence and id(inst) not in self.phases:
                    self.phases[id(inst)] = _phase(evidence, readers=False)

    def result(self, inst: Instruction) -> tuple[Scope, str] | None:
        """The scope and phase data flow gives ``inst`` (None: it names no layer)."""
        return self.placed.get(id(inst))

    def phase(self, inst: Instruction) -> str | None:
        """The pass of an instruction :meth:`result` places in no layer, from the same evidence
        (None: none). XLA's split of a large reduction (an unnamed ``reduce-window`` between a
        gradient's multiply and its ``Sum``) reads and feeds only backward work: filed as forward
        by default, it drew ten of a transformer step's gradient reductions in its forward box."""
        return self.phases.get(id(inst))

    def _known(self, inst: Instruction) -> tuple[Scope, str] | None:
        hit = self.named.get(inst)
        return hit if hit is not None else self.placed.get(id(inst))

    def _consumers(self, inst: Instruction, comp: Computation) -> list[tuple[Scope, str]]:
        out: list[tuple[Scope, str]] = []
        for user in self.users(comp).get(inst, ()):
            if user.opcode == "fusion":
                for k, op in enumerate(user.operands):
                    if op is inst:
                        out.extend(self._inside_from_parameter(user, k))
                if not out:
                    out.extend(self._fusion_contents(user))
            else:
                hit = self._known(user)
                if hit is not None:
                    out.append(hit)
        return out

    def _producers(self, inst: Instruction, comp: Computation) -> list[tuple[Scope, str]]:
        out: list[tuple[Scope, str]] = []
        lits = self.literals(comp)
        for op in inst.operands:
            # an element of a kernel's result is that kernel's, or its own name's where it has one
            # (a step's returned variables: copies of its optimizer's conditional's results)
            for _ in range(_INSIDE_DEPTH):
                if op.opcode != "get-tuple-element" or op in self.named:
                    break
                op = op.operands[0]
            element = op.opcode == "get-tuple-element"  # (named, then)
            if id(op) in lits or (op.opcode in _NOT_PLACED and not element):
                continue
            hit = self._known(op)
            if hit is not None:
                out.append(hit)
            elif op.opcode == "fusion":
                out.extend(self._fusion_contents(op))
        return out

    def _inside_from_parameter(self, fusion: Instruction, k: int) -> list[tuple[Scope, str]]:
        """The named instructions inside ``fusion`` that first use what arrives at parameter
        ``k`` (through unnamed plumbing, a few steps deep)."""
        out: list[tuple[Scope, str]] = []
        for comp in fusion.called_computations:
            params = self._parameters(comp).get(k, ())
            users = self.users(comp)
            frontier = list(params)
            for _ in range(_INSIDE_DEPTH):
                nxt: list[Instruction] = []
                for x in frontier:
                    for u in users.get(x, ()):
                        hit = self.named.get(u)
                        if hit is not None:
                            out.append(hit)
                        else:
                            nxt.append(u)
                if out or not nxt:
                    break
                frontier = nxt
        return out

    def _parameters(self, comp: Computation) -> dict[int | None, list[Instruction]]:
        """``comp``'s parameters by number, found once (a concatenation's fusion has hundreds,
        each one looked up by every operand that feeds it)."""
        got = self._params.get(id(comp))
        if got is None:
            got = self._params[id(comp)] = {}
            for p in comp.instructions:
                if p.opcode == "parameter":
                    got.setdefault(p.parameter_number, []).append(p)
        return got

    def _fusion_contents(self, fusion: Instruction) -> list[tuple[Scope, str]]:
        """The scopes of the named, non-literal work inside ``fusion`` (memoised)."""
        got = self._contents.get(id(fusion))
        if got is None:
            got = self._contents[id(fusion)] = [
                (s, p) for s, phases in kernel_scopes(fusion, self._scope, self._phase) for p in sorted(phases)]
        return got

    def _scope(self, inst: Instruction) -> Scope | None:
        hit = self.named.get(inst)
        return hit[0] if hit is not None else None

    def _phase(self, inst: Instruction) -> str:
        hit = self.named.get(inst)
        return hit[1] if hit is not None else "forward"

    @staticmethod
    def _from(evidence: list[tuple[Scope, str]], *, readers: bool) -> tuple[Scope, str] | None:
        """The innermost named scope holding every piece of evidence, and the phase an
        instruction has between its ``readers`` (``True``) or its operands' producers: it runs
        before every reader, so it is the earliest of their phases (an input's ``reshape`` read by
        a layer's ``dot`` and by that dot's gradient is forward work, as is a weight's layout
        ``copy`` read by both convolutions), and after every producer, the latest of theirs.
        None when no named scope holds them all. The optimizer's evidence counts only when there
        is no other (it reads every weight). Ops named outside every scope (the top level) place
        it in no layer: it stays in the module's unnamed scope, with the pass :meth:`phase` gives
        (placing it at the top level moved a tenth of the samples' scope trees)."""
        if not evidence:
            return None
        layer_work = [e for e in evidence if e[1] != "optimizer"]
        if layer_work and len(layer_work) < len(evidence):
            evidence = layer_work  # a weight's copy read by its layer and by the optimizer: the layer's
        shared: Scope | None = evidence[0][0]
        for s, _p in evidence[1:]:
            shared = common_scope(shared, s)
            if shared is None:
                break
        if shared is None:
            shared = _one_layer_called_twice(evidence)
        if shared is None or shared.kind != "scope":
            return None
        return shared, _phase(evidence, readers=readers)


def _phase(evidence: list[tuple[Scope, str]], *, readers: bool) -> str:
    """The earliest pass among an instruction's ``readers``, or the latest among its producers
    (the optimizer's evidence only where there is no other: it reads every weight)."""
    from .opnames import PHASES

    layer_work = [e for e in evidence if e[1] != "optimizer"] or evidence
    order = [PHASES.index(p) if p in PHASES else -1 for _s, p in layer_work]
    return layer_work[order.index(min(order) if readers else max(order))][1]


def _one_layer_called_twice(evidence: list[tuple[Scope, str]]) -> Scope | None:
    """The first of the forward pass's scopes in ``evidence`` where they are one layer of a model
    called more than once (``discriminator_1/d_hidden``, ``discriminator_3/d_hidden``: Keras's
    call suffixes aside), else None. A GAN's discriminator, applied to real and to generated
    samples, reads each kernel's copy in both calls: the copy stood outside every layer (a row
    of its own in ``stats --by scope``, a box of its own in the pictures)."""
    forward = [s for s, p in evidence if p == "forward"]
    paths = {"/".join(keras_layer_name(part) for part in s.path.split("/")) for s in forward}
    # a layer of a model (``model/layer``): TensorFlow numbers its own ops so too (``AddN_1``)
    return forward[0] if len(paths) == 1 and "/" in next(iter(paths)) else None


def common_scope(a: Scope | None, b: Scope | None) -> Scope | None:
    """The innermost scope from op names holding both (None when they share none, or either is
    None)."""
    if a is None or b is None:
        return None
    if a.contains(b):
        return a if a.kind == "scope" else None
    for s in a.ancestors():
        if s.kind != "scope":
            return None
        if s.contains(b):
            return s
    return None
