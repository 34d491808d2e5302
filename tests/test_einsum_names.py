"""``jnp.einsum`` writes its subscripts into JAX's name stack around its ops
(``jit(step)/jvp(vmap(BTNH,BSNH->BNTS))/dot_general``). They name the op, not the model: read as
a scope, they gathered every layer's attention scores of a Flax NNX step into one box above the
model (``BTNH,BSNH->BNTS``, 20 ops of four layers), its overview 2,615 pt wide.

Oracles: op names as JAX 0.10 wrote them (copied from that step's HLO), and a function jitted
here whose two layers (``jax.named_scope``) each call ``jnp.einsum``: every dot is filed in its
layer, and no scope's name holds ``->``.
"""

from __future__ import annotations

import textwrap

import pytest

from hloviz.analysis.opnames import parse_op_name


def test_the_subscripts_are_no_scope():
    fwd = parse_op_name("jit(train_step)/jvp(vmap(BTNH,BSNH->BNTS))/dot_general")
    assert (fwd.scope, fwd.op, fwd.phase) == (("jit(train_step)",), "dot_general", "forward")
    back = parse_op_name("jit(train_step)/transpose(jvp(vmap(BNTS,BSNH->BTNH)))/transpose")
    assert (back.scope, back.phase) == (("jit(train_step)",), "backward")
    assert parse_op_name("jit(f)/jvp(Block_0)/ij,jk->ik/dot_general").scope == ("jit(f)", "Block_0")
    assert parse_op_name("jit(f)/layer_1/...ij,...jk->...ik/dot_general").scope == ("jit(f)", "layer_1")
    # alone at the end it is the op's own name
    assert parse_op_name("jit(f)/layer_1/ij,jk->ik").op == "ij,jk->ik"
    # a scope that only looks alike is kept
    assert parse_op_name("jit(f)/a-b/add").scope == ("jit(f)", "a-b")


@pytest.mark.requires_jax
def test_each_layers_einsum_is_filed_in_its_layer(tmp_path):
    from hloviz.analysis.scopes import build_scope_tree
    from hloviz.capture import load_target

    path = tmp_path / "two_layers.py"
    path.write_text(textwrap.dedent("""\
        import jax
        import jax.numpy as jnp

        @jax.jit
        def step(x, w1, w2):
            def loss(ws):
                h = x
                for i, w in enumerate(ws, 1):
                    with jax.named_scope(f"layer_{i}"):
                        h = jnp.tanh(jnp.einsum("bd,de->be", h, w))
                return h.sum()
            return jax.grad(loss)((w1, w2))
    """))
    cap = load_target(f"{path}:step", args=["f32[4,8]", "f32[8,8]", "f32[8,8]"])
    pre = cap.pre_module()
    assert pre is not None
    tree = build_scope_tree(pre, stage="pre")
    assert not [s.path for s in tree.walk() if "->" in s.path]
    dots = [i for c in pre.computations for i in c.instructions if i.opcode == "dot"]
    assert dots and all("->" in i.metadata.op_name for i in dots)  # JAX did write the subscripts
    layers = {tree.scope_of(i).path.rsplit("/", 1)[-1] for i in dots}
    assert layers == {"layer_1", "layer_2"}
