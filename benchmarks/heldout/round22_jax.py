"""Held out (twenty-second round, JAX): written after this round's changes (loose ops beside the
layers inside a model's own scope blocked by their arrows, after optimization too; a block of
weights alone folded into its reader), to check them on models nobody here had captured.

* ``mixer_step``: a Flax ``linen`` MLP-Mixer classifier — a patch embedding ``nn.Conv``, two
  mixer blocks (token mixing on the transposed sequence, channel mixing, each ``LayerNorm`` →
  ``Dense`` → ``nn.gelu`` → ``Dense`` with a residual add written inline), a global mean and a
  head — trained with ``optax.adamw`` on a warm-up-cosine schedule; parameters closed over.
* ``params_step``: plain JAX, no library: a two-layer MLP whose parameters are a dict passed in
  as an argument, ``jax.named_scope`` per layer, ``jax.nn.log_softmax`` cross entropy and SGD
  with momentum written by hand (``tree_map``), returning the new parameters and velocity.

Capture with ``hloviz dump benchmarks/heldout/round22_jax.py:mixer_step --arg "f32[4,16,16,3]"
--arg "s32[4]" -o DIR`` and ``hloviz dump benchmarks/heldout/round22_jax.py:params_step -o DIR``
(its arguments are the objects themselves, ``HLOVIZ_ARGS``).
"""
import flax.linen as nn
import jax
import jax.numpy as jnp
import optax


class _MlpBlock(nn.Module):
    hidden: int

    @nn.compact
    def __call__(self, x):
        y = nn.Dense(self.hidden, name="fc1")(x)
        return nn.Dense(x.shape[-1], name="fc2")(nn.gelu(y))


class _MixerBlock(nn.Module):
    @nn.compact
    def __call__(self, x):
        y = nn.LayerNorm(name="token_norm")(x)
        y = jnp.swapaxes(y, 1, 2)
        x = x + jnp.swapaxes(_MlpBlock(32, name="token_mixing")(y), 1, 2)
        y = nn.LayerNorm(name="channel_norm")(x)
        return x + _MlpBlock(64, name="channel_mixing")(y)


class _Mixer(nn.Module):
    @nn.compact
    def __call__(self, images):
        x = nn.Conv(32, (4, 4), strides=(4, 4), name="stem")(images)
        x = x.reshape(x.shape[0], -1, x.shape[-1])
        for i in range(2):
            x = _MixerBlock(name=f"mixer_{i}")(x)
        x = nn.LayerNorm(name="pre_head_norm")(x).mean(axis=1)
        return nn.Dense(10, name="head")(x)


_mixer = _Mixer()
_mixer_params = _mixer.init(jax.random.PRNGKey(0), jnp.zeros((1, 16, 16, 3)))["params"]
_schedule = optax.warmup_cosine_decay_schedule(0.0, 1e-3, 10, 100)
_adamw = optax.adamw(_schedule, weight_decay=0.05)
_adamw_state = _adamw.init(_mixer_params)


def mixer_step(images, labels):
    def loss_fn(p):
        logits = _mixer.apply({"params": p}, images)
        return optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()

    loss, grads = jax.value_and_grad(loss_fn)(_mixer_params)
    updates, state = _adamw.update(grads, _adamw_state, _mixer_params)
    return optax.apply_updates(_mixer_params, updates), state, loss


def _mlp(params, x):
    with jax.named_scope("hidden"):
        x = jax.nn.relu(x @ params["hidden"]["w"] + params["hidden"]["b"])
    with jax.named_scope("logits"):
        return x @ params["logits"]["w"] + params["logits"]["b"]


def params_step(params, velocity, x, y):
    def loss_fn(p):
        logp = jax.nn.log_softmax(_mlp(p, x))
        return -jnp.mean(jnp.take_along_axis(logp, y[:, None], axis=1))

    loss, grads = jax.value_and_grad(loss_fn)(params)
    velocity = jax.tree_util.tree_map(lambda v, g: 0.9 * v + g, velocity, grads)
    params = jax.tree_util.tree_map(lambda p, v: p - 0.05 * v, params, velocity)
    return params, velocity, loss


_k1, _k2 = jax.random.split(jax.random.PRNGKey(1))
_params = {"hidden": {"w": jax.random.normal(_k1, (20, 32)) * 0.1, "b": jnp.zeros(32)},
           "logits": {"w": jax.random.normal(_k2, (32, 5)) * 0.1, "b": jnp.zeros(5)}}
HLOVIZ_ARGS = {"params_step": [_params, jax.tree_util.tree_map(jnp.zeros_like, _params),
                               jnp.zeros((16, 20)), jnp.zeros((16,), jnp.int32)]}
