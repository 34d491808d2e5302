"""How many times the computations inside loops run: XLA's known trip counts.

A ``while`` runs its body once per iteration, and XLA holds that body once: a Flax
``nn.scan`` over three blocks, a ``lax.scan`` over a sequence, ``tf.while_loop`` all become one
``while`` whose body computation holds one step's work. When XLA's while-loop analysis works
out the number of iterations, the optimized module says so in the loop's backend config::

    %while.5 = (…) while(%tuple), condition=%region_7.16, body=%region_0.15,
        backend_config={"known_trip_count":{"n":"3"}, "known_init_step":{…}, …}

:func:`loop_runs` gives, for each computation a loop runs (its body and condition, and what
they call: fusions, reducers, nested loops), how many times it runs per execution of the
module: the product of the trip counts of the loops around it, or None when one of them is not
known (a ``while_loop`` until convergence; a pre-optimization module, where XLA has not
analysed the loops yet). Kernels in a loop are drawn and listed once, with ``×N``
(:func:`trips_text`); their FLOPs and bytes are one iteration's.

:func:`runs_steps` tells a loop of training steps (or micro-batches) from the loops inside
one step (a scan over layers, an RNN), by the names TensorFlow gives its ops.
"""

from __future__ import annotations

import re

from ..ir import Computation, HloModule, Instruction, called_closure
from ..opcodes import PRODUCTS
from .opnames import BACKWARD_PREFIXES, parse_op_name

__all__ = ["known_trip_count", "loop_runs", "runs_of", "runs_steps", "trips_text"]

_TRIP_COUNT = re.compile(r'"known_trip_count"\s*:\s*\{\s*"n"\s*:\s*"?(\d+)"?')


def known_trip_count(loop: Instruction) -> int | None:
    """The iterations of a ``while`` as XLA's backend config states them, else None."""
    if loop.opcode != "while":
        return None
    m = _TRIP_COUNT.search(loop.attributes.get("backend_config", ""))
    return int(m.group(1)) if m else None


def loop_runs(module: HloModule) -> dict[str, int | None]:
    """Computation name → how many times it runs per execution of ``module``, for the
    computations inside at least one ``while`` (see the module docstring); computations outside
    every loop are left out. A computation reached by two paths (a reducer shared by a loop's
    body and the entry) keeps the first it was reached by, from the entry down."""
    out: dict[str, int | None] = {}
    entry = module.entry
    if entry is None:
        return out
    # (computation, runs so far: 1 outside loops, None unknown, and whether inside a loop)
    todo: list[tuple[Computation, int | None, bool]] = [(entry, 1, False)]
    seen: set[str] = {entry.name}
    while todo:
        comp, runs, inside = todo.pop()
        if inside:
            out[comp.name] = runs
        for inst in comp.instructions:
            if not inst.called_computations:
                continue
            if inst.opcode == "while":
                trips = known_trip_count(inst)
                inner: int | None = runs * trips if runs is not None and trips is not None else None
                here, deeper = inner, True
            else:
                here, deeper = runs, inside
            for called in inst.called_computations:
                if called.name not in seen:
                    seen.add(called.name)
                    todo.append((called, here, deeper))
    return out


def trips_text(runs: int | None) -> str:
    """``×3`` for a known count, ``×?`` for a loop XLA did not count."""
    return f"×{runs}" if runs is not None else "×?"


#: The last few modules' :func:`loop_runs`, for :func:`runs_of` (the module kept with its runs:
#: an id is only looked up while its module is alive and the same).
_RECENT: dict[int, tuple[HloModule, dict[str, int | None]]] = {}


def runs_of(instructions: list[Instruction]) -> tuple[bool, int | None]:
    """(whether all of ``instructions`` run in a loop, their common count or None): what a
    picture's closed scope says of its members (``×3``). Empty or outside loops: (False, None)."""
    comps = {id(i.parent): i.parent for i in instructions if i.parent is not None}
    module = next((c.parent for c in comps.values() if c.parent is not None), None)
    if module is None:
        return False, None
    hit = _RECENT.get(id(module))
    if hit is None or hit[0] is not module:
        if len(_RECENT) >= 8:
            _RECENT.clear()
        hit = _RECENT[id(module)] = (module, loop_runs(module))
    runs = hit[1]
    if not runs or any(c.name not in runs for c in comps.values()):
        return False, None
    counts = {runs[c.name] for c in comps.values()}
    return True, counts.pop() if len(counts) == 1 else None


def runs_steps(loop: Instruction) -> bool:
    """Does ``loop`` run whole training steps (or micro-batches of one): a ``while`` whose body
    runs products (dots, convolutions) named inside the loop (TensorFlow's ``while/cnn_1/…``,
    JAX's ``jit(f)/while/body/jvp(…)/…``) and their gradients, taken inside it too
    (``gradient_tape/while/cnn_1/…``, ``jit(f)/while/body/transpose(jvp(…))/…``): a ``for``
    over ``tf.range`` around a step (``steps_per_execution``), a ``lax.scan`` of steps over
    batches, a gradient accumulation. Not a loop inside one pass (an RNN's or a scan over
    layers, whose gradient is a loop of its own, named as the backward pass's), nor a body that
    only calls the step (JAX's ``closed_call`` before optimization, whose ops are named from the
    call, ``jvp()/dot_general``: opened, the body would show the call closed beside the fan of
    the carried tuple into it)."""
    name = loop.metadata.op_name
    bodies = loop.calls_by_attribute.get("body", ()) if loop.opcode == "while" and name else ()
    if not bodies:
        return False
    inside = f"{name}/"
    passes = set()
    for comp in called_closure(bodies):
        for inst in comp.instructions:
            if inst.opcode not in PRODUCTS:
                continue
            op_name = inst.metadata.op_name
            head, _, rest = op_name.partition("/")
            if head in BACKWARD_PREFIXES and rest.startswith(inside):
                passes.add("backward")
            elif op_name.startswith(inside):  # JAX's ``jit(f)/while/body/transpose(jvp(…))/…``: backward
                passes.add(parse_op_name(op_name, inst.metadata.op_type).phase)
    return {"forward", "backward"} <= passes
