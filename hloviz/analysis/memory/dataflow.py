"""Values, buffers and live ranges of a module, by XLA's rules (no XLA needed).

XLA's buffer assignment starts from three analyses, which this module redoes on hloviz's IR:

* **dataflow** (``hlo_dataflow_analysis.cc``): which instruction *defines* a value at each shape
  index. Most ops define all of theirs; ``bitcast``, ``get-tuple-element``, ``call``,
  ``opt-barrier`` define none (they pass values along); ``tuple`` (and ``copy`` of a tuple)
  define only the top-level pointer table, 8 bytes per element; a ``while`` loop defines *phi*
  values (at its condition's and body's parameter and its result) at each index where the body
  changes the state; a ``get-tuple-element`` reads only the pointer table, a ``tuple`` reads
  nothing (``MayUseOperandValue``);
* **aliasing** (``hlo_alias_analysis.cc``): values that must share storage form one *buffer*: a
  while loop's init, body parameter, body root and result; a conditional's branch roots and
  result; a donated parameter and the output it is aliased to (``input_output_alias``); the
  result of an in-place update (``dynamic-update-slice``, ``scatter``, a fusion rooted in one,
  ``output_to_operand_aliasing``) and the operand it overwrites;
* **live ranges** (``hlo_live_range.cc``): time is the position in the schedule with the bodies of
  control flow inlined before their caller; a value lives from its definition to its last use
  (a loop's init until its condition starts, the condition's phi until the body starts, the
  body's root until the loop); entry parameters live throughout (a donated one until its last
  use) and outputs until the end. ``tests/test_memory_corpus.py`` checks every range against
  XLA's own ``HloLiveRange`` on 47 programs.

The computations fusions and reducers call are not in the schedule: their values live in
registers or in thread-local slots (:func:`thread_local_slots`).

The records it fills are :mod:`.values`'s; the aliasing attributes it reads, :mod:`.aliasing`'s.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import pairwise

from hloviz.ir import Computation, HloModule, Instruction, Shape
from hloviz.opcodes import DEFINES_NO_BUFFER, DEFINES_TOP_LEVEL_ONLY, IN_PLACE, THREAD_LOCAL_CALLERS

from .aliasing import entry_aliases, in_place_pairs
from .values import Buffer, Dataflow, Node, Tree, Value, shape_bytes, top_value, tree_values

__all__ = ["Buffer", "Dataflow", "Tree", "Value", "analyse", "positions", "shape_bytes", "top_value"]


class _Builder:
    def __init__(self, module: HloModule) -> None:
        self.module = module
        self.sequence: list[Instruction] = []
        self.trees: dict[Instruction, Tree] = {}
        self.values: list[Value] = []
        # a body's parameters → the caller's operand trees (_PHI: a loop's, defining phi values)
        self.forward: dict[Computation, list[Tree]] = {}
        self.loop_state: list[Tree] = []  # each while loop's state (its init operand)

    # -- values ---------------------------------------------------------------------------
    def define(self, inst: Instruction, shape: Shape, index: tuple[int, ...] = (), *, top_only: bool = False,
               inherit: Tree = None) -> Tree:
        """A fresh value at every index of ``shape`` (pre-order, as XLA numbers them); with
        ``top_only``, only the pointer table is new and the elements are ``inherit``'s."""
        if not shape.is_tuple:
            return self._new(inst, shape, index)
        if top_only and isinstance(inherit, Node):
            return Node(self._new(inst, shape, index), list(inherit.elements))
        root = Node(self._new(inst, shape, index), [])
        # explicit stack (tuple shapes may nest as deeply as the input does), pre-order like
        # the recursion it replaces: an element's whole subtree before the next element
        stack: list[tuple[Node, Shape, tuple[int, ...]]] = [
            (root, s, index + (i,)) for i, s in reversed(list(enumerate(shape.tuple_shapes)))]
        while stack:
            parent, sh, idx = stack.pop()
            if sh.is_tuple:
                node = Node(self._new(inst, sh, idx), [])
                parent.elements.append(node)
                stack.extend((node, s, idx + (i,)) for i, s in reversed(list(enumerate(sh.tuple_shapes))))
            else:
                parent.elements.append(self._new(inst, sh, idx))
        return root

    def _new(self, inst: Instruction, shape: Shape, index: tuple[int, ...]) -> Value:
        v = Value(inst, index, shape, len(self.sequence))
        self.values.append(v)
        return v

    # -- the walk -------------------------------------------------------------------------
    def computation(self, comp: Computation) -> None:
        """Walk ``comp`` and, where they are called, the computations it calls, on a stack of its
        own: calls nested a thousand deep would pass Python's recursion limit."""
        stack = [self._walk(comp)]
        while stack:
            called = next(stack[-1], None)
            if called is None:
                stack.pop()
            else:  # the caller resumes once ``called`` is walked
                stack.append(self._walk(called))

    def _walk(self, comp: Computation) -> Iterator[Computation]:
        for inst in comp.instructions:
            yield from self.instruction(inst, comp)
        # what the root holds lives to the end of the computation's span (XLA: a root position)
        span_end = len(self.sequence)
        if comp.root is not None:
            for v in tree_values(self.trees.get(comp.root)):
                v.last_use = max(v.last_use, span_end)

    def instruction(self, inst: Instruction, comp: Computation) -> Iterator[Computation]:  # noqa: C901 - one case per rule
        """Define ``inst``'s values; yields each computation it calls, to be walked before it goes on."""
        op = inst.opcode
        operands = [self.trees.get(o) for o in inst.operands]
        used = operands  # the trees this instruction reads at its own time
        calls = inst.calls_by_attribute
        if op == "while":
            init = operands[0] if operands else None
            self.loop_state.append(init)
            cond = calls.get("condition", [None])[0]
            body = calls.get("body", [None])[0]
            for c in (cond, body):
                if c is not None:
                    self.forward[c] = _PHI  # its parameter defines the loop's phi values
                    yield c
            used = []
            cond_phi = self.trees.get(cond.parameters[0]) if cond is not None and cond.parameters else None
            body_phi = self.trees.get(body.parameters[0]) if body is not None and body.parameters else None
            root = self.trees.get(body.root) if body is not None and body.root is not None else None
            tree = self.define(inst, inst.shape)
            tree = self.close_loop(init, cond_phi, body_phi, root, tree)
        elif op == "call" or op == "async-start":
            tree = None
            if op == "call":
                used = []  # read where the called computation reads them
            for c in inst.called_computations:
                self.forward[c] = operands
                yield c
                if op == "call" and c.root is not None:
                    tree = self.trees.get(c.root)
            if op == "async-start":
                tree = self.define(inst, inst.shape)
        elif op == "conditional":
            branches = inst.called_computations
            for b, c in enumerate(branches):
                self.forward[c] = [operands[b + 1] if b + 1 < len(operands) else None]
                yield c
            tree = self.define(inst, inst.shape)
            for c in branches:
                if c.root is not None:
                    _merge(tree, self.trees.get(c.root))
        elif op == "parameter":
            fwd = self.forward.get(comp)
            if fwd is None or fwd is _PHI:  # the entry's own parameters; a loop's phi values
                tree = self.define(inst, inst.shape)
            else:
                n = inst.parameter_number or 0
                tree = fwd[n] if n < len(fwd) else None
        elif op == "get-tuple-element":
            src = operands[0] if operands else None
            k = int(inst.attributes.get("index", "0"))
            tree = src.elements[k] if isinstance(src, Node) and k < len(src.elements) else None
        elif op in DEFINES_NO_BUFFER:  # bitcast, opt-barrier, domain, add-dependency
            tree = operands[0] if operands else None
        elif op in DEFINES_TOP_LEVEL_ONLY:
            tree = Node(self._new(inst, inst.shape, ()), list(operands))
        elif op == "copy" and inst.shape.is_tuple:
            tree = self.define(inst, inst.shape, top_only=True, inherit=operands[0] if operands else None)
        else:
            tree = self.define(inst, inst.shape)
            if op in IN_PLACE or op == "fusion" or op == "custom-call":  # (a LAPACK call's output_to_operand_aliasing)
                for out_index, operand, operand_index in in_place_pairs(inst):
                    if operand < len(operands):
                        _merge(_subtree(tree, out_index), _subtree(operands[operand], operand_index))
        if op == "get-tuple-element" or (op == "copy" and inst.shape.is_tuple):
            used = [_top(t) for t in used]  # they read the pointer table only (MayUseOperandValue)
        elif op in DEFINES_TOP_LEVEL_ONLY:
            used = []  # a tuple passes its operands along without reading them
        self.trees[inst] = tree
        time = len(self.sequence)
        for t in used:
            _use(t, time)
        self.sequence.append(inst)


    def close_loop(self, init: Tree, cond: Tree, body: Tree, root: Tree, result: Tree) -> Tree:
        """Join a while loop's values index by index, as XLA's SSA dataflow does: where the body
        hands its parameter's value back unchanged (``root`` is ``body`` there) there is no phi,
        the init value flows through and the phi values made for that index are dropped; elsewhere
        the init, the condition's and body's parameter values, the body's root and the loop's
        result are one buffer. The init is read until the condition starts, the condition's
        parameter until the body starts (``HloLiveRange``). Returns the loop's result tree."""
        stack: list[tuple[Tree, Tree, Tree, Tree, Tree, Node | None, int]] = [
            (init, cond, body, root, result, None, -1)]
        out = result
        while stack:
            i, c, p, r, w, parent, k = stack.pop()
            if r is p and p is not None:  # passthrough: the init itself, no phi
                for t in (c, p, w):
                    for v in tree_values(t):
                        v.dropped = True
                        for iv in tree_values(i):
                            iv.last_use = max(iv.last_use, v.last_use)
                if parent is None:
                    out = i
                else:
                    parent.elements[k] = i
                continue
            tops = [t.top if isinstance(t, Node) else t for t in (i, c, p, r, w)]
            vi, vc, vp, vr, vw = (t if isinstance(t, Value) else None for t in tops)
            if vi is not None and vc is not None:
                _use(vi, vc.time)
            if vc is not None and vp is not None:
                _use(vc, vp.time)
            for a in (vi, vc, vp, vr):
                if a is not None and vw is not None:
                    _merge(a, vw)
            if isinstance(w, Node):
                for n, we in enumerate(w.elements):
                    stack.append(tuple(_element(t, n) for t in (i, c, p, r)) + (we, w, n))  # type: ignore[arg-type]
        return out


def _top(tree: Tree) -> Tree:
    return tree.top if isinstance(tree, Node) else tree


def _element(tree: Tree, n: int) -> Tree:
    return tree.elements[n] if isinstance(tree, Node) and n < len(tree.elements) else None


_PHI: list[Tree] = []  # marker (by identity) in _Builder.forward


def _use(tree: Tree, time: int) -> None:
    for v in tree_values(tree):
        if time > v.last_use:
            v.last_use = time


def _subtree(tree: Tree, index: tuple[int, ...]) -> Tree:
    for k in index:
        if not isinstance(tree, Node) or k >= len(tree.elements):
            return None
        tree = tree.elements[k]
    return tree


def _find(v: Value) -> Value:
    root = v
    while root.parent is not None:
        root = root.parent
    while v.parent is not None and v.parent is not root:
        v.parent, v = root, v.parent
    return root


def _merge(a: Tree, b: Tree) -> None:
    """Union the values of two trees index by index (where both have a value)."""
    stack: list[tuple[Tree, Tree]] = [(a, b)]  # explicit: trees nest as deeply as tuple shapes
    while stack:
        x, y = stack.pop()
        if isinstance(x, Value) and isinstance(y, Value):
            rx, ry = _find(x), _find(y)
            if rx is not ry:
                ry.parent = rx
        elif isinstance(x, Node) and isinstance(y, Node):
            pairs: list[tuple[Tree, Tree]] = list(zip(x.elements, y.elements))
            stack.extend(reversed(pairs))
            if x.top is not None and y.top is not None:
                stack.append((x.top, y.top))


def analyse(module: HloModule) -> Dataflow:
    """Values, buffers and live ranges of ``module``'s entry (see the module docstring)."""
    entry = module.entry
    if entry is None:
        from hloviz.errors import InputError

        raise InputError(f"module {module.name} has no ENTRY computation; there is nothing to run")
    order = "scheduled" if module.is_scheduled else (
        "the order of the text (the module is not scheduled: XLA's scheduler may order it differently)")
    b = _Builder(module)
    b.computation(entry)
    end = len(b.sequence)
    root_tree = b.trees.get(entry.root) if entry.root is not None else None
    for v in tree_values(root_tree):
        v.live_out = True
    params = {p.parameter_number: b.trees.get(p) for p in entry.parameters}
    # input_output_alias: the donated parameter and the output written into it are one buffer
    # (XLA's alias analysis joins them); each keeps a live range of its own (XLA's HloLiveRange
    # ends a donated parameter at its last use).
    donated: dict[int, int] = {}  # id(value) → pair number, for both sides of each pair
    for pair, (out_index, number, param_index) in enumerate(entry_aliases(module)):
        param_tree, out_tree = _subtree(params.get(number), param_index), _subtree(root_tree, out_index)
        for v in tree_values(param_tree):
            donated[id(v)] = pair
        for v in tree_values(out_tree):
            donated.setdefault(id(v), pair)
        _merge(param_tree, out_tree)
    param_values = {id(v) for t in params.values() for v in tree_values(t)}
    groups: dict[int, list[Value]] = {}
    for v in b.values:
        if not v.dropped:
            groups.setdefault(id(_find(v)), []).append(v)
    buffers = [_buffer(values, param_values, donated, end) for values in groups.values()]
    buffers.sort(key=lambda buf: (buf.start, buf.end))
    of_value = {id(v): buf for buf in buffers for v in buf.values}
    loops: dict[int, Buffer] = {}
    for state in b.loop_state:
        for v in tree_values(state):
            # an inner loop's init handed an outer loop's state through unchanged: that value was
            # dropped for the outer init, whose buffer the outer loop's state holds (a nested
            # sampler's loops, ``jax.random.beta``: a KeyError ended ``memory`` and ``show``)
            if not v.dropped:
                loops.setdefault(id(of_value[id(v)]), of_value[id(v)])
    tops = {v.instruction: of_value[id(v)] for v in b.values if not v.index and not v.dropped}
    return Dataflow(module, b.sequence, buffers, order, tops, list(loops.values()), b.trees)


def _buffer(values: list[Value], param_values: set[int], donated: dict[int, int], end: int) -> Buffer:
    pairs = {donated[id(v)] for v in values if id(v) in donated}
    is_param = any(id(v) in param_values for v in values)
    live_out = any(v.live_out for v in values)
    for v in values:
        v.start, v.end = v.time, max(v.last_use, v.time)
        if id(v) in param_values:
            v.start = 0
            if id(v) not in donated:  # read-only parameters live throughout
                v.end = end
        if v.live_out:
            v.end = end
    ordered = sorted(values, key=lambda v: (v.start, v.end))
    for a, b in pairwise(ordered):  # XLA's NormalizeAliasedBuffers
        b.end = max(a.end, b.end)
        a.end = min(a.end, b.start)
    if is_param:
        kind = "parameters"
    elif live_out:
        kind = "outputs"
    elif all(v.instruction.opcode == "constant" for v in values):
        kind = "constants"
    else:
        kind = "temporaries"
    return Buffer(values, min(v.start for v in values), max(v.end for v in values), kind, aliased=bool(pairs),
                  pairs=frozenset(pairs))


def thread_local_slots(module: HloModule) -> list[tuple[str, int]]:
    """(kind, bytes) of each allocation XLA makes for the values of those computations, one per
    value: ``thread_local``, or ``constants`` for a constant (constants get their own anywhere);
    a tuple defines only its pointer table."""
    seen: set[str] = set()
    out: list[tuple[str, int]] = []
    stack: list[Computation] = []
    for comp in module.computations:
        for inst in comp.instructions:
            if inst.opcode in THREAD_LOCAL_CALLERS:
                for attr in ("to_apply", "select", "scatter", "called_computations"):
                    stack.extend(inst.calls_by_attribute.get(attr, ()))
    while stack:
        comp = stack.pop()
        if comp.name in seen:
            continue
        seen.add(comp.name)
        for inst in comp.instructions:
            if inst.opcode in DEFINES_NO_BUFFER:
                pass
            elif inst.opcode == "constant":
                out.append(("constants", shape_bytes(inst.shape)))
            else:
                shapes = [inst.shape] if inst.opcode in DEFINES_TOP_LEVEL_ONLY else _all_shapes(inst.shape)
                out.extend(("thread_local", b) for b in map(shape_bytes, shapes) if b)
            if inst.opcode != "fusion":  # a fused computation's values are the fusion's: no buffers of their own
                stack.extend(inst.called_computations)
    return out


def _all_shapes(shape: Shape) -> Iterator[Shape]:
    stack = [shape]
    while stack:
        s = stack.pop()
        yield s
        if s.is_tuple:
            stack.extend(reversed(s.tuple_shapes))


def positions(flow: Dataflow) -> dict[int, list[tuple[Instruction, tuple[int, ...]]]]:
    """id(value) → the (instruction, index) pairs where it appears (XLA's ``HloValue::positions``:
    its definition and every bitcast, get-tuple-element, tuple, … that passes it along)."""
    out: dict[int, list[tuple[Instruction, tuple[int, ...]]]] = {}
    for inst, tree in flow.trees.items():
        stack: list[tuple[Tree, tuple[int, ...]]] = [(tree, ())]
        while stack:
            t, index = stack.pop()
            if isinstance(t, Value):
                out.setdefault(id(t), []).append((inst, index))
            elif isinstance(t, Node):
                if t.top is not None:
                    out.setdefault(id(t.top), []).append((inst, index))
                stack.extend((e, index + (k,)) for k, e in enumerate(t.elements))
    return out
