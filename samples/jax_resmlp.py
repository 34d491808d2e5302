"""A JAX training step as a user writes one without any module library: a residual MLP whose
block is a jitted function the model calls six times, trained with ``optax.chain``
(global-norm clipping, then AdamW with a cosine schedule, whose step count the step returns
incremented).

Before optimization the six calls share one computation (``call`` ×6, ``to_apply=block``):
its work runs six times, and hloviz counts it so (XLA's cost analysis does). The step names no
scope of its own, so its overview is cut by phase — forward, the loss it returns, backward,
the optimizer — in that order. ``hloviz dump samples/jax_resmlp.py:resmlp_step -o DIR``.
"""
import jax
import jax.numpy as jnp
import optax

WIDTH, DEPTH = 48, 6


@jax.jit
def block(x, w1, w2):
    return x + jax.nn.gelu(x @ w1) @ w2


def resmlp(params, x):
    for i in range(DEPTH):
        x = block(x, params["w1"][i], params["w2"][i])
    return x @ params["head"]


_keys = jax.random.split(jax.random.PRNGKey(1), 3)
params = {"w1": jax.random.normal(_keys[0], (DEPTH, WIDTH, 2 * WIDTH)) * 0.05,
          "w2": jax.random.normal(_keys[1], (DEPTH, 2 * WIDTH, WIDTH)) * 0.05,
          "head": jax.random.normal(_keys[2], (WIDTH, 5)) * 0.05}
tx = optax.chain(optax.clip_by_global_norm(1.0), optax.adamw(optax.cosine_decay_schedule(1e-3, 1000), weight_decay=1e-2))
state = tx.init(params)
x, y = jnp.ones((16, WIDTH)), jnp.arange(16) % 5


@jax.jit
def resmlp_step(params, state, x, y):
    def loss_fn(p):
        return optax.softmax_cross_entropy_with_integer_labels(resmlp(p, x), y).mean()

    loss, grads = jax.value_and_grad(loss_fn)(params)
    updates, state = tx.update(grads, state, params)
    return optax.apply_updates(params, updates), state, loss


HLOVIZ_ARGS = {"resmlp_step": [params, state, x, y]}
