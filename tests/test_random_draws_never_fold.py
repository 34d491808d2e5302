"""A random draw is never "folded": XLA expands it into bit arithmetic whose constants carry its name.

Held-out round 83's WGAN-GP step (``benchmarks/heldout/round83.py``) draws its interpolation
weights with ``tf.random.uniform``. XLA turns the ``rng`` into a state update and bit arithmetic
(shift the random bits right by 9, scale by 2**-23) and names nothing of it after the op but
those two constants, so the op came out "folded by XLA into constant = 9" — a user reads that as
noise frozen at compile time. The draw runs on every call, in kernels without the op's name.

The modules are written by hand (TensorFlow's names); what is expected follows from XLA's rule
that an ``rng`` is never evaluated at compile time.
"""

from __future__ import annotations

import json

from . import run_cli

_PRE = """HloModule a_inference_step, entry_computation_layout={(f32[8]{0})->f32[8]{0}}

ENTRY %main (x: f32[8]) -> f32[8] {
  %x = f32[8]{0} parameter(0), metadata={op_type="_Arg" op_name="XLA_Args"}
  %RandomUniform.1 = f32[] constant(0), metadata={op_type="RandomUniform" op_name="random_uniform/RandomUniform"}
  %RandomUniform.2 = f32[] constant(1), metadata={op_type="RandomUniform" op_name="random_uniform/RandomUniform"}
  %RandomUniform.3 = f32[8]{0} rng(%RandomUniform.1, %RandomUniform.2), distribution=rng_uniform, metadata={op_type="RandomUniform" op_name="random_uniform/RandomUniform"}
  ROOT %mul.1 = f32[8]{0} multiply(%x, %RandomUniform.3), metadata={op_type="Mul" op_name="mul"}
}
"""

_POST = """HloModule a_inference_step, is_scheduled=true, entry_computation_layout={(f32[8]{0})->f32[8]{0}}

%fused_computation (p0: f32[8], p1: u32[8]) -> f32[8] {
  %p1 = u32[8]{0} parameter(1)
  %constant.9 = u32[] constant(9), metadata={op_type="RandomUniform" op_name="random_uniform/RandomUniform"}
  %b9 = u32[8]{0} broadcast(%constant.9), dimensions={}
  %shr = u32[8]{0} shift-right-logical(%p1, %b9)
  %cv = f32[8]{0} convert(%shr)
  %constant.2 = f32[] constant(1.1920929e-07), metadata={op_type="RandomUniform" op_name="random_uniform/RandomUniform"}
  %be = f32[8]{0} broadcast(%constant.2), dimensions={}
  %u = f32[8]{0} multiply(%cv, %be)
  %p0 = f32[8]{0} parameter(0)
  ROOT %mul.1 = f32[8]{0} multiply(%p0, %u), metadata={op_type="Mul" op_name="mul"}
}

ENTRY %main (x: f32[8]) -> f32[8] {
  %x = f32[8]{0} parameter(0)
  %state = u64[] rng-get-and-update-state(), delta=8
  %low = u32[] convert(%state)
  %bits = u32[8]{0} broadcast(%low), dimensions={}
  ROOT %f = f32[8]{0} fusion(%x, %bits), kind=kLoop, calls=%fused_computation, metadata={op_type="Mul" op_name="mul"}
}
"""


def test_a_random_draw_runs_unnamed_and_is_not_folded(tmp_path, capsys):
    (tmp_path / "pre.hlo").write_text(_PRE)
    (tmp_path / "post.hlo").write_text(_POST)
    code, out, err = run_cli(["stats", "--pre", str(tmp_path / "pre.hlo"), "--post", str(tmp_path / "post.hlo"),
                              "--json"], capsys)
    assert code == 0, err
    report = json.loads(out)
    draw = report["mapping"]["random_uniform/RandomUniform"]
    assert draw["status"] == "no_op_name", draw  # it runs, in kernels that carry no name of it
    assert not draw["constants"]
    assert not [f for f in report["folded"] if "random_uniform/RandomUniform" in f["from"]], report["folded"]
