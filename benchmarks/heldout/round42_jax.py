"""Held out (forty-second round, JAX): written after round 41's fixes, not looked at while they
were made.

* ``tied_lm_step``: a small causal language model in Flax — ``nn.Embed`` whose table also makes
  the logits (``embed.attend``: tied weights), two blocks of ``nn.SelfAttention`` with a causal
  mask and an MLP, ``nn.LayerNorm`` — trained one step by ``optax.adamw`` under a
  ``warmup_cosine_decay_schedule``, weight decay masked off the biases and norms.
* ``mixup_step``: a small Flax CNN (``nn.Conv``, ``nn.avg_pool``) trained one step on mixup —
  a mixing weight drawn inside the step by ``jax.random.beta`` (a sampler XLA runs as loops) —
  by ``optax.sgd`` with Nesterov momentum.

Capture with ``hloviz dump benchmarks/heldout/round42_jax.py:tied_lm_step -o DIR`` and
``hloviz dump benchmarks/heldout/round42_jax.py:mixup_step -o DIR`` (their arguments are the
objects themselves, ``HLOVIZ_ARGS``).
"""
import flax.linen as nn
import jax
import jax.numpy as jnp
import optax

_VOCAB, _WIDTH, _LEN = 50, 32, 12


class _Block(nn.Module):
    @nn.compact
    def __call__(self, x, mask):
        x = x + nn.SelfAttention(num_heads=4, name="attn")(nn.LayerNorm(name="ln_1")(x), mask=mask)
        h = nn.Dense(4 * _WIDTH, name="fc_in")(nn.LayerNorm(name="ln_2")(x))
        return x + nn.Dense(_WIDTH, name="fc_out")(nn.gelu(h))


class _TiedLM(nn.Module):
    @nn.compact
    def __call__(self, tokens):
        embed = nn.Embed(_VOCAB, _WIDTH, name="embed")
        x = embed(tokens) + self.param("position", nn.initializers.normal(0.02), (_LEN, _WIDTH))
        mask = nn.make_causal_mask(tokens)
        for i in range(2):
            x = _Block(name=f"block_{i}")(x, mask)
        return embed.attend(nn.LayerNorm(name="ln_final")(x))


_lm = _TiedLM()
_lm_params = _lm.init(jax.random.PRNGKey(0), jnp.zeros((2, _LEN), jnp.int32))["params"]
_schedule = optax.warmup_cosine_decay_schedule(0.0, 3e-3, warmup_steps=10, decay_steps=100)
_decay_mask = jax.tree_util.tree_map_with_path(
    lambda path, _: path[-1].key not in ("bias", "scale"), _lm_params)
_lm_opt = optax.adamw(_schedule, weight_decay=0.01, mask=_decay_mask)


@jax.jit
def tied_lm_step(params, opt_state, tokens):
    def loss_fn(p):
        logits = _lm.apply({"params": p}, tokens[:, :-1])
        return optax.softmax_cross_entropy_with_integer_labels(logits, tokens[:, 1:]).mean()

    loss, grads = jax.value_and_grad(loss_fn)(params)
    updates, opt_state = _lm_opt.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, loss


class _SmallCnn(nn.Module):
    @nn.compact
    def __call__(self, x):
        x = nn.relu(nn.Conv(8, (3, 3), name="conv_a")(x))
        x = nn.avg_pool(x, (2, 2), strides=(2, 2))
        x = nn.relu(nn.Conv(16, (3, 3), name="conv_b")(x))
        return nn.Dense(3, name="head")(x.mean(axis=(1, 2)))


_cnn = _SmallCnn()
_cnn_params = _cnn.init(jax.random.PRNGKey(1), jnp.ones((1, 16, 16, 3)))["params"]
_cnn_opt = optax.sgd(0.05, momentum=0.9, nesterov=True)


@jax.jit
def mixup_step(params, opt_state, images, labels, key):
    lam = jax.random.beta(key, 0.4, 0.4)
    order = jax.random.permutation(jax.random.fold_in(key, 1), images.shape[0])
    mixed = lam * images + (1 - lam) * images[order]
    targets = lam * jax.nn.one_hot(labels, 3) + (1 - lam) * jax.nn.one_hot(labels[order], 3)

    def loss_fn(p):
        return optax.softmax_cross_entropy(_cnn.apply({"params": p}, mixed), targets).mean()

    loss, grads = jax.value_and_grad(loss_fn)(params)
    updates, opt_state = _cnn_opt.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, loss


HLOVIZ_ARGS = {
    "tied_lm_step": [_lm_params, _lm_opt.init(_lm_params), jnp.zeros((2, _LEN + 1), jnp.int32)],
    "mixup_step": [_cnn_params, _cnn_opt.init(_cnn_params), jnp.ones((4, 16, 16, 3)), jnp.array([0, 1, 2, 0]),
                   jax.random.PRNGKey(7)],
}
