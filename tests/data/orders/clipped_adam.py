"""How ``clipped_adam_step_post.hlo.gz`` was made: a Flax MLP of three ``nn.Dense`` layers trained
one step by ``optax.chain(optax.clip_by_global_norm(1.0), optax.adam(1e-3))``, its parameters and
optimizer state passed in (so each new weight is an element of the ROOT tuple, in the order of
the flattened parameters).

    hloviz dump tests/data/orders/clipped_adam.py:clipped_adam_step -o DIR

(JAX on the CPU; the fixture is DIR/post.hlo, gzipped.)
"""

import flax.linen as nn
import jax
import jax.numpy as jnp
import optax


class _Mlp(nn.Module):
    @nn.compact
    def __call__(self, x):
        x = nn.relu(nn.Dense(32, name="fc_a")(x))
        x = nn.relu(nn.Dense(32, name="fc_b")(x))
        return nn.Dense(4, name="fc_c")(x)


_mlp = _Mlp()
_params = _mlp.init(jax.random.PRNGKey(0), jnp.ones((8, 16)))["params"]
_opt = optax.chain(optax.clip_by_global_norm(1.0), optax.adam(1e-3))


@jax.jit
def clipped_adam_step(params, opt_state, x, y):
    def loss_fn(p):
        return optax.softmax_cross_entropy_with_integer_labels(_mlp.apply({"params": p}, x), y).mean()

    loss, grads = jax.value_and_grad(loss_fn)(params)
    updates, opt_state = _opt.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, loss


HLOVIZ_ARGS = {"clipped_adam_step": [_params, _opt.init(_params), jnp.ones((8, 16)), jnp.zeros((8,), jnp.int32)]}
