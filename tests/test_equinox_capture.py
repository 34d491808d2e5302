"""A step written with Equinox (``eqx.filter_jit``) is captured, its parameters named as the user's.

Round 57 (``benchmarks/heldout/round57_jax.py``): ``hloviz dump`` of an ``eqx.filter_jit`` step
failed ("A ShapeDtypeStruct does not have a value and cannot be used as a constant"):
``filter_jit`` traces arrays only and held hloviz's shape structs static, and its ``lower``
gives no JAX ``Lowered``. The function it wraps is now lowered by ``jax.jit`` as ``filter_jit``
lowers it — arrays traced, every other leaf (a layer's sizes, its activation) static.

Oracles: JAX's own paths of the model's arrays (``jax.tree_util.keystr`` over
``eqx.filter(model, eqx.is_array)``, computed by the test script, not by hloviz) against the
entry parameters' names in the pre-optimization text, read by regular expression; XLA's FLOPs
(``flops`` + ``transcendentals``) of the same function jitted by the test itself, beside ``hloviz stats``'s.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.requires_jax

SCRIPT = textwrap.dedent('''
    import equinox as eqx
    import jax
    import jax.numpy as jnp

    _model = eqx.nn.MLP(4, 2, 8, depth=2, activation=jax.nn.gelu, key=jax.random.PRNGKey(0))


    @eqx.filter_jit
    def step(model, x, y):
        def loss(m):
            return jnp.mean((jax.vmap(m)(x) - y) ** 2)

        value, grads = eqx.filter_value_and_grad(loss)(model)
        return eqx.apply_updates(model, jax.tree_util.tree_map(lambda g: -0.1 * g, grads)), value


    HLOVIZ_ARGS = {"step": (_model, jnp.ones((16, 4)), jnp.zeros((16, 2)))}

    if __name__ == "__main__":  # the oracle: JAX's paths of the arrays, XLA's FLOPs of the step it compiles
        import json
        import sys

        arrays = eqx.filter(_model, eqx.is_array)
        paths = ["model" + jax.tree_util.keystr(p) for p, _ in jax.tree_util.tree_flatten_with_path(arrays)[0]]
        params, static = eqx.partition(_model, eqx.is_array)
        def arrays_of_step(p, x, y):
            new, value = step.__wrapped__(eqx.combine(p, static), x, y)
            return eqx.filter(new, eqx.is_array), value

        jitted = jax.jit(arrays_of_step)
        costs = jitted.lower(params, *HLOVIZ_ARGS["step"][1:]).compile().cost_analysis()
        costs = costs[0] if isinstance(costs, list) else costs
        json.dump({"paths": paths, "xla_flops": costs.get("flops", 0.0) + costs.get("transcendentals", 0.0)}, sys.stdout)
''')


def _dumped(tmp_path: Path, source: str) -> tuple[subprocess.CompletedProcess, Path]:
    """``hloviz dump`` of ``source``'s ``step`` (written to a file of its own): the run and its folder."""
    script = tmp_path / "user_step.py"
    script.write_text(source, encoding="utf-8")
    out = tmp_path / "cap"
    run = subprocess.run([sys.executable, "-m", "hloviz", "dump", f"{script}:step", "-o", str(out)],
                         capture_output=True, text=True, timeout=300, check=False)
    return run, out


def test_an_equinox_step_is_captured_with_its_parameters_named_and_xlas_flops(tmp_path):
    pytest.importorskip("equinox")
    run, out = _dumped(tmp_path, SCRIPT)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "arrays traced and everything else static" in " ".join(run.stderr.split())
    oracle = json.loads(subprocess.run([sys.executable, str(tmp_path / "user_step.py")], capture_output=True,
                                       text=True, timeout=300, check=True).stdout)
    paths = oracle["paths"]
    assert len(paths) == 6 and paths[0].startswith("model.layers[0]")  # 3 layers, a weight and a bias each
    pre = (out / "pre.hlo").read_text(encoding="utf-8")
    assert re.match(r"HloModule jit_step\b", pre)
    entry = pre[pre.index("\nENTRY"):]
    named = dict(re.findall(r"parameter\((\d+)\)[^\n]*?op_name=\"([^\"]+)\"", entry))
    assert sorted(v for v in named.values() if v.startswith("model")) == sorted(paths)
    assert {"x", "y"} <= set(named.values())
    stats = subprocess.run([sys.executable, "-m", "hloviz", "stats", str(out), "--json"],
                           capture_output=True, text=True, timeout=300, check=True)
    assert oracle["xla_flops"] > 1000 and json.loads(stats.stdout)["flops"] == round(oracle["xla_flops"])


NNX_SCRIPT = textwrap.dedent('''
    import jax
    import jax.numpy as jnp
    import optax
    from flax import nnx

    model = nnx.Sequential(nnx.Linear(4, 8, rngs=nnx.Rngs(0)), nnx.Linear(8, 2, rngs=nnx.Rngs(1)))
    optimizer = nnx.Optimizer(model, optax.adam(1e-3), wrt=nnx.Param)


    @nnx.jit
    def step(model, optimizer, x, y):
        loss, grads = nnx.value_and_grad(lambda m: jnp.mean((m(x) - y) ** 2))(model)
        optimizer.update(model, grads)  # in place: nnx.jit hands the new state out
        return loss


    HLOVIZ_ARGS = {"step": [model, optimizer, jnp.ones((16, 4)), jnp.zeros((16, 2))]}

    if __name__ == "__main__":  # the oracle: how many parameters the update writes
        print(len(jax.tree_util.tree_leaves(nnx.state(model, nnx.Param))))
''')


def test_a_flax_nnx_step_keeps_the_update_it_makes_in_place(tmp_path):
    """Flax's ``nnx.jit`` is not lowered as Equinox's is: it hands back the state an NNX step
    changes in place. Lowered as ``filter_jit`` is, the step returned its loss alone and XLA
    dropped the optimizer's update as dead code."""
    pytest.importorskip("flax.nnx")
    run, out = _dumped(tmp_path, NNX_SCRIPT)
    assert run.returncode == 0, run.stderr[-2000:]
    params = int(subprocess.run([sys.executable, str(tmp_path / "user_step.py")], capture_output=True, text=True,
                                timeout=300, check=True).stdout.split()[-1])
    assert params == 4
    post = (out / "post.hlo").read_text(encoding="utf-8")
    layout = re.search(r"entry_computation_layout=\{\((.*)\)->\((.*?)\)\}", post.split("\n", 1)[0])
    assert layout is not None  # a tuple of results: the loss and the new state
    results = re.findall(r"[a-z]\w*\[[\d,]*\]", layout.group(2))
    assert len(results) > params and re.search(r"\bsqrt\(", post)  # Adam's update, run


DONATING = textwrap.dedent('''
    import equinox as eqx
    import jax
    import jax.numpy as jnp

    _model = eqx.nn.MLP(4, 2, 8, depth=2, key=jax.random.PRNGKey(0))


    def _shrink(model, x):
        return jax.tree_util.tree_map(lambda p: p * 0.9 if eqx.is_array(p) else p, model), x.sum()


    step = eqx.filter_jit(donate="DONATE")(_shrink)
    HLOVIZ_ARGS = {"step": (_model, jnp.ones((16, 4)))}
''')


@pytest.mark.parametrize("donate, model_aliased", [("all", True), ("all-except-first", False), ("none", False)])
def test_an_equinox_steps_donation_is_kept(tmp_path, donate, model_aliased):
    """``filter_jit(donate="all")`` lets XLA write the new weights into the old ones' buffers:
    the optimized module's ``input_output_alias`` names the model's six arrays (parameters 0–5).
    With "all-except-first" only ``x`` (parameter 6) may be reused, with "none" nothing."""
    pytest.importorskip("equinox")
    run, out = _dumped(tmp_path, DONATING.replace("DONATE", donate))
    assert run.returncode == 0, run.stderr[-2000:]
    header = (out / "post.hlo").read_text(encoding="utf-8").split("\n", 1)[0]
    m = re.search(r"input_output_alias=\{(.*?)\}\s*,\s*entry_computation_layout", header)
    reused = {int(n) for n in re.findall(r"\{[\d,]*\}\s*:\s*\((\d+)", m.group(1))} if m else set()
    if model_aliased:
        assert set(range(6)) <= reused, header[:400]
    else:
        assert not reused & set(range(6)), header[:400]
    if donate == "none":
        assert not reused
