"""Held out (thirty-seventh round, JAX): written after this session's fixes, and not looked at
while they were made.

* ``mlm_step``: a two-layer Flax ``linen`` encoder of the kind BERT tutorials write — ``nn.Embed``
  tokens and positions, ``nn.MultiHeadDotProductAttention`` and an MLP per layer with
  ``nn.LayerNorm``, an output projection tied to the token embedding (``attend``) — trained one
  step on a masked-token loss by ``optax.adamw`` under a warmup-cosine schedule.

Capture with ``hloviz dump benchmarks/heldout/round37_jax.py:mlm_step -o DIR`` (its arguments are
the objects themselves, ``HLOVIZ_ARGS``).
"""
import flax.linen as nn
import jax
import jax.numpy as jnp
import optax

_VOCAB, _WIDTH, _LENGTH = 50, 16, 8


class _Layer(nn.Module):
    @nn.compact
    def __call__(self, x):
        x = x + nn.MultiHeadDotProductAttention(num_heads=2, name="attention")(nn.LayerNorm(name="ln1")(x))
        h = nn.Dense(4 * _WIDTH, name="up")(nn.LayerNorm(name="ln2")(x))
        return x + nn.Dense(_WIDTH, name="down")(nn.gelu(h))


class _Encoder(nn.Module):
    @nn.compact
    def __call__(self, tokens):
        embed = nn.Embed(_VOCAB, _WIDTH, name="tokens")
        x = embed(tokens) + nn.Embed(_LENGTH, _WIDTH, name="positions")(jnp.arange(tokens.shape[1]))
        for k in range(2):
            x = _Layer(name=f"layer{k}")(x)
        return embed.attend(nn.LayerNorm(name="final")(x))


_model = _Encoder()
_params = _model.init(jax.random.PRNGKey(0), jnp.zeros((2, _LENGTH), jnp.int32))
_opt = optax.adamw(optax.warmup_cosine_decay_schedule(0.0, 1e-3, 10, 100))
_state = _opt.init(_params)


def mlm_step(params, opt_state, tokens, targets, mask):
    def loss_fn(p):
        logits = _model.apply(p, tokens)
        losses = optax.softmax_cross_entropy_with_integer_labels(logits, targets)
        return (losses * mask).sum() / mask.sum()

    loss, grads = jax.value_and_grad(loss_fn)(params)
    updates, opt_state = _opt.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, loss


_tokens = jax.random.randint(jax.random.PRNGKey(1), (2, _LENGTH), 0, _VOCAB)
HLOVIZ_ARGS = {
    "mlm_step": [_params, _state, _tokens, _tokens, (jnp.arange(_LENGTH) % 3 == 0).astype(jnp.float32)[None, :].repeat(2, 0)],
}
