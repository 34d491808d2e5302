"""How ``closed_over_step.hlo`` was made: a JAX training step of a two-layer MLP whose weights the
function closes over instead of taking them as arguments (how quick scripts and notebooks write
it): ``jax.jit`` makes each weight a constant of the module, read by its layer and by the update.

    hloviz dump tests/data/orders/closed_over.py:closed_over_step --arg "f32[8,6]" --arg "f32[8,3]" -o DIR

(JAX on the CPU; the fixture is DIR/pre.hlo less each op's ``source_file``/``source_line``.)
"""

import jax
import jax.numpy as jnp

_k1, _k2 = jax.random.split(jax.random.PRNGKey(0))
_params = {"hidden": jax.random.normal(_k1, (6, 16)) * 0.1, "out": jax.random.normal(_k2, (16, 3)) * 0.1}


def _loss(params, x, y):
    with jax.named_scope("hidden"):
        h = jax.nn.relu(x @ params["hidden"])
    with jax.named_scope("out"):
        return jnp.mean((h @ params["out"] - y) ** 2)


def closed_over_step(x, y):
    grads = jax.grad(_loss)(_params, x, y)
    with jax.named_scope("sgd"):
        return jax.tree_util.tree_map(lambda p, g: p - 0.1 * g, _params, grads)
