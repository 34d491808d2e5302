"""Which layer each optimizer op updates: the optimizer phase, per layer.

An optimizer's op names say only that they are the optimizer's (``adam/Mul_103``), not whose
variable they update. The data flow does: Adam's update of a layer's kernel reads that
kernel's gradient (backward ops in the layer's scope) and the kernel itself (a parameter named
after it, :func:`hloviz.analysis.provenance.parameter_names`). :func:`optimizer_targets` follows
each optimizer instruction's operands back through the optimizer's own instructions to those
sources; an op fed by one layer's sources updates that layer. Ops fed by no layer, or by several
(the step count, the learning-rate schedule), are shared and left out.

Read it from a pre-optimization tree: there every op is its own instruction, while after
optimization an optimizer's ops may share a fusion with the backward pass.

The package reads in three steps: :mod:`.targets` places each optimizer instruction (the public
answers), :mod:`.tracer` follows its operands back to the layers it reads, and :mod:`.reads`
finds the layer that reads a parameter (a weight, through slices of a scan's stacked weights).
"""

from __future__ import annotations

from .targets import optimizer_targets, update_targets

__all__ = ["optimizer_targets", "update_targets"]
