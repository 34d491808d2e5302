"""Held out (thirty-fourth round, JAX): written at the start of this session, before any change,
and drawn only to check the overview on models nobody here had drawn.

* ``denoiser_step``: a Flax ``linen`` denoiser of the kind diffusion tutorials write — a sinusoidal
  time embedding through an ``nn.Dense`` pair, a down ``nn.Conv`` path with ``nn.GroupNorm`` and
  SiLU, an up path (``jax.image.resize``) with a skip connection — trained one step on a
  mean-squared noise loss by ``optax.chain(clip_by_global_norm, adamw)``.

Capture with ``hloviz dump benchmarks/heldout/round34_jax.py:denoiser_step -o DIR`` (its arguments
are the objects themselves, ``HLOVIZ_ARGS``).
"""
import flax.linen as nn
import jax
import jax.numpy as jnp
import optax


def _time_features(t, width=16):
    freqs = jnp.exp(-jnp.log(1000.0) * jnp.arange(width // 2) / (width // 2))
    angles = t[:, None] * freqs[None, :]
    return jnp.concatenate([jnp.sin(angles), jnp.cos(angles)], axis=-1)


class _Block(nn.Module):
    width: int

    @nn.compact
    def __call__(self, x, temb):
        h = nn.silu(nn.GroupNorm(num_groups=4, name="norm")(x))
        h = nn.Conv(self.width, (3, 3), name="conv")(h)
        return h + nn.Dense(self.width, name="time")(temb)[:, None, None, :]


class _Denoiser(nn.Module):
    @nn.compact
    def __call__(self, x, t):
        temb = nn.Dense(32, name="time_in")(_time_features(t))
        temb = nn.Dense(32, name="time_out")(nn.silu(temb))
        h = nn.Conv(16, (3, 3), name="stem")(x)
        skip = _Block(16, name="down1")(h, temb)
        h = nn.avg_pool(skip, (2, 2), (2, 2))
        h = _Block(32, name="middle")(h, temb)
        b, hh, ww, c = h.shape
        h = jax.image.resize(h, (b, hh * 2, ww * 2, c), "nearest")
        h = _Block(16, name="up1")(jnp.concatenate([h, skip], axis=-1), temb)
        return nn.Conv(x.shape[-1], (1, 1), name="out")(h)


_net = _Denoiser()
_params = _net.init(jax.random.PRNGKey(0), jnp.zeros((2, 16, 16, 3)), jnp.zeros((2,)))
_opt = optax.chain(optax.clip_by_global_norm(1.0), optax.adamw(1e-3))
_opt_state = _opt.init(_params)


def denoiser_step(params, opt_state, images, noise, t):
    def loss_fn(p):
        noisy = images + noise * t[:, None, None, None]
        return jnp.mean((_net.apply(p, noisy, t) - noise) ** 2)

    loss, grads = jax.value_and_grad(loss_fn)(params)
    updates, opt_state = _opt.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, loss


_key = jax.random.PRNGKey(1)
HLOVIZ_ARGS = {
    "denoiser_step": [_params, _opt_state, jax.random.normal(_key, (2, 16, 16, 3)),
                      jax.random.normal(jax.random.PRNGKey(2), (2, 16, 16, 3)), jnp.array([0.3, 0.7])],
}
