"""Held out (twenty-ninth round, JAX): written at the start of a session, before any change, from
models nobody here had drawn.

* ``ensemble_step``: a Flax ``linen`` ensemble — ``nn.vmap`` of a three-layer MLP over five
  members (parameters stacked on a leading axis), the members' predictions averaged — trained with
  ``optax.adam`` under ``optax.chain`` with ``clip_by_global_norm``.
* ``gru_step``: a Flax ``nn.RNN(nn.GRUCell)`` sequence classifier over an ``nn.Embed``, trained
  with ``optax.rmsprop`` on ``jax.value_and_grad(has_aux=True)`` (the logits come back as well).

Capture with ``hloviz dump benchmarks/heldout/round29_jax.py:ensemble_step -o DIR`` and
``…:gru_step -o DIR`` (their arguments are the objects themselves, ``HLOVIZ_ARGS``).
"""
import flax.linen as nn
import jax
import jax.numpy as jnp
import optax


class _Member(nn.Module):
    @nn.compact
    def __call__(self, x):
        x = nn.gelu(nn.Dense(32, name="hidden_1")(x))
        x = nn.gelu(nn.Dense(32, name="hidden_2")(x))
        return nn.Dense(1, name="out")(x)


class _Ensemble(nn.Module):
    @nn.compact
    def __call__(self, x):
        members = nn.vmap(_Member, variable_axes={"params": 0}, split_rngs={"params": True},
                          in_axes=None, out_axes=0, axis_size=5)(name="members")
        return jnp.mean(members(x), axis=0)


_ensemble = _Ensemble()
_ens_params = _ensemble.init(jax.random.PRNGKey(0), jnp.zeros((1, 6)))["params"]
_ens_opt = optax.chain(optax.clip_by_global_norm(1.0), optax.adam(1e-3))
_ens_state = _ens_opt.init(_ens_params)


def ensemble_step(params, state, x, y):
    def loss_fn(p):
        return jnp.mean((_ensemble.apply({"params": p}, x) - y) ** 2)

    loss, grads = jax.value_and_grad(loss_fn)(params)
    updates, state = _ens_opt.update(grads, state, params)
    return optax.apply_updates(params, updates), state, loss


class _Classifier(nn.Module):
    @nn.compact
    def __call__(self, tokens):
        x = nn.Embed(50, 16, name="embed")(tokens)
        x = nn.RNN(nn.GRUCell(24), name="gru")(x)
        return nn.Dense(4, name="head")(x[:, -1])


_clf = _Classifier()
_clf_params = _clf.init(jax.random.PRNGKey(1), jnp.zeros((1, 7), jnp.int32))["params"]
_rms = optax.rmsprop(1e-3)
_rms_state = _rms.init(_clf_params)


def gru_step(params, state, tokens, labels):
    def loss_fn(p):
        logits = _clf.apply({"params": p}, tokens)
        return optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean(), logits

    (loss, logits), grads = jax.value_and_grad(loss_fn, has_aux=True)(params)
    updates, state = _rms.update(grads, state, params)
    return optax.apply_updates(params, updates), state, loss, logits


HLOVIZ_ARGS = {
    "ensemble_step": [_ens_params, _ens_state, jnp.ones((8, 6)), jnp.zeros((8, 1))],
    "gru_step": [_clf_params, _rms_state, jnp.ones((4, 7), jnp.int32), jnp.zeros((4,), jnp.int32)],
}
