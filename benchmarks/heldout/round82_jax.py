"""Round 82 (held out, JAX): models written the way users write them, not looked at while building
anything.

* ``nerf_yogi_step``: a tiny NeRF. A Flax ``linen`` MLP (``nn.compact``): sinusoidal positional
  encodings of the sample points (6 octaves) and of the view directions (2 octaves), a trunk of
  four ``nn.Dense`` + ReLU layers (``trunk0`` … ``trunk3``) with the encoded point concatenated
  back in after ``trunk1`` (the NeRF skip), a ``density`` head (``nn.softplus``), a ``feature``
  layer, and a view-dependent colour branch (``view_fc`` → ``rgb``, ``nn.sigmoid``). Volume
  rendering by hand: stratified samples along each ray (``jnp.linspace`` plus a
  ``jax.random.uniform`` jitter), ``alpha = 1 - exp(-sigma * delta)``, the transmittance as an
  exclusive ``jnp.cumprod``, the weights summed into a colour and a depth. MSE loss on the
  pixel colours; one step of ``optax.chain(optax.adaptive_grad_clip(0.01), optax.yogi(...))``
  with a ``optax.join_schedules`` warm-up (``linear_schedule``) then ``exponential_decay``; the
  parameters and the optimizer state are donated (``jax.jit(..., donate_argnums=(0, 1))``).
* ``gumbel_dvae_step``: a discrete VAE with a Gumbel-softmax bottleneck. A Flax ``linen`` encoder
  (strided ``nn.Conv`` + ReLU, a 1×1 ``nn.Conv`` to the code logits), Gumbel noise from
  ``jax.random.gumbel``, a temperature annealed from the step (``max(0.5, exp(-3e-4 * step))``),
  the straight-through estimator (``one_hot(argmax) + soft - stop_gradient(soft)``), a learned
  ``codebook`` (``self.param``) read by a matmul, and a decoder (``nn.ConvTranspose`` stride 2 +
  ReLU, a ``nn.Conv`` to one channel). Loss: ``optax.sigmoid_binary_cross_entropy`` of the
  reconstruction plus the KL of the code posterior to the uniform prior. The state is a
  ``flax.training.train_state.TrainState`` with ``optax.chain(optax.zero_nans(), optax.adan(...))``;
  the step splits its ``jax.random`` key and returns the new key.

Capture with ``hloviz dump benchmarks/heldout/round82_jax.py:NAME -o DIR`` (the arguments are the
objects themselves, ``HLOVIZ_ARGS``).
"""
import flax.linen as nn
import jax
import jax.numpy as jnp
import optax
from flax.training import train_state

# --- tiny NeRF: positional encoding, skip MLP, volume rendering, AGC + Yogi -----------------------

RAYS = 64
SAMPLES = 16
NEAR, FAR = 2.0, 6.0


def posenc(x, octaves):
    freqs = 2.0 ** jnp.arange(octaves) * jnp.pi
    scaled = x[..., None, :] * freqs[:, None]
    scaled = scaled.reshape(*x.shape[:-1], -1)
    return jnp.concatenate([x, jnp.sin(scaled), jnp.cos(scaled)], axis=-1)


class TinyNeRF(nn.Module):
    width: int = 64

    @nn.compact
    def __call__(self, points, viewdirs):
        x = posenc(points, 6)
        d = posenc(viewdirs, 2)
        h = x
        for i in range(4):
            h = nn.relu(nn.Dense(self.width, name=f"trunk{i}")(h))
            if i == 1:
                h = jnp.concatenate([h, x], axis=-1)
        sigma = nn.softplus(nn.Dense(1, name="density")(h))[..., 0]
        feat = nn.Dense(self.width, name="feature")(h)
        v = nn.relu(nn.Dense(self.width // 2, name="view_fc")(jnp.concatenate([feat, d], axis=-1)))
        rgb = nn.sigmoid(nn.Dense(3, name="rgb")(v))
        return sigma, rgb


_nerf = TinyNeRF()
_nerf_params = _nerf.init(jax.random.PRNGKey(0), jnp.zeros((1, SAMPLES, 3)), jnp.zeros((1, SAMPLES, 3)))["params"]
_nerf_schedule = optax.join_schedules([optax.linear_schedule(0.0, 5e-4, 100),
                                       optax.exponential_decay(5e-4, transition_steps=1000, decay_rate=0.1)],
                                      boundaries=[100])
_nerf_tx = optax.chain(optax.adaptive_grad_clip(0.01), optax.yogi(_nerf_schedule))


def render_rays(params, origins, directions, key):
    t = jnp.linspace(NEAR, FAR, SAMPLES)
    t = t + jax.random.uniform(key, (origins.shape[0], SAMPLES)) * (FAR - NEAR) / SAMPLES
    points = origins[:, None, :] + t[..., None] * directions[:, None, :]
    viewdirs = directions / jnp.linalg.norm(directions, axis=-1, keepdims=True)
    sigma, rgb = _nerf.apply({"params": params}, points, jnp.broadcast_to(viewdirs[:, None, :], points.shape))
    delta = jnp.concatenate([t[:, 1:] - t[:, :-1], jnp.full((origins.shape[0], 1), 1e10)], axis=-1)
    alpha = 1.0 - jnp.exp(-sigma * delta)
    trans = jnp.cumprod(1.0 - alpha + 1e-10, axis=-1)
    trans = jnp.concatenate([jnp.ones_like(trans[:, :1]), trans[:, :-1]], axis=-1)
    weights = alpha * trans
    color = jnp.sum(weights[..., None] * rgb, axis=1)
    depth = jnp.sum(weights * t, axis=1)
    return color, depth


def nerf_yogi_step(params, opt_state, origins, directions, target, key):
    def loss_fn(p):
        color, _ = render_rays(p, origins, directions, key)
        return jnp.mean(jnp.square(color - target))

    loss, grads = jax.value_and_grad(loss_fn)(params)
    updates, opt_state = _nerf_tx.update(grads, opt_state, params)
    params = optax.apply_updates(params, updates)
    return params, opt_state, loss


nerf_yogi_step = jax.jit(nerf_yogi_step, donate_argnums=(0, 1))


# --- Gumbel-softmax discrete VAE, straight-through codes, annealed temperature, Adan ----------------

CODES = 16
CODE_DIM = 8
IMG = 16


class GumbelDVAE(nn.Module):
    @nn.compact
    def __call__(self, x, key, tau):
        h = nn.relu(nn.Conv(16, (3, 3), strides=(2, 2), name="enc_conv")(x))
        logits = nn.Conv(CODES, (1, 1), name="enc_logits")(h)
        g = jax.random.gumbel(key, logits.shape)
        soft = jax.nn.softmax((logits + g) / tau, axis=-1)
        hard = jax.nn.one_hot(jnp.argmax(soft, axis=-1), CODES)
        z = hard + soft - jax.lax.stop_gradient(soft)
        codebook = self.param("codebook", nn.initializers.normal(1.0), (CODES, CODE_DIM))
        e = z @ codebook
        h = nn.relu(nn.ConvTranspose(16, (3, 3), strides=(2, 2), name="dec_deconv")(e))
        return nn.Conv(1, (3, 3), name="dec_out")(h), logits


_dvae = GumbelDVAE()
_dvae_params = _dvae.init(jax.random.PRNGKey(1), jnp.zeros((1, IMG, IMG, 1)), jax.random.PRNGKey(2), 1.0)["params"]
_dvae_state = train_state.TrainState.create(apply_fn=_dvae.apply, params=_dvae_params,
                                            tx=optax.chain(optax.zero_nans(), optax.adan(1e-3)))


@jax.jit
def gumbel_dvae_step(state, images, key):
    key, noise_key = jax.random.split(key)
    tau = jnp.maximum(0.5, jnp.exp(-3e-4 * state.step))

    def loss_fn(p):
        recon_logits, code_logits = state.apply_fn({"params": p}, images, noise_key, tau)
        recon = optax.sigmoid_binary_cross_entropy(recon_logits, images).sum(axis=(1, 2, 3)).mean()
        q = jax.nn.softmax(code_logits, axis=-1)
        kl = jnp.sum(q * (jax.nn.log_softmax(code_logits, axis=-1) + jnp.log(CODES)), axis=(1, 2, 3)).mean()
        return recon + kl, (recon, kl)

    (loss, (_recon, _kl)), grads = jax.value_and_grad(loss_fn, has_aux=True)(state.params)
    state = state.apply_gradients(grads=grads)
    return state, key, loss


HLOVIZ_ARGS = {
    "nerf_yogi_step": [_nerf_params, _nerf_tx.init(_nerf_params),
                       jax.random.normal(jax.random.PRNGKey(3), (RAYS, 3)),
                       jax.random.normal(jax.random.PRNGKey(4), (RAYS, 3)),
                       jax.random.uniform(jax.random.PRNGKey(5), (RAYS, 3)),
                       jax.random.PRNGKey(6)],
    "gumbel_dvae_step": [_dvae_state, jax.random.uniform(jax.random.PRNGKey(7), (8, IMG, IMG, 1)),
                         jax.random.PRNGKey(8)],
}
