"""What users trip on when they read a memory report, said about *this* module.

Each note is a fact of the module (or of XLA's record) with what it means:

* **in-place updates**: a ``dynamic-update-slice`` / ``scatter`` (or a fusion rooted in one)
  writes into its operand's buffer — no second copy of the array;
* **donated / aliased parameters**: with ``input_output_alias`` (``donate_argnums``, TF's
  resource variables) an output is written into a parameter's allocation;
* **loops**: a while loop's state is one set of buffers for all iterations; its body's
  temporaries are allocated once, not once per iteration;
* **copies XLA inserted**: ``copy`` instructions in the schedule are mostly XLA's (copy insertion
  keeps a value that must survive an in-place update or a loop iteration; layout changes);
* **temporaries inside outputs**: XLA places temporaries in an output's allocation when their
  live ranges do not overlap, so "output bytes" may also hold temporaries.
"""

from __future__ import annotations

from hloviz.opcodes import IN_PLACE

from ...units import binary_size
from .dataflow import Dataflow
from .records import XlaAssignment

__all__ = ["memory_notes"]


def memory_notes(flow: Dataflow, xla: XlaAssignment | None, reused_outputs: int = 0) -> list[str]:
    """The notes that apply to ``flow``'s module (see the module docstring)."""
    notes: list[str] = []
    devices = flow.module.devices
    if devices is not None:
        notes.append(f"per device: the module is one device's share of a program run on {devices[0]} devices ({devices[1]}); "
                     "these are one device's buffers")
    in_place = [v for b in flow.buffers for v in b.values if _in_place(v.instruction) and len(b.values) > 1]
    if in_place:
        names = ", ".join(sorted({v.instruction.name for v in in_place})[:3])
        notes.append(f"in-place updates: {len(in_place)} instruction(s) ({names}{', …' if len(in_place) > 3 else ''}) "
                     "write into their operand's buffer (dynamic-update-slice / scatter); the updated array takes "
                     "no second buffer")
    donated = [b for b in flow.buffers if b.kind == "parameters" and b.aliased]
    if donated:
        total = sum(b.size for b in donated)
        notes.append(f"donated parameters: {len(donated)} parameter buffer(s), {binary_size(total)}, are reused for outputs "
                     "(input_output_alias: JAX's donate_argnums, TensorFlow's resource variables); those outputs "
                     "take no allocation of their own")
    loops = flow.loop_buffers
    whiles = [i for i in flow.sequence if i.opcode == "while"]
    if whiles:
        carried = sum(b.size for b in loops)
        notes.append(f"loops: {len(whiles)} while loop(s); a loop's state is one set of buffers for every iteration "
                     f"({binary_size(carried)} carried here), and its body's temporaries are allocated once, not per "
                     "iteration")
    copies = [i for i in flow.sequence if i.opcode == "copy"]
    if copies:
        total = sum(v.size for b in flow.buffers for v in b.values if v.instruction.opcode == "copy")
        notes.append(f"copies: {len(copies)} copy instruction(s), {binary_size(total)}, are XLA's own (copy insertion keeps a "
                     "value an in-place update or a loop would overwrite; layout assignment changes layouts); your "
                     "code has no copy")
    inside = _temporaries_in_outputs(xla) if xla is not None else reused_outputs
    if inside:
        notes.append(f"temporaries inside outputs: {inside} temporary buffer(s) live in an output's allocation (XLA "
                     "reuses it before the output is written), so they add nothing to the temporaries' total")
    return notes


def _in_place(inst) -> bool:
    if inst.opcode in IN_PLACE:
        return True
    if inst.opcode != "fusion" or not inst.called_computations:
        return False
    root = inst.called_computations[0].root
    return root is not None and root.opcode in IN_PLACE


def _temporaries_in_outputs(xla: XlaAssignment) -> int:
    """Values XLA placed in a maybe-live-out allocation that are not the allocation's output."""
    count = 0
    for a in xla.allocations:
        if a.kind == "outputs" and len(a.values) > 1:
            count += len(a.values) - 1
    return count
