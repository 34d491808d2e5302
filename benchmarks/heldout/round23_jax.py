"""Held out (twenty-third round, JAX): written at the start of a session, before any change, as
Flax users write them, none captured here before.

* ``vae_step``: a Flax ``linen`` variational autoencoder — an encoder of two ``Dense`` layers to a
  mean and a log-variance, the reparameterization with ``jax.random.normal``, a decoder of two
  ``Dense`` layers — trained on reconstruction plus KL with
  ``optax.chain(clip_by_global_norm, adam)``; parameters and the key passed in.
* ``gru_step``: a Flax ``nn.RNN(nn.GRUCell)`` over an embedded sequence (a scan), the last state
  into a ``Dense`` head, ``optax.sgd`` with Nesterov momentum; parameters closed over.

Capture with ``hloviz dump benchmarks/heldout/round23_jax.py:vae_step -o DIR`` and
``…:gru_step -o DIR`` (their arguments are the objects themselves, ``HLOVIZ_ARGS``).
"""
import flax.linen as nn
import jax
import jax.numpy as jnp
import optax


class _Vae(nn.Module):
    latent: int = 8

    @nn.compact
    def __call__(self, x, key):
        h = nn.relu(nn.Dense(64, name="enc_1")(x))
        h = nn.relu(nn.Dense(32, name="enc_2")(h))
        mean = nn.Dense(self.latent, name="mean")(h)
        logvar = nn.Dense(self.latent, name="logvar")(h)
        z = mean + jnp.exp(0.5 * logvar) * jax.random.normal(key, mean.shape)
        h = nn.relu(nn.Dense(32, name="dec_1")(z))
        return nn.Dense(x.shape[-1], name="dec_2")(h), mean, logvar


_vae = _Vae()
_vae_params = _vae.init(jax.random.PRNGKey(0), jnp.zeros((1, 48)), jax.random.PRNGKey(1))["params"]
_vae_opt = optax.chain(optax.clip_by_global_norm(1.0), optax.adam(1e-3))


def vae_step(params, opt_state, x, key):
    def loss_fn(p):
        logits, mean, logvar = _vae.apply({"params": p}, x, key)
        recon = optax.sigmoid_binary_cross_entropy(logits, x).sum(-1).mean()
        kl = -0.5 * jnp.sum(1 + logvar - mean**2 - jnp.exp(logvar), -1).mean()
        return recon + kl

    loss, grads = jax.value_and_grad(loss_fn)(params)
    updates, opt_state = _vae_opt.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, loss


class _Gru(nn.Module):
    @nn.compact
    def __call__(self, tokens):
        x = nn.Embed(200, 24, name="embed")(tokens)
        carry = nn.RNN(nn.GRUCell(48), name="gru")(x)[:, -1]
        return nn.Dense(6, name="head")(carry)


_gru = _Gru()
_gru_params = _gru.init(jax.random.PRNGKey(2), jnp.zeros((1, 12), jnp.int32))["params"]
_sgd = optax.sgd(0.05, momentum=0.9, nesterov=True)
_sgd_state = _sgd.init(_gru_params)


def gru_step(tokens, labels):
    def loss_fn(p):
        logits = _gru.apply({"params": p}, tokens)
        return optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()

    loss, grads = jax.value_and_grad(loss_fn)(_gru_params)
    updates, state = _sgd.update(grads, _sgd_state, _gru_params)
    return optax.apply_updates(_gru_params, updates), state, loss


HLOVIZ_ARGS = {
    "vae_step": [_vae_params, _vae_opt.init(_vae_params), jnp.zeros((16, 48)), jax.random.PRNGKey(3)],
    "gru_step": [jnp.zeros((8, 12), jnp.int32), jnp.zeros((8,), jnp.int32)],
}
