"""Held out (fifteenth round, JAX): an ensemble of four Flax MLPs trained at once — parameters
stacked with ``jax.vmap(model.init)``, the forward pass ``jax.vmap(model.apply)`` — with optax
``chain(clip_by_global_norm(1.0), adamw(1e-3))``, as the Flax docs' ensembling example writes it.

    hloviz dump benchmarks/heldout/round15_ensemble.py:train_step -o DIR

(the arguments are the objects themselves, ``HLOVIZ_ARGS``), then ``python
benchmarks/overview_bench.py --no-diffs --model DIR``.
"""
import jax
import jax.numpy as jnp
import optax
from flax import linen as nn

MEMBERS = 4


class MLP(nn.Module):
    @nn.compact
    def __call__(self, x):
        x = nn.relu(nn.Dense(64, name="hidden_0")(x))
        x = nn.relu(nn.Dense(64, name="hidden_1")(x))
        return nn.Dense(10, name="logits")(x)


_model = MLP()
_x = jnp.zeros((16, 20))
params = jax.vmap(lambda k: _model.init(k, _x)["params"])(jax.random.split(jax.random.PRNGKey(0), MEMBERS))
_tx = optax.chain(optax.clip_by_global_norm(1.0), optax.adamw(1e-3))
opt_state = _tx.init(params)


@jax.jit
def train_step(params, opt_state, x, labels):
    def loss_fn(p):
        logits = jax.vmap(lambda q: _model.apply({"params": q}, x))(p)  # [members, batch, 10]
        return optax.softmax_cross_entropy_with_integer_labels(logits, labels[None, :]).mean()

    loss, grads = jax.value_and_grad(loss_fn)(params)
    updates, opt_state = _tx.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, loss


HLOVIZ_ARGS = {"train_step": [params, opt_state, _x, jnp.zeros((16,), jnp.int32)]}
