"""Constant folding: which pre-optimization work was computed at compile time, and into what.

Two places fold constants, and both are reported:

* **XLA** (pre-opt → post-opt HLO). A post-opt constant whose value no pre-opt constant has was
  computed by the compiler. Its users' ``op_name`` says which framework op uses it now (TF keeps
  ``op_name`` through optimization); from there the pre-opt dataflow is walked backwards through
  ops that left no trace in the optimized module, and every such op that had a constant input
  is one that was folded into the constant. This is how ``x + 1 + 1 + … + 1`` (1000 adds)
  becoming ``x + 1000`` is found: the constant ``1000`` is new, ``add_999`` uses it, and
  ``add`` … ``add_998`` vanished with constant inputs.
* **TensorFlow** (TF graph → pre-opt HLO). TF's bridge evaluates ops whose inputs are all
  constants (or only static shapes: ``Shape``, ``ShapeN``, ``Size``, ``Rank``) before XLA sees
  them, so ``a*b + sin(a)`` of constants arrives as one literal. With the graph's ops and edges
  (``info["tf_ops"]`` and ``info["tf_inputs"]`` of a capture), the TF ops with no HLO
  instruction whose inputs are all constants are that kind of fold. The literal is found where
  their result went: TF lowers an op's compile-time inputs to constants carrying the op's name
  before the instructions that compute it, so the first ``k`` constants of the consuming op
  (``k`` folded inputs) are the folded values, and its later constants (``DivNoNan``'s zero,
  ``Relu``'s zero) are its own.

This module finds XLA's folds and puts the report together (:func:`constant_folding`); the
records are :mod:`.folded`'s, TensorFlow's folds are found by :mod:`.tf_folding`.

A folded constant is listed once. A constant of the optimized module whose value a
pre-optimization constant already has is not a fold; one that no pre-optimization instruction
computed into (an index XLA wrote while rewriting) is a *new constant*, listed apart
(:attr:`FoldingReport.new_constants`). A fold whose work has no op name says why in ``note``.

Every value reported is the literal text from the HLO (the post-opt literal when the constant
survives there); a literal longer than :data:`~.folded.SHORT_LITERAL` characters is reported by its shape
instead, and one XLA printed as ``{...}`` by its shape and the words :data:`~.folded.NOT_PRINTED`.
"""

from __future__ import annotations

from collections.abc import Mapping

from ...ir import Computation, HloModule, Instruction
from ...opcodes import BODY_CALLERS, NOT_FOLDABLE, RANDOM, VALUE_CARRIERS, VALUE_FORWARDING_CALLERS
from .folded import FoldedConstant, FoldingReport, is_real_op, literal_value, value_key
from .names import kept_fact, post_names
from .tf_folding import tf_folds


def constant_folding(pre: HloModule, post: HloModule, info: Mapping | None = None) -> FoldingReport:
    """What was computed at compile time between ``pre`` and ``post`` (and, given a capture's
    ``info`` with ``tf_ops`` and ``tf_inputs``, by TensorFlow before ``pre``)."""
    folds, new = [], []
    # both readings below start from the same vanished ops and constant-computable instructions
    vanished, foldable = _vanished(pre, post), _constant_computable(pre)
    running = _from_running_iotas(pre, post, vanished[0], foldable)  # computed at run time: never folded
    for f in _xla_folds(pre, post, vanished, foldable, running):
        (folds if f.from_ops or f.from_instructions else new).append(f)
    if info:
        folds.extend(tf_folds(pre, post, info))
    linked = {op for f in folds for op in f.from_ops}
    computed = tuple(op for op in _constant_subgraph_ops(pre, vanished[1], foldable - running) if op not in linked)
    return FoldingReport(tuple(folds), computed, tuple(new))


def _vanished(pre: HloModule, post: HloModule) -> tuple[dict[str, frozenset[str]], set[str]]:
    """Pre-opt op names → their possible post-opt names, and the ops with no trace left (an op
    whose only trace is a constant carrying its op_name counts as gone: it was folded). Worked
    out once in an analysis (:func:`~.names.facts_kept`: the folding and the mapping's
    :func:`merged_ops` both ask; 0.06 s of a DenseNet121 step's optimized module)."""
    def work(post: HloModule) -> tuple[dict[str, frozenset[str]], set[str]]:
        names = post_names(pre)
        post_ops = {i.metadata.op_name for i in post.instructions() if i.opcode != "constant"}
        return names, {op for op, candidates in names.items() if not candidates & post_ops}

    return kept_fact(f"vanished after {id(pre)}", post, work)


def _by_op(pre: HloModule) -> dict[str, list[Instruction]]:
    """Op name → its instructions in ``pre``, in text order (kept as :func:`_vanished` is: read it, do not change it)."""
    def work(pre: HloModule) -> dict[str, list[Instruction]]:
        by_op: dict[str, list[Instruction]] = {}
        for inst in pre.instructions():
            by_op.setdefault(inst.metadata.op_name, []).append(inst)
        return by_op

    return kept_fact("by op", pre, work)


def _constant_subgraph_ops(pre: HloModule, vanished: set[str], foldable: set[Instruction]) -> list[str]:
    """Vanished ops (``vanished``, of :func:`_vanished`) all of whose instructions compute on
    constants only (``foldable``, of :func:`_constant_computable`; literals aside)."""
    by_op: dict[str, list[Instruction]] = {}
    for inst in pre.instructions():
        if inst.metadata.op_name in vanished:
            by_op.setdefault(inst.metadata.op_name, []).append(inst)
    return [op for op, insts in by_op.items()
            if all(i in foldable for i in insts) and any(i.opcode != "constant" for i in insts)]


def _xla_folds(pre: HloModule, post: HloModule, vanishing: tuple[dict[str, frozenset[str]], set[str]],
               foldable: set[Instruction], running: set[Instruction]):
    """The constants of ``post`` XLA computed (``vanishing``: :func:`_vanished` of the pair,
    ``foldable``: :func:`_constant_computable` of ``pre``, ``running``: those of them
    :func:`_from_running_iotas`)."""
    pre_by_op = _by_op(pre)
    names, vanished = vanishing
    by_post_name: dict[str, list[str]] = {}
    for op, candidates in names.items():
        for c in candidates:
            by_post_name.setdefault(c, []).append(op)
    pre_constants = {value_key(i) for i in pre.instructions() if i.opcode == "constant"}
    pre_shapes = {(i.shape.element_type, i.shape.dims) for i in pre.instructions() if i.opcode == "constant"}
    # Vanished ops that computed something from a constant (an op that is only a literal, like a
    # JAX constant or TF Const with its own name, is an input of the fold, not folded work). Of
    # those, an op XLA computes once under another op's name (a common subexpression) was not
    # folded: it runs, in the other op's kernel; walked back from a fold, it stops the walk as
    # that op would. (One computed from constants only was folded, merged or not.)
    with_constants = {op for op in vanished
                      if any(i.opcode != "constant" and (i in foldable or any(o in foldable for o in i.operands))
                             for i in pre_by_op[op])}
    merged = _merged_ops({op for op in with_constants if not all(i in foldable for i in pre_by_op[op])}, pre_by_op, vanished)
    # nor is a random draw folded, though XLA names after it the constants of the bit arithmetic it
    # expands the draw into (``tf.random.uniform``'s shift by 9 and scale by 2**-23): it runs every call
    drawn = {op for op, insts in pre_by_op.items() if any(i.opcode in RANDOM for i in insts)}
    walked_through, with_constants = vanished - merged - drawn, with_constants - merged - drawn
    order = {i: n for n, i in enumerate(pre.instructions())}
    callers = post.callers()
    calls = {op for op, insts in pre_by_op.items() if any(i.opcode in BODY_CALLERS for i in insts)}
    # (a reduction's start value stays its own literal; what an iota the optimized module still runs computes
    # was not folded either: a bilinear resize's weights, computed from iotas, came out "folded into -1.5")
    reached = foldable - _init_values(pre) - running
    # constants read by the same ops walk back from the same seeds to the same stops (a GPT
    # step's 295 folded constants: 5 distinct walks); each walk's answer is copied, not shared
    walked: dict[tuple, tuple[set[str], set[Instruction]]] = {}

    for comp in post.computations:
        made = [c for c in comp.instructions if c.opcode == "constant" and not (
            (c.shape.element_type, c.shape.dims) in pre_shapes if c.is_elided_constant
            else value_key(c) in pre_constants)]
        if not made:
            continue  # (most fused computations: their users are not worked out)
        users = comp.users()
        for c in made:
            into = _user_ops(c, users, callers)
            into_pre = {op for name in into for op in by_post_name.get(name, ())}
            seeds = [i for op in into_pre for i in pre_by_op.get(op, ())]
            # (not a call's op: XLA names what it writes while inlining a call after the call, whose
            # work is its callee's ops' — threefry's rotation width, 32, in a loop in ``jit(_uniform)``)
            own = [op for op in by_post_name.get(c.metadata.op_name, ()) if op in vanished and op not in calls | drawn]
            for op in own:
                seeds.extend(pre_by_op[op])
            key = (tuple(map(id, seeds)), frozenset(into_pre))
            if key not in walked:
                walked[key] = _walk_back(seeds, walked_through, with_constants, reached, into_pre)
            ops, insts = set(walked[key][0]), walked[key][1]
            ops.update(own)
            where = f"`{into[0]}`" if into else "the module"
            if ops:
                note = ""
            elif insts:
                named = list(dict.fromkeys(i.metadata.op_name for i in sorted(insts, key=order.__getitem__)
                                           if is_real_op(i.metadata.op_name)))
                if named:
                    note = (f"part of the work of {', '.join(f'`{n}`' for n in named[:3])}"
                            f"{' and others' if len(named) > 3 else ''}, whose other work runs in a kernel: "
                            "XLA computed this part from its constants")
                else:
                    n = len(insts)
                    note = f"computed from {n} pre-optimization instruction{'s' if n != 1 else ''} without an op name"
            else:
                note = f"XLA wrote it while rewriting {where}; no pre-optimization instruction computed into it"
            yield FoldedConstant(
                constant=c.name, computation=comp.name, value=literal_value(c),
                shape=c.shape.to_text(layout=False),
                from_ops=tuple(sorted(ops, key=lambda op: order[pre_by_op[op][0]])),
                from_instructions=tuple(i.name for i in sorted(insts, key=order.__getitem__)),
                into=tuple(into), note=note,
            )


def merged_ops(pre: HloModule, post: HloModule, ops: set[str]) -> set[str]:
    """The ``ops`` that left no trace because XLA computes their work once, under another op's
    name (:func:`_merged_ops`): a second ``reduce_sum`` of the same mask."""
    vanished = _vanished(pre, post)[1]
    return _merged_ops(ops & vanished, _by_op(pre), vanished)


#: Attributes that name rather than compute: two reductions by equal reducers are equal.
_NAMING = frozenset({"metadata", "to_apply", "calls", "called_computations"})


def _structure(comp: Computation) -> tuple:
    """What ``comp`` computes, by its instructions (opcode, shape, operands by position) and
    literals, not its name: TensorFlow gives each ``Sum`` a reducer of its own (``Sum_1-reduction``)."""
    at = {id(i): k for k, i in enumerate(comp.instructions)}
    return tuple((i.opcode, i.shape, i.literal if i.opcode == "constant" else i.parameter_number,
                  tuple(at.get(id(o), -1) for o in i.operands)) for i in comp.instructions)


def _merged_ops(candidates: set[str], pre_by_op: dict[str, list[Instruction]], vanished: set[str]) -> set[str]:
    """The ``candidates`` (vanished ops) whose every instruction computes what an instruction of
    a surviving op computes: the same opcode, shape and attributes on the same operands (a literal
    by its value, a parameter by its number). XLA's common-subexpression pass keeps one of them,
    under the survivor's name. Keras's Adafactor computes ``1 - (step + 1) ** -0.8`` once per
    weight (``adafactor/Sub``, ``adafactor/Sub_23`` …): the copies read the step counter, so they
    were no fold, but walked back from the mean's new constant ``1/48`` they were reported
    folded into it."""
    work = {op: [i for i in pre_by_op.get(op, ()) if i.opcode not in ("constant", "parameter")] for op in candidates}
    work = {op: insts for op, insts in work.items() if insts}
    kinds = {(i.opcode, i.shape) for insts in work.values() for i in insts}
    if not kinds:
        return set()
    number: dict[object, int] = {}  # each distinct computation → a number: a key of keys would
    key: dict[int, int] = {}  # hash whole subgraphs again at every level

    def key_of(inst: Instruction) -> int:
        stack = [inst]
        while stack:  # operands first, without recursion (a chain of 1000 adds)
            i = stack[-1]
            if id(i) in key:
                stack.pop()
                continue
            deep = i.opcode not in ("constant", "parameter") and i.opcode not in _NEVER_EQUAL
            pending = [o for o in i.operands if id(o) not in key] if deep else []
            if pending:
                stack.extend(pending)
                continue
            stack.pop()
            if i.opcode == "constant":
                what: object = ("constant", i.shape, i.literal)
            elif i.opcode == "parameter":
                what = ("parameter", i.parent.name if i.parent is not None else "", i.parameter_number)
            elif not deep:
                what = ("once", id(i))  # (a random draw, a collective: never one of two equal ones)
            else:
                what = (i.opcode, i.shape, tuple(kv for kv in i.attributes.items() if kv[0] not in _NAMING),
                        tuple(map(_structure, i.called_computations)), tuple(key[id(o)] for o in i.operands))
            key[id(i)] = number.setdefault(what, len(number))
        return key[id(inst)]

    surviving = {key_of(i) for op, insts in pre_by_op.items() if op not in vanished and is_real_op(op)
                 for i in insts if (i.opcode, i.shape) in kinds}
    return {op for op, insts in work.items() if all(key_of(i) in surviving for i in insts)}


#: Opcodes two instructions of which never compute the same value, whatever their operands.
_NEVER_EQUAL = NOT_FOLDABLE - VALUE_FORWARDING_CALLERS


def _user_ops(c: Instruction, users: dict, callers: dict) -> list[str]:
    """Op names of the instructions that use constant ``c``: followed through unnamed ops and
    through ops that only carry the value on (:data:`~hloviz.opcodes.VALUE_CARRIERS`: a
    ``broadcast`` XLA merged across layers keeps one layer's op name, but the ``multiply`` that
    reads it is the work the constant belongs to), and out of a fused computation to its fusion
    when nothing inside is named. A carrier nothing reads (a fused computation's root) counts by
    its own name."""
    found: dict[str, None] = {}
    frontier = list(users.get(c, ()))
    seen: set[Instruction] = set()
    while frontier:
        u = frontier.pop()
        if u in seen:
            continue
        seen.add(u)
        onward = users.get(u, ())
        if u.opcode in VALUE_CARRIERS and onward:
            frontier.extend(onward)
        elif is_real_op(u.metadata.op_name):
            found[u.metadata.op_name] = None
        else:
            frontier.extend(onward)
    if not found and c.parent is not None:
        for caller in callers.get(c.parent.name, ()):
            if is_real_op(caller.metadata.op_name):
                found[caller.metadata.op_name] = None
    return list(found)


def _walk_back(seeds: list[Instruction], vanished: set[str], with_constants: set[str],
               foldable: set[Instruction], stop_ops: set[str]) -> tuple[set[str], set[Instruction]]:
    """Pre-opt ops reached backwards from ``seeds`` through vanished (or unnamed) instructions."""
    ops: set[str] = set()
    insts: set[Instruction] = set()
    stack = [o for s in seeds for o in s.operands]
    stack.extend(s for s in seeds if s in foldable and s.opcode != "constant")
    seen: set[Instruction] = set()
    while stack:
        i = stack.pop()
        if i in seen or i.opcode == "parameter":
            continue
        seen.add(i)
        op = i.metadata.op_name
        if op in vanished:
            if op in with_constants:
                ops.add(op)
                insts.add(i)
        elif is_real_op(op) and op not in stop_ops:
            continue  # another surviving op: its own kernel, not part of this constant
        elif i in foldable and i.opcode != "constant":
            insts.add(i)
        stack.extend(i.operands)
    return ops, insts


def _from_running_iotas(pre: HloModule, post: HloModule, names: dict[str, frozenset[str]],
                        foldable: set[Instruction]) -> set[Instruction]:
    """The constant-computable instructions of ``pre`` computed from an ``iota`` of an op that has an
    ``iota`` in ``post`` too (``names``: each pre-opt op's possible post-opt names): XLA computes
    those at run time (a ``tf.image.resize``'s interpolation weights, in its fusions), folding
    only their scalar constants."""
    iotas = [i for i in foldable if i.opcode == "iota"]
    if not iotas:
        return set()
    running = {i.metadata.op_name for c in post.computations for i in c.instructions if i.opcode == "iota"}
    seeds = {i for i in iotas if names.get(i.metadata.op_name, frozenset()) & running}
    if not seeds:
        return seeds
    out: set[Instruction] = set(seeds)
    for comp in {i.parent for i in seeds if i.parent is not None}:  # (what an iota computes stays in its computation)
        for inst in comp.instructions:  # operands first
            if inst not in out and inst in foldable and any(o in out for o in inst.operands):
                out.add(inst)
    return out


def _init_values(module: HloModule) -> set[Instruction]:
    """Instructions read only as a reduction's start value (``reduce``, ``reduce-window``: the
    second half of their operands). XLA keeps that value a literal of its own; walked back from
    a constant a reduction's op also made, a ``tf.reduce_mean``'s ``convert`` of its 0 was
    labelled folded into the mean's 1/9."""
    inits: set[Instruction] = set()
    other: set[Instruction] = set()
    for inst in module.instructions():
        half = len(inst.operands) // 2 if inst.opcode in ("reduce", "reduce-window") else len(inst.operands)
        other.update(inst.operands[:half])
        inits.update(inst.operands[half:])
    return inits - other


def _constant_computable(module: HloModule) -> set[Instruction]:
    """Instructions whose value depends on constants only (computable at compile time)."""
    out: set[Instruction] = set()
    for comp in module.computations:
        for inst in comp.instructions:  # HLO text lists operands before their users
            if inst.opcode == "constant" or (inst.opcode == "iota") or (inst.operands and inst.opcode not in NOT_FOLDABLE and all(o in out for o in inst.operands)):
                out.add(inst)
    return out


#: TF op types whose result is a static shape: the bridge computes them at compile time.
