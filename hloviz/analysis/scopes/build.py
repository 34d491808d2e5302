"""Building the scope tree: every instruction filed under the scope its op name gives.

In: a module (and, optionally, its kernels, its parameters' names, another tree to list scopes
like, the Keras layers a capture recorded). Out: its :class:`~.tree.ScopeTree`. The rules are
:func:`hloviz.analysis.scopes.build_scope_tree`'s; this module reads op names
(:mod:`hloviz.analysis.opnames`) and places unnamed instructions (by their caller, or by data
flow: :class:`hloviz.analysis.attribution.FlowPlacer`; an Equinox layer's op names are first told
apart from its class's other layers by :mod:`.instances`), then hands the tree to the steps of
their own modules: :mod:`.order` (scopes as the program runs them), :mod:`.labels` (Keras layer
names), :mod:`.weights` (parameters into their layers) and :mod:`.totals` (phases and kernels
per scope).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from ...ir import HloModule, Instruction
from ...opcodes import BODY_CALLERS, INLINING_CALLERS
from ..attribution import FlowPlacer
from ..kernels import SYNTHETIC_OP_NAMES, KernelReport
from ..kernels import kernels as find_kernels
from ..opnames import OpPath, parse_op_name
from .call_gradients import file_call_gradients
from .instances import split_instances
from .labels import label_scopes
from .order import order_children as _order_children
from .order import order_like as _order_like
from .scope import TOP_LEVEL, Scope
from .step_phases import mark_custom_gradients, mark_recomputed_forward, mark_step_optimizer
from .totals import attribute_kernels, count_phases
from .tree import ScopeTree
from .weights import place_parameters


def _guess_stage(module: HloModule) -> str:
    if module.is_scheduled:
        return "post"
    return "post" if any(i.opcode == "fusion" for i in module.instructions()) else "pre"


def _op_path(inst: Instruction, origins: Mapping[str, str] | None = None) -> OpPath | None:
    """``inst``'s op path; ``origins``: an optimized module's names XLA doubled by inlining → the
    program's own (:attr:`~hloviz.ir.HloModule.inlined_origins`)."""
    md = inst.metadata
    name = md.op_name
    if not name or name in SYNTHETIC_OP_NAMES:
        return None
    return parse_op_name(origins.get(name, name) if origins else name, md.op_type)


def build(module: HloModule, *, stage: str | None = None, kernel_report: KernelReport | None = None,
          parameter_names: Mapping[Instruction, str] | None = None,
          order_like: ScopeTree | None = None, layers: Mapping[str, str] | None = None,
          ordered: bool = True) -> ScopeTree:
    """Build a :class:`ScopeTree` (see :func:`hloviz.analysis.scopes.build_scope_tree`)."""
    stage = stage or _guess_stage(module)
    callers, fusion_callers = _first_callers(module)
    plumbing: list[Instruction] = []
    named, unnamed, forward_scopes, sums = _read_op_names(module, callers, plumbing)
    if sums:  # the tape's sums of two gradients (a top-level ``AddN``): placed by data flow;
        filed, sums = file_call_gradients(sums)  # a called function's gradient: in its layer
        moved, scoped = {id(i) for i in sums}, {id(i): op for i, op in filed}
        named = [(i, scoped.get(id(i), op)) for i, op in named if id(i) not in moved]
        unnamed = sums + unnamed
    named = split_instances(module, named, callers, forward_scopes)  # Equinox's layers of one class, by their weights
    filing = _Filing(module, callers)
    op_scope = filing.file_named(named, forward_scopes)
    mark_recomputed_forward(module, filing.phase_of, filing.votes)
    if "backward" in filing.phase_of.values():
        mark_custom_gradients(module, filing.root, filing.of, filing.phase_of, filing.votes, fusion_callers, sums)
    own_updates = mark_step_optimizer(module, filing.root, filing.of, filing.phase_of, filing.votes)
    filing.flow = _flow_placer(module, callers, filing)
    filing.place_all(unnamed)
    root, of, phase_of = filing.root, filing.of, filing.phase_of
    for inst in sums:  # data flow gave each its layer; its op name says it sums gradients, fused
        phase_of[inst] = "backward"  # into an optimizer's kernel (the caller's phase) or not
    for inst in plumbing:  # the layer data flow found answers for the op name (the mapping's lookups)
        op_scope.setdefault(inst.metadata.op_name, of[inst])

    if ordered:
        _order_children(root, of, phase_of, module)
    label_scopes(root, layers or {})
    if order_like is not None:
        _order_like(root, order_like)
    # the entry's literals: found while placing by data flow
    tree = ScopeTree(module, root, of, phase_of, stage, None, op_scope=op_scope, votes=filing.votes,
                     literals=filing.flow._literals, fusion_callers=fusion_callers, own_updates=own_updates)
    if parameter_names:
        place_parameters(tree, parameter_names)
    count_phases(root, phase_of)

    if stage == "post":
        report = kernel_report if kernel_report is not None else find_kernels(module)
        tree.kernel_report = report
        attribute_kernels(tree, report)
    return tree


def _read_op_names(module: HloModule, callers: dict[str, Instruction], plumbing: list[Instruction]
                   ) -> tuple[list[tuple[Instruction, OpPath]], list[Instruction], set[tuple[str, ...]],
                              list[Instruction]]:
    """Split the module's instructions into those whose op name gives their scope and those
    placed later by their caller or computation; also return every scope (and its ancestors)
    that forward ops name, which backward ops are cut back to, and the named instructions
    that are backward ops outside every scope (the tape's sums of two gradients). ``plumbing``
    receives the first instruction of each op name of a loop's plumbing (:data:`_LOOP_PLUMBING`),
    placed by data flow although named."""
    named: list[tuple[Instruction, OpPath]] = []
    unnamed: list[Instruction] = []
    sums: list[Instruction] = []
    forward_scopes: set[tuple[str, ...]] = set()
    plumbing.clear()
    prefixes = _inlined_prefixes(module, callers)
    # A framework op's instructions share one Metadata (ir parses each distinct text once): its
    # op path is read once per (Metadata, prefix), not once per instruction.
    by_prefix: dict[str, dict[int, OpPath | None]] = {}  # prefix → id(Metadata) → its op path
    held: list[object] = []  # the Metadata keyed by id(), kept alive while their ids are keys
    for comp in module.computations:
        prefix = prefixes.get(comp.name, "")
        paths = by_prefix.get(prefix)
        if paths is None:
            paths = by_prefix[prefix] = {}
        if _runs_inside_caller(comp, callers):
            # A reducer, comparator or mapped computation is part of its caller's work, whatever
            # its ops are named: JAX names a reducer's ``add`` after the reduction
            # (``reduce_sum``), and a reducer traced inside a called function (``nn.scan``'s
            # ``closed_call``) by the path relative to that call (``checkpoint/blocks/ln1/
            # reduce_sum``), which read on its own would open a top-level scope ``blocks``
            # holding no kernel. Its instructions go with the caller (_Filing.place_all).
            unnamed.extend(comp.instructions)
            continue
        for inst in comp.instructions:
            md = inst.metadata
            key = id(md)
            if key in paths:
                op = paths[key]
            else:
                op = _op_path(inst, module.inlined_origins)
                if op is not None and prefix and op.raw != prefix and not op.raw.startswith(prefix + "/"):
                    # a called function's ops, named relative to the call (JAX); TensorFlow's
                    # branch functions name theirs in full already (``while/cond/mul`` in the
                    # branch of ``while/cond``), which prefixing would make ``while/cond/while/cond``; and
                    # XLA's own calls name theirs as the call (a CPU ``xla_cpu_small_call`` of a loop)
                    op = parse_op_name(f"{prefix}/{op.raw}", md.op_type)
                if op is not None and op.scope and op.scope[-1] in _LOOP_PLUMBING:
                    op = None  # a scan's slicing of its stacked inputs: the layer reading them (data flow)
                    plumbing.append(inst)
                paths[key] = op
                held.append(md)
            if op is None:
                unnamed.append(inst)
                continue
            named.append((inst, op))
            if op.phase != "backward":
                if op.scope not in forward_scopes:
                    _add_prefixes(forward_scopes, op.scope)
            elif not op.scope:
                sums.append(inst)
    return named, unnamed, forward_scopes, sums


def _add_prefixes(into: set[tuple[str, ...]], scope: tuple[str, ...]) -> None:
    """Add ``scope`` and all its prefixes to ``into``, longest first, stopping at one already
    there (``into`` holds every prefix of what it holds): each instruction adds only the scopes
    new to it, not its whole chain again."""
    for n in range(len(scope), -1, -1):
        prefix = scope[:n]
        if prefix in into:
            return
        into.add(prefix)


class _Filing:
    """The tree under construction: the root scope, each instruction's scope and phase.

    Named instructions are filed first (:meth:`file_named`); unnamed ones then follow their
    callers (:meth:`place`), which needs the scopes the named ones were filed under.
    """

    def __init__(self, module: HloModule, callers: dict[str, Instruction]) -> None:
        self.root = Scope("", module.name, 0, None, label=module.name, kind="root")
        self.of: dict[Instruction, Scope] = {}
        self.phase_of: dict[Instruction, str] = {}
        #: The instructions filed by their own op name → (scope, phase): what they vote with
        #: (:meth:`ScopeTree.layers_with_phases`), one dict read per instruction of a kernel.
        self.votes: dict[Instruction, tuple[Scope, str]] = {}
        self.callers = callers
        #: Where data flow places the unnamed instructions of computations that run on their own.
        self.flow: FlowPlacer | None = None

    def scope_for(self, parts: tuple[str, ...]) -> Scope:
        """The scope at ``parts`` below the root, made on first use; no parts: the top level
        (an op written outside every scope: the function's own body)."""
        root = self.root
        if not parts:
            top = root.child(TOP_LEVEL)
            if top is None:
                top = root.add_child(Scope(TOP_LEVEL, TOP_LEVEL, 1, root, label=TOP_LEVEL, kind="top"))
            return top
        s = root
        for part in parts:
            nxt = s.child(part)
            if nxt is None:
                path = f"{s.path}/{part}" if s.path else part
                nxt = s.add_child(Scope(path, part, s.depth + 1, s, label=part))
            s = nxt
        return s

    def file_named(self, named: list[tuple[Instruction, OpPath]],
                   forward_scopes: set[tuple[str, ...]]) -> dict[str, Scope]:
        """File each named instruction under its op name's scope; return op name → scope."""
        op_scope: dict[str, Scope] = {}
        of, phase_of, votes = self.of, self.phase_of, self.votes
        # id(OpPath) → (its scope, its phase): worked out once per op name
        scope_by_op: dict[int, tuple[Scope, str]] = {}
        for inst, op in named:
            pair = scope_by_op.get(id(op))
            if pair is None:
                parts = op.scope
                if op.phase == "backward" and forward_scopes:
                    # TF names a gradient after the forward op it differentiates
                    # (gradient_tape/<layer>/<op>/<grad op>): it belongs to the layer.
                    while parts and parts not in forward_scopes:
                        parts = parts[:-1]
                s = self.scope_for(parts)
                pair = scope_by_op[id(op)] = (s, op.phase)
                op_scope.setdefault(op.raw, s)
                first = op.raw.split(";", 1)[0]
                cut = first.rfind("/")
                if cut > 0:
                    s.written_as.add(first[:cut])
                # as the pre→post mapping names it: the op name of the op path's instructions
                # (they share one Metadata), set by the first of them or an earlier op path
                op_scope.setdefault(inst.metadata.op_name, s)
            s = pair[0]
            s.instructions.append(inst)
            of[inst] = s
            phase_of[inst] = op.phase
            votes[inst] = pair
        return op_scope

    def place_all(self, insts: list[Instruction]) -> None:
        """:meth:`place` each of ``insts``; those of a fused computation or reducer whose caller
        is filed already (most unnamed instructions: a fusion's parameters, a reducer's ``add``)
        are filed here at once, the caller's test made once per computation, not per instruction."""
        of, phase_of, callers = self.of, self.phase_of, self.callers
        comp: object = self  # no computation yet
        caller: Instruction | None = None
        for inst in insts:
            if inst.parent is not comp:
                comp = inst.parent
                caller = callers.get(inst.parent.name) if inst.parent is not None else None
                if caller is not None and caller.opcode in _RUNS_ITS_CALLEES and caller.opcode not in _INLINED:
                    caller = None  # a body runs on its own: placed by data flow (place)
            if caller is not None and inst not in of:
                owner = of.get(caller)
                if owner is not None:
                    phase_of[inst] = phase_of.get(caller, "forward")
                    owner.instructions.append(inst)
                    of[inst] = owner
                    continue
            self.place(inst)

    def place(self, inst: Instruction, depth: int = 0) -> Scope:
        """An instruction its op name does not place: its caller's scope inside a fused
        computation or reducer; else the layer its data flow names (:attr:`flow`); else the top
        level (a tape's sum) or the scope of its computation (no op name)."""
        hit = self.of.get(inst)
        if hit is not None:
            return hit
        comp = inst.parent
        caller = self.callers.get(comp.name) if comp is not None else None
        if caller is not None and (caller.opcode not in _RUNS_ITS_CALLEES or caller.opcode in _INLINED) \
                and depth < 64:
            owner = self.of.get(caller)  # placed already (a fusion's ops: its own name placed it)
            if owner is None:
                owner = self.place(caller, depth + 1)
            self.phase_of[inst] = self.phase_of.get(caller, "forward")
        elif self.flow is not None and (by_flow := self.flow.result(inst)) is not None:
            owner, self.phase_of[inst] = by_flow
        elif inst.metadata.op_name and inst.metadata.op_name not in SYNTHETIC_OP_NAMES:
            owner = self.scope_for(())  # named outside every scope, and no layer's data flow
            self.phase_of[inst] = parse_op_name(inst.metadata.op_name, inst.metadata.op_type).phase
        else:
            comp = inst.parent
            key = f"({comp.name if comp is not None else '?'})"
            owner = self.root.child(key)
            if owner is None:
                owner = self.root.add_child(Scope(key, key, 1, self.root, label=key, kind="unnamed"))
            self.phase_of[inst] = (self.flow.phase(inst) if self.flow is not None else None) or "forward"
        owner.instructions.append(inst)
        self.of[inst] = owner
        return owner


def _flow_placer(module: HloModule, callers: dict[str, Instruction], filing: _Filing) -> FlowPlacer:
    """Data-flow places for the unnamed instructions of the computations that run on their own
    (the entry, loop bodies and conditions): :class:`hloviz.analysis.attribution.FlowPlacer`."""
    placer = FlowPlacer(_Filed(filing.of, filing.phase_of))
    for comp in reversed(module.computations):  # the entry (last in the text) first
        caller = callers.get(comp.name)
        if caller is None or (caller.opcode in _RUNS_ITS_CALLEES and caller.opcode not in _INLINED):
            placer.place_computation(comp)
    return placer


class _Filed(Mapping[Instruction, tuple[Scope, str]]):
    """The instructions filed so far → (scope, phase), read through the filing's own dicts
    rather than copied: the flow placer reads it before anything else is filed."""

    __slots__ = ("_of", "_phase")

    def __init__(self, of: dict[Instruction, Scope], phase: dict[Instruction, str]) -> None:
        self._of = of
        self._phase = phase

    def __getitem__(self, inst: Instruction) -> tuple[Scope, str]:
        return self._of[inst], self._phase.get(inst, "forward")

    def get(self, inst: Instruction, default=None):  # type: ignore[override]
        s = self._of.get(inst)
        return default if s is None else (s, self._phase.get(inst, "forward"))

    def __contains__(self, inst: object) -> bool:
        return inst in self._of

    def __iter__(self) -> Iterator[Instruction]:
        return iter(self._of)

    def __len__(self) -> int:
        return len(self._of)


#: JAX's helpers with which ``lax.scan`` (and ``nn.scan``) takes iteration i of its stacked
#: inputs and writes iteration i of its stacked outputs (``…/while/body/jit(dynamic_index_in_dim)/
#: dynamic_slice``). They are the loop's plumbing, not a layer of the model: the slice of block
#: i's ``fc1`` kernel is ``fc1``'s input, so such ops are placed by data flow like unnamed ones.
_LOOP_PLUMBING = frozenset({"dynamic_index_in_dim", "dynamic_update_index_in_dim", "dynamic_slice_in_dim",
                            "dynamic_update_slice_in_dim"})

#: Ops whose called computations run on their own (their unnamed instructions are not the caller's).
_RUNS_ITS_CALLEES = BODY_CALLERS


def _runs_inside_caller(comp, callers: dict[str, Instruction]) -> bool:
    """A reducer, comparator or mapped computation: run by its caller, not a kernel's body."""
    caller = callers.get(comp.name)
    return caller is not None and caller.opcode not in _RUNS_ITS_CALLEES and caller.opcode != "fusion"


#: Ops whose callees XLA inlines, prefixing their op names with the caller's (JAX's nested
#: ``jit(tril)`` is a ``call`` before optimization, ``…/jit(tril)/ge`` after): see
#: :mod:`hloviz.analysis.pre_post.names`.
_INLINED = INLINING_CALLERS


def _inlined_prefixes(module: HloModule, callers: dict[str, Instruction]) -> dict[str, str]:
    """Computation called by an inlining op → the op-name prefix its ops get (the caller's op
    name, itself prefixed if the caller sits in such a computation)."""
    out: dict[str, str] = {}

    def prefix(comp_name: str, depth: int = 0) -> str:
        if comp_name in out:
            return out[comp_name]
        caller = callers.get(comp_name)
        if caller is None or depth > 64:
            return ""
        if caller.opcode == "while":  # renamed with the computation holding the loop (see names.py)
            out[comp_name] = prefix(caller.parent.name, depth + 1) if caller.parent is not None else ""
            return out[comp_name]
        if caller.opcode not in _INLINED:
            return ""
        name = caller.metadata.op_name
        name = "" if name in SYNTHETIC_OP_NAMES else name
        outer = prefix(caller.parent.name, depth + 1) if caller.parent is not None else ""
        # (TF names a branch's nested ``tf.cond`` in full: ``rm_sprop/cond/cond`` inside ``rm_sprop/cond``)
        out[comp_name] = name if outer and name.startswith(outer + "/") else "/".join(p for p in (outer, name) if p)
        return out[comp_name]

    for comp in module.computations:
        prefix(comp.name)
    return {k: v for k, v in out.items() if v}


def _first_callers(module: HloModule) -> tuple[dict[str, Instruction], dict[str, Instruction]]:
    """Computation name → the first instruction calling it; and → the first fusion calling it
    (what :mod:`hloviz.analysis.updates` follows fused parameters through), in the same pass."""
    out: dict[str, Instruction] = {}
    fusions: dict[str, Instruction] = {}
    for comp in module.computations:
        for inst in comp.instructions:
            for c in inst.called_computations:
                out.setdefault(c.name, inst)
                if inst.opcode == "fusion":
                    fusions.setdefault(c.name, inst)
    return out, fusions
