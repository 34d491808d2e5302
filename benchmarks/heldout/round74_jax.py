"""Round 74 (held out, JAX): Flax models written the way users write them, not looked at while
building anything.

* ``diffusion_step``: one training step of a small denoising-diffusion U-Net — sinusoidal time
  embedding, ``nn.GroupNorm``, ``nn.Conv`` down, ``nn.ConvTranspose`` up with a skip, noise drawn
  from the step's key, an MSE on the predicted noise, Adam with a warm-up schedule.
* ``simclr_step``: a contrastive (NT-Xent) step — two random flips of each image, a CNN with
  ``nn.BatchNorm`` (its ``batch_stats`` updated), a projection head, the loss from a
  ``logsumexp`` over the similarity matrix, SGD with Nesterov momentum and a cosine schedule.

Capture with ``hloviz dump benchmarks/heldout/round74_jax.py:diffusion_step -o DIR`` (``HLOVIZ_ARGS``).
"""
import flax.linen as nn
import jax
import jax.numpy as jnp
import optax


def _time_embedding(t, dim=16):
    freqs = jnp.exp(-jnp.log(10000.0) * jnp.arange(dim // 2) / (dim // 2))
    angles = t[:, None] * freqs[None, :]
    return jnp.concatenate([jnp.sin(angles), jnp.cos(angles)], axis=-1)


class Block(nn.Module):
    features: int

    @nn.compact
    def __call__(self, x, temb):
        h = nn.Conv(self.features, (3, 3), name="conv1")(nn.swish(nn.GroupNorm(num_groups=4, name="norm1")(x)))
        h = h + nn.Dense(self.features, name="time")(temb)[:, None, None, :]
        h = nn.Conv(self.features, (3, 3), name="conv2")(nn.swish(nn.GroupNorm(num_groups=4, name="norm2")(h)))
        skip = nn.Conv(self.features, (1, 1), name="skip")(x) if x.shape[-1] != self.features else x
        return h + skip


class UNet(nn.Module):
    @nn.compact
    def __call__(self, x, t):
        temb = nn.Dense(32, name="temb_2")(nn.swish(nn.Dense(32, name="temb_1")(_time_embedding(t))))
        h1 = Block(16, name="down1")(nn.Conv(16, (3, 3), name="stem")(x), temb)
        h2 = Block(32, name="down2")(nn.Conv(32, (3, 3), strides=(2, 2), name="downsample")(h1), temb)
        h = Block(32, name="mid")(h2, temb)
        h = nn.ConvTranspose(16, (2, 2), strides=(2, 2), name="upsample")(h)
        h = Block(16, name="up1")(jnp.concatenate([h, h1], axis=-1), temb)
        return nn.Conv(x.shape[-1], (3, 3), name="out")(nn.swish(nn.GroupNorm(num_groups=4, name="out_norm")(h)))


_unet = UNet()
_schedule = optax.linear_schedule(0.0, 2e-4, 100)
_adam = optax.adam(_schedule)
_betas = jnp.linspace(1e-4, 0.02, 100)
_alphas_bar = jnp.cumprod(1.0 - _betas)


@jax.jit
def diffusion_step(params, opt_state, images, key):
    t_key, n_key = jax.random.split(key)
    t = jax.random.randint(t_key, (images.shape[0],), 0, 100)
    noise = jax.random.normal(n_key, images.shape)
    a = _alphas_bar[t][:, None, None, None]
    noisy = jnp.sqrt(a) * images + jnp.sqrt(1.0 - a) * noise

    def loss(p):
        return jnp.mean((_unet.apply(p, noisy, t.astype(jnp.float32)) - noise) ** 2)

    value, grads = jax.value_and_grad(loss)(params)
    updates, opt_state = _adam.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, value


class Encoder(nn.Module):
    @nn.compact
    def __call__(self, x, train: bool):
        for k, width in enumerate((16, 32)):
            x = nn.Conv(width, (3, 3), strides=(2, 2), use_bias=False, name=f"conv{k}")(x)
            x = nn.relu(nn.BatchNorm(use_running_average=not train, name=f"bn{k}")(x))
        x = jnp.mean(x, axis=(1, 2))
        x = nn.relu(nn.Dense(32, name="proj1")(x))
        return nn.Dense(16, name="proj2")(x)


_encoder = Encoder()
_sgd = optax.sgd(optax.cosine_decay_schedule(0.1, 1000), momentum=0.9, nesterov=True)


def _views(key, images):
    k1, k2 = jax.random.split(key)
    flip = lambda k: jnp.where(jax.random.bernoulli(k, 0.5, (images.shape[0], 1, 1, 1)), images[:, :, ::-1], images)  # noqa: E731
    return flip(k1), flip(k2)


@jax.jit
def simclr_step(variables, opt_state, images, key):
    a, b = _views(key, images)

    def loss(params):
        z, updates = _encoder.apply({"params": params, "batch_stats": variables["batch_stats"]},
                                    jnp.concatenate([a, b]), train=True, mutable=["batch_stats"])
        z = z / jnp.linalg.norm(z, axis=-1, keepdims=True)
        sim = z @ z.T / 0.5
        n = images.shape[0]
        sim = jnp.where(jnp.eye(2 * n, dtype=bool), -1e9, sim)
        positives = jnp.concatenate([jnp.arange(n, 2 * n), jnp.arange(n)])
        nll = jax.nn.logsumexp(sim, axis=-1) - sim[jnp.arange(2 * n), positives]
        return nll.mean(), updates["batch_stats"]

    (value, stats), grads = jax.value_and_grad(loss, has_aux=True)(variables["params"])
    updates, opt_state = _sgd.update(grads, opt_state, variables["params"])
    return {"params": optax.apply_updates(variables["params"], updates), "batch_stats": stats}, opt_state, value


_unet_params = _unet.init(jax.random.PRNGKey(0), jnp.zeros((1, 16, 16, 3)), jnp.zeros((1,)))
_enc_vars = _encoder.init(jax.random.PRNGKey(1), jnp.zeros((1, 16, 16, 3)), train=False)

#: The arguments ``benchmarks/flops_vs_xla.py`` compiles each function with.
HLOVIZ_ARGS = {
    "diffusion_step": [_unet_params, _adam.init(_unet_params), jnp.zeros((4, 16, 16, 3)), jax.random.PRNGKey(2)],
    "simclr_step": [_enc_vars, _sgd.init(_enc_vars["params"]), jnp.zeros((8, 16, 16, 3)), jax.random.PRNGKey(3)],
}
