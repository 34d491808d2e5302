"""The names a pre-optimization op can carry after optimization.

Ops are linked across optimization by ``metadata.op_name``. When XLA inlines a called
computation (``call``, a ``conditional`` branch), it prefixes the inlined instructions' op names
with the caller's: JAX's ``max`` inside ``jit(relu)`` comes out as ``jit(mlp)/jit(relu)/max``, and
TF's ``cond/Sin`` inside a branch as ``cond/cond/Sin``. A loop inside the inlined computation keeps
its body, which XLA renames alike: JAX's ``while/body/add`` in the threefry loop of
``jit(_uniform)`` comes out as ``jit(step)/jit(_bernoulli)/jit(_uniform)/while/body/add``. :func:`post_names` lists, for each
pre-opt op name, the names it may have afterwards, so lookups need no guessing beyond that rule.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

from ...ir import Computation, HloModule, Instruction
from ...opcodes import INLINING_CALLERS
from ..kernels import SYNTHETIC_OP_NAMES

T = TypeVar("T")

#: Inside :func:`facts_kept`: (what, id(module)) → (the module, the answer).
_kept: dict[tuple[str, int], tuple[HloModule, object]] | None = None


@contextmanager
def facts_kept() -> Iterator[None]:
    """Inside the block, :func:`post_names` and :func:`~hloviz.analysis.pre_post.folded.live_ids`
    of a module are worked out once: the folding and the mapping of one
    :func:`hloviz.analysis.analyze` each ask for both, of the same pre-optimization module
    (0.03 s of an EfficientNetB0 step's 0.35). Outside a block nothing is kept, so a module
    changed between two calls is read afresh. The answers are shared: read them, do not change them."""
    global _kept
    outer = _kept
    if outer is None:
        _kept = {}
    try:
        yield
    finally:
        if outer is None:
            _kept = None


def kept_fact(what: str, module: HloModule, work: Callable[[HloModule], T]) -> T:
    """``work(module)``, or its answer for the same module earlier in this :func:`facts_kept` block."""
    kept = _kept
    if kept is None:
        return work(module)
    hit = kept.get((what, id(module)))
    if hit is not None and hit[0] is module:
        return hit[1]  # type: ignore[return-value]
    answer = work(module)
    kept[(what, id(module))] = (module, answer)
    return answer


def post_names(module: HloModule) -> dict[str, frozenset[str]]:
    """Pre-opt op name → every name it may carry after inlining (itself included).

    Ops that only name parameters (JAX names arguments ``x``, ``w1``…) are not listed.
    """
    return kept_fact("post_names", module, _post_names)


def _prefix_finder(module: HloModule) -> Callable[[Computation | None], frozenset[str]]:
    """The op-name prefixes XLA may give a computation's ops when it inlines their callers (a
    loop's body and condition take those of the computation holding the loop)."""
    callers: dict[str, list[Instruction]] = {}
    loops: dict[str, list[Instruction]] = {}  # a body or condition → its loops (named as where they sit)
    for inst in module.instructions():
        if inst.opcode in INLINING_CALLERS or inst.opcode == "while":
            for c in inst.called_computations:
                (callers if inst.opcode != "while" else loops).setdefault(c.name, []).append(inst)
    memo: dict[str, frozenset[str]] = {}

    def prefixes(comp: Computation | None, depth: int = 0) -> frozenset[str]:
        if comp is None or depth > 64 or not callers:
            return frozenset()
        if comp.name not in memo:
            memo[comp.name] = frozenset()  # cycle guard
            out: set[str] = set()
            for caller in callers.get(comp.name, ()):
                name = caller.metadata.op_name
                outer = prefixes(caller.parent, depth + 1)
                if name and name not in SYNTHETIC_OP_NAMES:
                    out.add(name)
                    out.update(f"{p}/{name}" for p in outer)
                else:
                    out.update(outer)
            for loop in loops.get(comp.name, ()):
                out.update(prefixes(loop.parent, depth + 1))
            memo[comp.name] = frozenset(out)
        return memo[comp.name]

    return prefixes


def _post_names(module: HloModule) -> dict[str, frozenset[str]]:
    prefixes = _prefix_finder(module)
    names: dict[str, set[str]] = {}
    for comp in module.computations:
        for inst in comp.instructions:
            op = inst.metadata.op_name
            if not op or op in SYNTHETIC_OP_NAMES or inst.opcode == "parameter":
                continue
            bucket = names.setdefault(op, {op})
            bucket.update(f"{p}/{op}" for p in prefixes(comp))
    return {op: frozenset(v) for op, v in names.items()}


def inlined_origins(module: HloModule) -> dict[str, str]:
    """The name XLA writes for an op of ``module`` (pre-optimization) that it inlines, where the op
    was already named under its caller → the op's own name.

    TensorFlow names a branch's ops in full (``cond/adadelta/Mul`` in the branch of the ``tf.cond``
    named ``cond``); XLA, inlining the branch, prefixes them again: ``cond/cond/adadelta/Mul``. Read
    as it stands, the optimized module has a scope ``cond/cond`` the program never had, and its
    kernels leave the ``cond/adadelta`` that holds the ops (a TCN's Adadelta: 982 ops, 0 kernels).
    JAX names a called function's ops relative to the call (``max`` in ``jit(relu)``): the prefixed
    name is their scope, and is not listed. Names the module itself uses are never listed."""
    prefixes = _prefix_finder(module)
    out: dict[str, str] = {}
    own: set[str] = set()
    for comp in module.computations:
        found = prefixes(comp)
        if not found:
            continue
        for inst in comp.instructions:
            op = inst.metadata.op_name
            if not op or op in SYNTHETIC_OP_NAMES or inst.opcode == "parameter":
                continue
            own.add(op)
            for p in found:
                if op == p or op.startswith(p + "/"):
                    out.setdefault(f"{p}/{op}", op)
    return {name: op for name, op in out.items() if name not in own}


def pair(pre: HloModule, post: HloModule) -> None:
    """Tell ``post`` the names its inlined ops had before optimization
    (:attr:`~hloviz.ir.HloModule.inlined_origins`, read by the scope trees): once, when the two
    stages of one compile meet (a capture's modules, :func:`hloviz.analysis.analyze`)."""
    if post.inlined_origins is None:
        post.inlined_origins = inlined_origins(pre)
