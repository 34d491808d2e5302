"""How ``jax_inline_loss_step.hlo`` was made: a Flax ``linen`` MLP classifier's training step with
its loss written inline in the step (``optax.softmax_cross_entropy_with_integer_labels`` and a
mean) and optax Adam behind a global-norm clip, parameters closed over:

    hloviz dump tests/data/orders/jax_inline_loss.py:inline_loss_step --arg "f32[8,6]" --arg "s32[8]" -o DIR

(JAX on the CPU; the fixture is DIR/pre.hlo less each op's ``source_file``/``source_line``.)
"""
import flax.linen as nn
import jax
import jax.numpy as jnp
import optax


class _MLP(nn.Module):
    @nn.compact
    def __call__(self, x):
        x = nn.relu(nn.Dense(16, name="hidden")(x))
        x = nn.relu(nn.Dense(16, name="middle")(x))
        return nn.Dense(3, name="head")(x)


_model = _MLP()
_params = _model.init(jax.random.PRNGKey(0), jnp.zeros((1, 6)))["params"]
_opt = optax.chain(optax.clip_by_global_norm(1.0), optax.adam(1e-3))
_state = _opt.init(_params)


def inline_loss_step(x, labels):
    def loss_fn(p):
        logits = _model.apply({"params": p}, x)
        return optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()

    loss, grads = jax.value_and_grad(loss_fn)(_params)
    updates, state = _opt.update(grads, _state, _params)
    return optax.apply_updates(_params, updates), state, loss
