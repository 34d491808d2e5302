"""``hloviz stats --by scope``: what XLA did to each layer.

One row per scope of the model (:mod:`hloviz.analysis.scopes`), at every depth:

* ``ops`` — the ops of the traced function (as the pre→post mapping counts them) at or under
  the scope, and ``statuses``: how many of them are in kernels, ``folded`` (computed at compile
  time), ``eliminated`` or of any other status the mapping gives;
* ``kernels`` — the kernels holding at least one instruction of the scope (a kernel that spans
  two scopes is listed in both);
* ``flops`` — the FLOP estimates of the kernels' work instructions that belong to the scope
  (each instruction counts where its op name puts it, so siblings add up to their parent), as
  many times as the module's totals count its kernel: a computation two calls share twice, a loop
  body once, and of a conditional's branches only the one the totals take (the largest);
* ``bytes`` — bytes read and written by the kernels whose own instruction (the fusion, or the
  unfused op) belongs to the scope: each kernel is counted once, at home.

So the top-level rows add up to the module's own numbers: ops to the mapping's op count, flops
and bytes to the kernel report's totals, and their kernels cover every kernel.

In: the pre- and post-optimization modules, their kernel report and pre→post mapping (and the
trees, if built). Out: :class:`ScopeRow` per scope (:func:`scope_rows`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...ir import HloModule, Instruction
from ..executed import counted_runs
from ..kernels import KernelReport, computation_sums, work_instructions
from ..kernels import flops as instruction_flops
from ..loops import loop_runs, trips_text
from ..pre_post.mapping import Mapping
from .scope import TOP_LEVEL, Scope
from .tree import PHASES, ScopeTree


@dataclass(frozen=True)
class ScopeRow:
    """The numbers of one scope (see the module docstring). ``ops``, ``folded`` and
    ``eliminated`` are None without a pre-optimization module; ``kernels``, ``flops`` and
    ``bytes`` are empty / 0 without an optimized one. ``phases`` splits ``ops`` and ``kernels``
    by phase (``forward``, ``backward``, ``optimizer``) for the phases present. For a layer, the
    ``optimizer`` entry (marked ``updates_variables``) holds the optimizer's ops and kernels that
    update the layer's variables (:mod:`hloviz.analysis.updates`); they are counted in the
    optimizer's own scope as well, not in the layer's ``ops``."""

    scope: str
    label: str
    depth: int
    kind: str
    phase: str
    ops: int | None
    folded: int | None
    eliminated: int | None
    kernels: tuple[str, ...]
    flops: int
    bytes: int
    phases: dict[str, dict] = field(default_factory=dict)
    #: The mapping's status → how many of the scope's ops have it (every status, zeros included).
    statuses: dict[str, int] | None = None
    #: Whether all the scope's kernels run in a loop (a scanned block, a ``while`` body), and
    #: how many times per execution when XLA knows (:func:`hloviz.analysis.loops.loop_runs`; the
    #: numbers of the row are one iteration's): ``in_loop`` False outside, ``runs`` None unknown.
    in_loop: bool = False
    runs: int | None = None
    #: The path in the names users know (:attr:`Scope.plain_path`: ``vit_forward``,
    #: ``ViT/blocks/mlp``, no JAX ``jit(f)``); ``scope`` is the op names' path, which ``--scope``
    #: and the trees look up. The JSON's ``scope`` is this one.
    path: str = ""

    @property
    def loop_text(self) -> str:
        """``×3`` for a scope whose kernels run 3 times, ``×?`` in a loop of unknown count, else ""."""
        return trips_text(self.runs) if self.in_loop else ""

    def to_dict(self) -> dict:
        return {"scope": self.path or self.scope, "label": self.label, "depth": self.depth, "kind": self.kind,
                "phase": self.phase, "ops": self.ops, "kernels": list(self.kernels),
                "kernel_count": len(self.kernels), "folded": self.folded, "eliminated": self.eliminated,
                "statuses": self.statuses,
                "flops": self.flops, "bytes": self.bytes, "phases": self.phases,
                "in_loop": self.in_loop, "loop_runs": self.runs}


def scope_rows(pre: ScopeTree | None, post: ScopeTree | None, mapping: Mapping | None = None, *,
               depth: int | None = None) -> list[ScopeRow]:
    """The rows of every scope of either tree down to ``depth`` (all when None), the root first,
    in the post tree's order (pre-only scopes after their siblings)."""
    paths = _ordered_paths(post, pre)
    ops = _op_counts(pre, mapping) if pre is not None and mapping is not None else None
    statuses = tuple(mapping.counts) if mapping is not None else ()
    updates = (pre.updates if pre is not None else {}) or (post.updates if post is not None else {})
    updated_ops = _update_counts(pre, updates) if pre is not None else {}
    updated_kernels = _update_kernels(post, updates) if post is not None else {}
    if ops is not None and TOP_LEVEL in ops and TOP_LEVEL not in paths:
        unnamed = [i for i, p in enumerate(paths) if p.startswith("(")]
        paths.insert(unnamed[0] if unnamed else len(paths), TOP_LEVEL)
    flops, nbytes = _kernel_numbers(post) if post is not None else ({}, {})
    kernel_runs = _kernel_runs(post) if post is not None else {}
    rows = []
    for path in paths:
        s_post = post.get(path) if post is not None else None
        s_pre = pre.get(path) if pre is not None else None
        s = s_post or s_pre or Scope(path, path, 1, label=path, kind="top")
        if depth is not None and s.depth > depth:
            continue
        counts = ops.get(path, {}) if ops is not None else None
        phases: dict[str, dict] = {}
        for p in PHASES:
            entry: dict = {}
            if counts is not None and counts.get(p):
                entry["ops"] = counts[p]
            if s_post is not None and s_post.kernels_by_phase.get(p):
                entry["kernels"] = list(s_post.kernels_by_phase[p])
            if (p == "optimizer" and s.kind == "scope" and not entry
                    and (updated_ops.get(path) or updated_kernels.get(path))):
                entry = {"ops": updated_ops.get(path, 0), "kernels": list(updated_kernels.get(path, ())),
                         "updates": True}
            if entry:
                phases[p] = {"ops": entry.get("ops", 0), "kernels": entry.get("kernels", [])}
                if entry.get("updates"):
                    phases[p]["updates_variables"] = True
        rows.append(ScopeRow(
            scope=path, label=s.plain_path if s.is_function else s.label, depth=s.depth, kind=s.kind,
            phase="+".join(p for p in PHASES if p in phases) or s.phase,
            ops=counts.get("ops", 0) if counts is not None else None,
            folded=counts.get("folded", 0) if counts is not None else None,
            eliminated=counts.get("eliminated", 0) if counts is not None else None,
            statuses={st: counts.get(f"status:{st}", 0) for st in statuses} if counts is not None else None,
            kernels=s_post.kernels if s_post is not None else (),
            flops=flops.get(path, 0), bytes=nbytes.get(path, 0), phases=phases,
            **_loop_of(s_post.kernels if s_post is not None else (), kernel_runs),
            path=user_path(s, path),
        ))
    return rows


def user_path(s: Scope, path: str) -> str:
    """A JAX scope's :attr:`~Scope.plain_path` (below the traced function; the function by its
    name); any other scope's path as the op names write it (a TF scope's path is what
    ``--scope`` and the JSON have always said)."""
    if s.kind == "scope" and any(a.is_function for a in (s, *s.ancestors())):
        return s.plain_path
    return path


def _kernel_runs(post: ScopeTree) -> dict[str, int | None]:
    """Kernel name → how many times it runs, for the kernels inside loops (:func:`loop_runs`)."""
    report = post.kernel_report
    if report is None:
        return {}
    runs = loop_runs(post.module)
    if not runs:
        return {}
    return {k.name: runs[k.computation] for k in report.kernels if k.computation in runs}


def _loop_of(kernels: tuple[str, ...], kernel_runs: dict[str, int | None]) -> dict:
    """``in_loop``/``runs`` of a scope: in a loop when every one of its kernels is, with their
    common count (None when they differ or one is unknown)."""
    if not kernels or not kernel_runs or any(k not in kernel_runs for k in kernels):
        return {}
    counts = {kernel_runs[k] for k in kernels}
    return {"in_loop": True, "runs": counts.pop() if len(counts) == 1 else None}


def _ordered_paths(post: ScopeTree | None, pre: ScopeTree | None) -> list[str]:
    """Paths depth first: the post tree's order, a pre-only scope right after its siblings."""
    children: dict[str, dict[str, None]] = {}
    for tree in (post, pre):
        if tree is None:
            continue
        for s in tree.walk():
            for c in s.children:
                children.setdefault(s.path, {})[c.path] = None
    out: list[str] = []
    stack = [""]
    while stack:
        p = stack.pop()
        out.append(p)
        stack.extend(reversed(list(children.get(p, ()))))
    return out


def _op_counts(pre: ScopeTree, mapping: Mapping) -> dict[str, dict[str, int]]:
    """Path → ``ops``, ``folded``, ``eliminated`` and ops per phase, at or under the path. An
    op's phase is its instructions' in the tree (most of them): the tree re-phases by data
    flow what the names call forward — optax's update (``jit(step)/mul``), TensorFlow's update
    written by hand — and by names alone a JAX step's row said ``optimizer: 0 ops, 17 kernels``."""
    out: dict[str, dict[str, int]] = {}
    from ..opnames import parse_op_name

    votes: dict[str, dict[str, int]] = {}
    in_scope: dict[int, set[str]] = {}  # id(scope) → the phases of the instructions filed there
    phase_of = pre.phases.get
    for inst, scope in pre.filed():
        phase = phase_of(inst, "forward")
        in_scope.setdefault(id(scope), set()).add(phase)
        name = inst.metadata.op_name
        if name:
            tally = votes.setdefault(name, {})
            tally[phase] = tally.get(phase, 0) + 1
    for m in mapping.ops:
        s: Scope | None = pre.scope_of_op(m.op_name, m.op_type)
        tally = votes.get(m.op_name)
        # an op with no instruction (TF's Const, ReadVariableOp) takes its scope's one phase
        only = in_scope.get(id(s), set())
        phase = (max(tally, key=tally.__getitem__) if tally else
                 next(iter(only)) if len(only) == 1 else parse_op_name(m.op_name, m.op_type).phase)
        paths = []
        if s is pre.root:  # an op of a scope no HLO instruction has (TF's ``Add/ReadVariableOp``)
            paths.append(TOP_LEVEL)
        while s is not None:
            paths.append(s.path)
            s = s.parent
        for path in paths:
            c = out.setdefault(path, {})
            c["ops"] = c.get("ops", 0) + 1
            c[phase] = c.get(phase, 0) + 1
            if m.status in ("folded", "eliminated"):
                c[m.status] = c.get(m.status, 0) + 1
            c[f"status:{m.status}"] = c.get(f"status:{m.status}", 0) + 1
    return out


def _update_counts(pre: ScopeTree, updates: dict[str, str]) -> dict[str, int]:
    """Layer path → how many optimizer ops update its variables (at or under it)."""
    out: dict[str, int] = {}
    for path in updates.values():
        s = pre.get(path)
        while s is not None and s.kind == "scope":
            out[s.path] = out.get(s.path, 0) + 1
            s = s.parent
    return out


def _update_kernels(post: ScopeTree, updates: dict[str, str]) -> dict[str, dict[str, None]]:
    """Layer path → the kernels whose results are optimizer instructions updating its variables.

    A result's layer is its op name's (``updates``, read where every op is its own instruction:
    before optimization) or, where that is more precise, what the data flow of the optimized
    module says (JAX gives all of ``sgd``'s subtractions one name). Results only, not every op
    inside a kernel: XLA merges identical scalar work of many variables' updates (CSE) and keeps
    one op name for it, so an instruction deep inside a fused update can carry another
    variable's name."""
    out: dict[str, dict[str, None]] = {}
    report = post.kernel_report
    if report is None:
        return out
    from ..updates import update_targets

    targets = update_targets(post)
    module = post.module
    for k in report.kernels:
        comp = module.get_computation(k.computation)
        inst = comp.get(k.name) if comp is not None else None
        if inst is None:
            continue
        for result in _results(inst):
            path = updates.get(result.metadata.op_name)
            by_name = post.get(path) if path is not None else None
            by_flow = targets.get(result)
            # the more precise of the two, when they agree; the name's when they do not
            s = by_flow if by_flow is not None and (by_name is None or by_name.contains(by_flow)) else by_name
            while s is not None and s.kind == "scope":
                out.setdefault(s.path, {})[k.name] = None
                s = s.parent
    return out


def _results(inst: Instruction) -> list[Instruction]:
    """The instructions whose values a kernel produces: itself, and for a fusion its fused
    root (the elements of a multi-output fusion's root tuple)."""
    out = [inst]
    if inst.opcode == "fusion" and inst.called_computations:
        root = inst.called_computations[0].root
        if root is not None:
            out.extend(root.operands if root.opcode == "tuple" else [root])
    return out


def _kernel_numbers(post: ScopeTree) -> tuple[dict[str, int], dict[str, int]]:
    """Path → FLOPs of its kernels' work instructions; path → bytes of the kernels at home there."""
    report: KernelReport | None = post.kernel_report
    flops: dict[str, int] = {}
    nbytes: dict[str, int] = {}
    if report is None:
        return flops, nbytes
    module: HloModule = post.module
    # each kernel counted as often as the report's totals count it (a computation two calls
    # share: twice; of a conditional's branches, the one the totals take), so the rows add up to them
    own = computation_sums(report.kernels)
    read_runs, written_runs, flop_runs = counted_runs(module.entry, own, 3) if module.entry is not None else ({}, {}, {})
    for k in report.kernels:
        comp = module.get_computation(k.computation)
        inst = comp.get(k.name) if comp is not None else None
        if inst is None:
            continue
        times = flop_runs.get(k.computation, 0)
        for w in work_instructions(inst) if times else ():
            n = instruction_flops(w)
            if n:
                _add_up(post.scope_of(w), flops, n * times)
        moved = k.bytes_read * read_runs.get(k.computation, 0) + k.bytes_written * written_runs.get(k.computation, 0)
        _add_up(post.scope_of(inst), nbytes, moved)
    return flops, nbytes


def _add_up(scope: Scope | None, into: dict[str, int], n: int) -> None:
    while scope is not None:
        into[scope.path] = into.get(scope.path, 0) + n
        scope = scope.parent
