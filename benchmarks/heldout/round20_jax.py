"""Held out (twentieth round, JAX): a Flax ``linen`` sequence classifier whose recurrence is
``nn.RNN(nn.OptimizedLSTMCell)`` (a ``lax.scan`` over time inside the module), an embedding before
it and a dense head after its last state, trained with optax ``adam`` behind a global-norm clip,
the step in the ``flax.training.train_state`` style with the state's fields passed as arrays.
Parameters closed over; the arrays are the arguments.

Capture with ``hloviz dump benchmarks/heldout/round20_jax.py:rnn_step --arg "s32[4,10]" --arg
"s32[4]" -o DIR``.
"""
import flax.linen as nn
import jax
import jax.numpy as jnp
import optax


class _Classifier(nn.Module):
    @nn.compact
    def __call__(self, tokens):
        x = nn.Embed(100, 16, name="embed")(tokens)
        x = nn.RNN(nn.OptimizedLSTMCell(24), name="lstm")(x)
        return nn.Dense(3, name="head")(x[:, -1])


_model = _Classifier()
_params = _model.init(jax.random.PRNGKey(0), jnp.zeros((1, 10), jnp.int32))["params"]
_opt = optax.chain(optax.clip_by_global_norm(1.0), optax.adam(1e-3))
_state = _opt.init(_params)


def rnn_step(tokens, labels):
    def loss_fn(p):
        logits = _model.apply({"params": p}, tokens)
        return optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()

    loss, grads = jax.value_and_grad(loss_fn)(_params)
    updates, state = _opt.update(grads, _state, _params)
    return optax.apply_updates(_params, updates), state, loss
