"""How ``nested_jit_step.hlo`` was made: a JAX training step written as a ``jax.jit`` function of
the parameters, called from a function that closes over them (as a script that keeps its
parameters in globals calls its jitted step). Traced as one, the module's entry only calls the
step: its parameters in, the new ones out.

    hloviz dump tests/data/orders/nested_jit.py:nested_step --arg "f32[8,6]" --arg "f32[8,3]" -o DIR

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


@jax.jit
def _step(params, x, y):
    grads = jax.grad(_loss)(params, x, y)
    with jax.named_scope("sgd"):
        return jax.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads)


def nested_step(x, y):
    return _step(_params, x, y)
