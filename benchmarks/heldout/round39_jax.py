"""Held out (thirty-ninth round, JAX): written after round 38's fixes, not looked at while they
were made; every command run on each.

* ``fno_step``: a one-dimensional Fourier neural operator in Flax ``linen`` — a lifting
  ``nn.Dense``, two spectral layers (``jnp.fft.rfft``, a learned complex weight on the lowest
  modes, ``jnp.fft.irfft``, plus a pointwise ``nn.Dense``, ``nn.gelu``), a projection — trained one
  step by ``optax.adam`` on a mean-squared error.
* ``moe_step``: a mixture-of-experts layer in Flax ``linen`` — a router ``nn.Dense``, top-2 gating
  by ``jax.lax.top_k``, four experts as one batched weight applied with ``jnp.einsum``, a
  load-balancing auxiliary loss — trained one step by ``optax.adamw`` on a regression loss.

Capture with ``hloviz dump benchmarks/heldout/round39_jax.py:fno_step -o DIR`` and
``…:moe_step -o DIR`` (their arguments are the objects themselves, ``HLOVIZ_ARGS``).
"""
import flax.linen as nn
import jax
import jax.numpy as jnp
import optax

_MODES, _WIDTH = 6, 16


class _Spectral(nn.Module):
    @nn.compact
    def __call__(self, x):
        scale = 1.0 / (_WIDTH * _WIDTH)
        w_re = self.param("w_re", nn.initializers.uniform(scale), (_MODES, _WIDTH, _WIDTH))
        w_im = self.param("w_im", nn.initializers.uniform(scale), (_MODES, _WIDTH, _WIDTH))
        spectrum = jnp.fft.rfft(x, axis=1)
        low = jnp.einsum("bmi,mio->bmo", spectrum[:, :_MODES], w_re + 1j * w_im)
        full = jnp.zeros_like(spectrum).at[:, :_MODES].set(low)
        return jnp.fft.irfft(full, n=x.shape[1], axis=1) + nn.Dense(_WIDTH, name="pointwise")(x)


class _FNO(nn.Module):
    @nn.compact
    def __call__(self, u):
        h = nn.Dense(_WIDTH, name="lift")(u)
        for k in range(2):
            h = nn.gelu(_Spectral(name=f"spectral{k}")(h))
        return nn.Dense(1, name="project")(h)


_fno = _FNO()
_fno_params = _fno.init(jax.random.PRNGKey(0), jnp.zeros((2, 32, 1)))
_adam = optax.adam(1e-3)
_adam_state = _adam.init(_fno_params)


def fno_step(params, opt_state, u, target):
    def loss_fn(p):
        return jnp.mean((_fno.apply(p, u) - target) ** 2)

    loss, grads = jax.value_and_grad(loss_fn)(params)
    updates, opt_state = _adam.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, loss


class _MoE(nn.Module):
    experts: int = 4
    hidden: int = 32

    @nn.compact
    def __call__(self, x):
        logits = nn.Dense(self.experts, name="router")(x)
        probs = jax.nn.softmax(logits)
        gate, which = jax.lax.top_k(probs, 2)
        gate = gate / gate.sum(-1, keepdims=True)
        w_in = self.param("w_in", nn.initializers.lecun_normal(), (self.experts, x.shape[-1], self.hidden))
        w_out = self.param("w_out", nn.initializers.lecun_normal(), (self.experts, self.hidden, x.shape[-1]))
        h = jax.nn.relu(jnp.einsum("td,edh->teh", x, w_in))
        every = jnp.einsum("teh,ehd->ted", h, w_out)
        chosen = jnp.take_along_axis(every, which[:, :, None], axis=1)
        out = (gate[:, :, None] * chosen).sum(1)
        load = jax.nn.one_hot(which[:, 0], self.experts).mean(0)
        balance = self.experts * jnp.sum(load * probs.mean(0))
        return out, balance


_moe = _MoE()
_moe_params = _moe.init(jax.random.PRNGKey(1), jnp.zeros((8, 12)))
_adamw = optax.adamw(1e-3)
_adamw_state = _adamw.init(_moe_params)


def moe_step(params, opt_state, tokens, target):
    def loss_fn(p):
        out, balance = _moe.apply(p, tokens)
        return jnp.mean((out - target) ** 2) + 0.01 * balance

    loss, grads = jax.value_and_grad(loss_fn)(params)
    updates, opt_state = _adamw.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, loss


HLOVIZ_ARGS = {
    "fno_step": [_fno_params, _adam_state, jnp.ones((2, 32, 1)), jnp.zeros((2, 32, 1))],
    "moe_step": [_moe_params, _adamw_state, jnp.ones((8, 12)), jnp.zeros((8, 12))],
}
