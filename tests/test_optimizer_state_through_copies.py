"""An optimizer's bookkeeping read through a copy XLA made is still the optimizer's.

optax's ``scale_by_schedule`` counts its steps (``safe_increment``: ``count + 1`` wrapped in a
``_where``) and returns the count, read by no update. After optimization XLA hands the count
parameter to that kernel through a ``copy`` of its own (no op name): held-out round 82's NeRF
step (``benchmarks/heldout/round82_jax.py:nerf_yogi_step``, ``copy.87 = copy(opt_state_1__1__count.1)``)
drew the increment as forward work beside its twin of the other state, which reads the count
directly and was the optimizer's.

The module is written by hand; the phases expected are read off what each instruction computes:
the step count's copy and increment serve the optimizer alone; the model reads its input through
a copy too, which stays forward.
"""

from __future__ import annotations

from hloviz.analysis.scopes import build_scope_tree
from hloviz.parser import parse

_MODULE = """HloModule jit_step, is_scheduled=true, entry_computation_layout={(f32[8]{0}, f32[8]{0}, s32[])->(f32[8]{0}, s32[], f32[8]{0})}

%fused_update (p0: f32[8], p1: f32[8]) -> f32[8] {
  %p0 = f32[8]{0} parameter(0)
  %p1 = f32[8]{0} parameter(1)
  %g = f32[8]{0} multiply(%p1, %p1), metadata={op_name="jit(step)/transpose(jvp(model))/mul"}
  ROOT %u = f32[8]{0} subtract(%p0, %g), metadata={op_name="jit(step)/sub"}
}

%fused_count (c0: s32[]) -> s32[] {
  %c0 = s32[] parameter(0)
  %one = s32[] constant(1)
  %next = s32[] add(%c0, %one), metadata={op_name="jit(step)/jit(_where)/add"}
  %limit = s32[] constant(2147483647)
  %lt = pred[] compare(%c0, %limit), direction=LT, metadata={op_name="jit(step)/jit(_where)/lt"}
  ROOT %sel = s32[] select(%lt, %next, %limit), metadata={op_name="jit(step)/jit(_where)/select_n"}
}

ENTRY %main (params: f32[8], x: f32[8], opt_state_count: s32[]) -> (f32[8], s32[], f32[8]) {
  %params = f32[8]{0} parameter(0)
  %x = f32[8]{0} parameter(1)
  %opt_state_count = s32[] parameter(2)
  %xc = f32[8]{0} copy(%x)
  %y = f32[8]{0} multiply(%xc, %params), metadata={op_name="jit(step)/jvp(model)/mul"}
  %new = f32[8]{0} fusion(%params, %y), kind=kLoop, calls=%fused_update, metadata={op_name="jit(step)/sub"}
  %copy.1 = s32[] copy(%opt_state_count)
  %count = s32[] fusion(%copy.1), kind=kLoop, calls=%fused_count, metadata={op_name="jit(step)/jit(_where)/select_n"}
  ROOT %out = (f32[8]{0}, s32[], f32[8]{0}) tuple(%new, %count, %y)
}
"""


def test_the_step_counts_copy_and_increment_are_the_optimizers():
    module = parse(_MODULE)
    tree = build_scope_tree(module, stage="post")
    phase = {i.name: tree.phases.get(i) for i in module.instructions()}
    assert phase["new"] == "optimizer"  # the update itself (reads the gradient)
    assert phase["count"] == "optimizer"
    assert phase["copy.1"] == "optimizer"
    assert phase["xc"] != "optimizer" and phase["y"] != "optimizer"  # the model's input, copied, is no state
