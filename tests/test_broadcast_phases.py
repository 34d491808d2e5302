"""A forward broadcast that XLA copies into a backward fusion does not make the kernel forward work.

XLA duplicates cheap ops into every fusion that reads them: the broadcast of an RMSNorm's scale
(named by the forward pass, ``jvp(...)/mul``) lands inside the backward fusion that multiplies the
incoming gradient by it (``transpose(jvp(...))/mul``). That kernel runs no forward work; ``stats``
called it ``model/rms (fwd+bwd)`` (held-out round 80's GQA decoder; ``jax_gpt_step``'s final-norm
gradient). A kernel that only broadcasts a forward value is still forward work: nothing else
says what it is.

The modules are written by hand; each expected phase is read off their op names.
"""

from __future__ import annotations

import json

from . import run_cli

_HEAD = ("HloModule jit_step, is_scheduled=true, entry_computation_layout="
         "{(f32[8,16]{1,0}, f32[16]{0}, f32[8,16]{1,0})->f32[8,16]{1,0}}\n\n")

#: the gradient times the broadcast scale (backward), times the input (backward)
_BACKWARD_READING_A_FORWARD_BROADCAST = _HEAD + """%fused_computation (p0: f32[8,16], p1: f32[16], p2: f32[8,16]) -> f32[8,16] {
  %p0 = f32[8,16]{1,0} parameter(0)
  %p1 = f32[16]{0} parameter(1)
  %b = f32[8,16]{1,0} broadcast(%p1), dimensions={1}, metadata={op_name="jit(step)/jvp(model)/rms/mul"}
  %p2 = f32[8,16]{1,0} parameter(2)
  %m = f32[8,16]{1,0} multiply(%p2, %b), metadata={op_name="jit(step)/transpose(jvp(model))/rms/mul"}
  ROOT %a = f32[8,16]{1,0} multiply(%m, %p0), metadata={op_name="jit(step)/transpose(jvp(model))/rms/mul"}
}

ENTRY %main (x: f32[8,16], w: f32[16], g: f32[8,16]) -> f32[8,16] {
  %x = f32[8,16]{1,0} parameter(0)
  %w = f32[16]{0} parameter(1)
  %g = f32[8,16]{1,0} parameter(2)
  ROOT %f = f32[8,16]{1,0} fusion(%x, %w, %g), kind=kLoop, calls=%fused_computation, metadata={op_name="jit(step)/transpose(jvp(model))/rms/mul"}
}
"""

#: the same kernel where the forward multiply is recomputed beside the gradient: both phases
_FORWARD_RECOMPUTED = _BACKWARD_READING_A_FORWARD_BROADCAST.replace(
    'multiply(%m, %p0), metadata={op_name="jit(step)/transpose(jvp(model))/rms/mul"}',
    'multiply(%m, %p0), metadata={op_name="jit(step)/jvp(model)/rms/mul"}')

#: a kernel that only broadcasts the forward scale
_ONLY_A_BROADCAST = _HEAD + """ENTRY %main (x: f32[8,16], w: f32[16], g: f32[8,16]) -> f32[8,16] {
  %x = f32[8,16]{1,0} parameter(0)
  %w = f32[16]{0} parameter(1)
  %g = f32[8,16]{1,0} parameter(2)
  ROOT %b = f32[8,16]{1,0} broadcast(%w), dimensions={1}, metadata={op_name="jit(step)/jvp(model)/rms/mul"}
}
"""


#: layer ``d_3``'s work reading a bias broadcast named by another call of the layer, ``d_1`` (XLA
#: computes equal broadcasts once): ``d_1`` does no work in this kernel
_SHARED_BROADCAST = _HEAD + """%fused_computation (p0: f32[8,16], p1: f32[16], p2: f32[8,16]) -> f32[8,16] {
  %p0 = f32[8,16]{1,0} parameter(0)
  %p1 = f32[16]{0} parameter(1)
  %b = f32[8,16]{1,0} broadcast(%p1), dimensions={1}, metadata={op_name="gan/d_1/hidden/BiasAdd"}
  %a = f32[8,16]{1,0} add(%p0, %b), metadata={op_name="gan/d_3/hidden/BiasAdd"}
  %p2 = f32[8,16]{1,0} parameter(2)
  ROOT %m = f32[8,16]{1,0} maximum(%a, %p2), metadata={op_name="gan/d_3/hidden/Relu"}
}

ENTRY %main (x: f32[8,16], w: f32[16], g: f32[8,16]) -> f32[8,16] {
  %x = f32[8,16]{1,0} parameter(0)
  %w = f32[16]{0} parameter(1)
  %g = f32[8,16]{1,0} parameter(2)
  ROOT %f = f32[8,16]{1,0} fusion(%x, %w, %g), kind=kLoop, calls=%fused_computation, metadata={op_name="gan/d_3/hidden/Relu"}
}
"""


def _layer(tmp_path, capsys, text: str, kernel: str) -> str:
    path = tmp_path / "post.hlo"
    path.write_text(text)
    code, out, err = run_cli(["stats", str(path), "--json"], capsys)
    assert code == 0, err
    (k,) = [k for k in json.loads(out)["kernels"] if k["name"] == kernel]
    return k["layer"]


def _scope_phases(tmp_path, capsys, text: str) -> dict[str, str]:
    path = tmp_path / "post.hlo"
    path.write_text(text)
    code, out, err = run_cli(["stats", str(path), "--by", "scope", "--json"], capsys)
    assert code == 0, err
    return {r["scope"]: r["phase"] for r in json.loads(out)["scopes"] if r["depth"] > 0}


def test_a_backward_kernel_reading_a_forward_broadcast_is_backward(tmp_path, capsys):
    assert _layer(tmp_path, capsys, _BACKWARD_READING_A_FORWARD_BROADCAST, "f") == "model/rms (backward)"
    phases = _scope_phases(tmp_path, capsys, _BACKWARD_READING_A_FORWARD_BROADCAST)
    assert phases["model/rms"] == "backward"


def test_forward_work_beside_the_gradient_still_counts(tmp_path, capsys):
    assert _layer(tmp_path, capsys, _FORWARD_RECOMPUTED, "f") == "model/rms (forward+backward)"


def test_a_kernel_that_only_broadcasts_keeps_the_broadcasts_phase(tmp_path, capsys):
    assert _layer(tmp_path, capsys, _ONLY_A_BROADCAST, "b") == "model/rms"


def test_a_layer_whose_only_part_is_a_shared_broadcast_is_not_listed(tmp_path, capsys):
    path = tmp_path / "post.hlo"
    path.write_text(_SHARED_BROADCAST)
    code, out, err = run_cli(["stats", str(path), "--json"], capsys)
    assert code == 0, err
    (k,) = json.loads(out)["kernels"]
    assert k["scopes"] == ["gan/d_3/hidden"], k["scopes"]
    code, out, err = run_cli(["stats", str(path), "--by", "scope", "--json"], capsys)
    assert code == 0, err
    rows = {r["scope"]: r["kernels"] for r in json.loads(out)["scopes"] if r["depth"] > 0}
    assert rows.get("gan/d_1/hidden", []) == [] and rows["gan/d_3/hidden"] == ["f"], rows
