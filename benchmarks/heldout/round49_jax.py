"""Held out (forty-ninth round, JAX/Flax): written after round 48's fixes, not looked at while they
were made.

* ``diffusion_step``: a small diffusion model's training step — a sinusoidal time embedding, a
  U-Net of ``nn.Conv`` + ``nn.GroupNorm`` blocks with a ``nn.MultiHeadDotProductAttention`` at
  the lowest resolution, noise drawn inside the step, an MSE on the noise, ``optax.adamw``, and
  an exponential moving average of the parameters (``optax.incremental_update``).
* ``vae_step``: a VAE — an MLP encoder to a mean and log-variance, the reparameterization
  (``jax.random.normal`` in the step), a decoder, a reconstruction loss plus the KL term —
  trained by ``optax.adam``.

Capture with ``hloviz dump benchmarks/heldout/round49_jax.py:NAME -o DIR`` (the arguments are the
objects themselves, ``HLOVIZ_ARGS``).
"""
import flax.linen as nn
import jax
import jax.numpy as jnp
import optax


def _time_embedding(t, dim=16):
    freqs = jnp.exp(-jnp.log(10000.0) * jnp.arange(dim // 2) / (dim // 2))
    angles = t[:, None] * freqs[None]
    return jnp.concatenate([jnp.sin(angles), jnp.cos(angles)], axis=-1)


class _Block(nn.Module):
    ch: int

    @nn.compact
    def __call__(self, x, temb):
        h = nn.silu(nn.GroupNorm(num_groups=4, name="norm1")(x))
        h = nn.Conv(self.ch, (3, 3), name="conv1")(h)
        h = h + nn.Dense(self.ch, name="time_proj")(temb)[:, None, None, :]
        h = nn.Conv(self.ch, (3, 3), name="conv2")(nn.silu(nn.GroupNorm(num_groups=4, name="norm2")(h)))
        skip = nn.Conv(self.ch, (1, 1), name="skip")(x) if x.shape[-1] != self.ch else x
        return h + skip


class _UNet(nn.Module):
    @nn.compact
    def __call__(self, x, t):
        temb = nn.Dense(32, name="time_mlp")(_time_embedding(t))
        d1 = _Block(8, name="down1")(nn.Conv(8, (3, 3), name="stem")(x), temb)
        d2 = _Block(16, name="down2")(nn.avg_pool(d1, (2, 2), (2, 2)), temb)
        b, hgt, wid, c = d2.shape
        seq = nn.GroupNorm(num_groups=4, name="mid_norm")(d2).reshape(b, hgt * wid, c)
        mid = d2 + nn.MultiHeadDotProductAttention(num_heads=2, name="mid_attn")(seq, seq).reshape(b, hgt, wid, c)
        up = jax.image.resize(mid, (b, hgt * 2, wid * 2, c), "nearest")
        u1 = _Block(8, name="up1")(jnp.concatenate([up, d1], axis=-1), temb)
        return nn.Conv(x.shape[-1], (1, 1), name="out")(u1)


_unet = _UNet()
_uparams = _unet.init(jax.random.PRNGKey(0), jnp.zeros((2, 16, 16, 3)), jnp.zeros((2,)))
_adamw = optax.adamw(2e-4, weight_decay=1e-4)


@jax.jit
def diffusion_step(params, ema, opt_state, images, key):
    k_t, k_n = jax.random.split(key)
    t = jax.random.uniform(k_t, (images.shape[0],))
    noise = jax.random.normal(k_n, images.shape)
    alpha = jnp.cos(t * jnp.pi / 2)[:, None, None, None]
    noisy = alpha * images + jnp.sqrt(1 - alpha ** 2) * noise

    def loss_fn(p):
        return jnp.mean((_unet.apply(p, noisy, t) - noise) ** 2)

    loss, grads = jax.value_and_grad(loss_fn)(params)
    updates, opt_state = _adamw.update(grads, opt_state, params)
    params = optax.apply_updates(params, updates)
    ema = optax.incremental_update(params, ema, step_size=0.01)
    return params, ema, opt_state, loss


class _VAE(nn.Module):
    latent: int = 4

    @nn.compact
    def __call__(self, x, key):
        h = nn.relu(nn.Dense(32, name="enc_hidden")(x))
        mean, logvar = nn.Dense(self.latent, name="enc_mean")(h), nn.Dense(self.latent, name="enc_logvar")(h)
        z = mean + jnp.exp(0.5 * logvar) * jax.random.normal(key, mean.shape)
        recon = nn.sigmoid(nn.Dense(x.shape[-1], name="dec_out")(nn.relu(nn.Dense(32, name="dec_hidden")(z))))
        return recon, mean, logvar


_vae = _VAE()
_vparams = _vae.init(jax.random.PRNGKey(1), jnp.zeros((8, 20)), jax.random.PRNGKey(2))
_adam = optax.adam(1e-3)


@jax.jit
def vae_step(params, opt_state, x, key):
    def loss_fn(p):
        recon, mean, logvar = _vae.apply(p, x, key)
        bce = -jnp.sum(x * jnp.log(recon + 1e-6) + (1 - x) * jnp.log(1 - recon + 1e-6), axis=-1)
        kl = -0.5 * jnp.sum(1 + logvar - mean ** 2 - jnp.exp(logvar), axis=-1)
        return jnp.mean(bce + kl)

    loss, grads = jax.value_and_grad(loss_fn)(params)
    updates, opt_state = _adam.update(grads, opt_state)
    return optax.apply_updates(params, updates), opt_state, loss


HLOVIZ_ARGS = {
    "diffusion_step": [_uparams, _uparams, _adamw.init(_uparams), jnp.ones((2, 16, 16, 3)) * 0.5, jax.random.PRNGKey(3)],
    "vae_step": [_vparams, _adam.init(_vparams), jnp.ones((8, 20)) * 0.5, jax.random.PRNGKey(4)],
}
