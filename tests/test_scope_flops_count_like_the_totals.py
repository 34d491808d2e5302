"""``stats --by scope`` counts each kernel as often as the module's totals do, so its module row
is the total and its rows add up to it.

The totals count as XLA's cost analysis does (docs/stats.md): a computation two ``call``s share,
twice; of a ``conditional``'s branches, only the largest. The rows counted every kernel once:
held-out round 80's L-BFGS step (``benchmarks/heldout/round80_jax.py:pinn_lbfgs_step``), whose
line search re-evaluates the loss and its gradient in either branch of a ``cond``, had a module
row of 34.0M FLOPs under a total of 22.7M.

The module below is written by hand; its FLOPs are counted by hand: a ``dot`` of two f32[8,8]
is 2·8·8·8 = 1024 FLOPs, a ``negate`` or an ``add`` of f32[8,8] 64.
"""

from __future__ import annotations

import json

from . import run_cli

_MODULE = """HloModule jit_f, is_scheduled=true, entry_computation_layout={(f32[8,8]{1,0}, pred[])->f32[8,8]{1,0}}

%big (p: f32[8,8]) -> f32[8,8] {
  %p = f32[8,8]{1,0} parameter(0)
  ROOT %d = f32[8,8]{1,0} dot(%p, %p), lhs_contracting_dims={1}, rhs_contracting_dims={0}, metadata={op_name="jit(f)/big/dot_general"}
}

%small (q: f32[8,8]) -> f32[8,8] {
  %q = f32[8,8]{1,0} parameter(0)
  ROOT %n = f32[8,8]{1,0} negate(%q), metadata={op_name="jit(f)/small/neg"}
}

%shared (s: f32[8,8]) -> f32[8,8] {
  %s = f32[8,8]{1,0} parameter(0)
  ROOT %m = f32[8,8]{1,0} dot(%s, %s), lhs_contracting_dims={1}, rhs_contracting_dims={0}, metadata={op_name="jit(f)/twice/dot_general"}
}

ENTRY %main (x: f32[8,8], k: pred[]) -> f32[8,8] {
  %x = f32[8,8]{1,0} parameter(0)
  %k = pred[] parameter(1)
  %c = f32[8,8]{1,0} conditional(%k, %x, %x), true_computation=%big, false_computation=%small, metadata={op_name="jit(f)/cond"}
  %t1 = f32[8,8]{1,0} call(%c), to_apply=%shared, metadata={op_name="jit(f)/twice"}
  %t2 = f32[8,8]{1,0} call(%t1), to_apply=%shared, metadata={op_name="jit(f)/twice"}
  ROOT %a = f32[8,8]{1,0} add(%t2, %c), metadata={op_name="jit(f)/add"}
}
"""

#: the larger branch (the dot) + the shared dot twice + the add
TOTAL = 1024 + 2 * 1024 + 64


def _json(tmp_path, capsys, *extra: str) -> dict:
    path = tmp_path / "post.hlo"
    path.write_text(_MODULE)
    code, out, err = run_cli(["stats", str(path), "--json", *extra], capsys)
    assert code == 0, err
    return json.loads(out)


def test_the_totals_count_as_xla_does(tmp_path, capsys):
    assert _json(tmp_path, capsys)["flops"] == TOTAL


def test_the_module_row_is_the_total(tmp_path, capsys):
    totals = _json(tmp_path, capsys)
    rows = _json(tmp_path, capsys, "--by", "scope")["scopes"]
    (module,) = [r for r in rows if r["depth"] == 0]
    assert module["flops"] == TOTAL
    assert module["bytes"] == totals["bytes_read"] + totals["bytes_written"]
    top = [r for r in rows if r["depth"] == 1]
    assert sum(r["flops"] for r in top) == TOTAL
    assert sum(r["bytes"] for r in top) == module["bytes"]


def test_a_shared_computation_counts_once_a_call_and_the_smaller_branch_not_at_all(tmp_path, capsys):
    rows = {r["scope"].rsplit("/", 1)[-1]: r for r in _json(tmp_path, capsys, "--by", "scope")["scopes"]}
    assert rows["twice"]["flops"] == 2 * 1024
    assert rows["big"]["flops"] == 1024
    assert rows["small"]["flops"] == 0 and rows["small"]["kernels"] == ["n"]  # listed, not counted
