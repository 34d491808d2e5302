"""Held out (seventeenth round, JAX): a Flax ``linen`` transformer classifier (token and
position embeddings, two encoder blocks with ``nn.MultiHeadDotProductAttention`` and dropout,
mean pooling) trained with ``optax.multi_transform``: AdamW for the blocks and the head, plain
SGD for the embeddings, under a global-norm clip — parameter groups with optimizers of their own,
as fine-tuning code writes them.

Capture with ``hloviz dump benchmarks/heldout/round17_jax.py:grouped_step --arg "s32[8,16]" --arg
"s32[8]" -o DIR``.
"""
import flax.linen as nn
import jax
import jax.numpy as jnp
import optax

_VOCAB, _WIDTH, _LEN = 200, 32, 16


class _Block(nn.Module):
    @nn.compact
    def __call__(self, x, train: bool):
        h = nn.LayerNorm(name="ln_attn")(x)
        h = nn.MultiHeadDotProductAttention(num_heads=4, name="attn")(h, h)
        x = x + nn.Dropout(0.1, deterministic=not train)(h)
        h = nn.LayerNorm(name="ln_mlp")(x)
        h = nn.Dense(4 * _WIDTH, name="up")(h)
        h = nn.Dense(_WIDTH, name="down")(nn.gelu(h))
        return x + nn.Dropout(0.1, deterministic=not train)(h)


class _Classifier(nn.Module):
    @nn.compact
    def __call__(self, tokens, train: bool = False):
        x = nn.Embed(_VOCAB, _WIDTH, name="tokens")(tokens)
        x = x + self.param("positions", nn.initializers.normal(0.02), (_LEN, _WIDTH))
        for i in range(2):
            x = _Block(name=f"block_{i}")(x, train)
        x = nn.LayerNorm(name="ln_final")(x).mean(axis=1)
        return nn.Dense(5, name="head")(x)


_model = _Classifier()
_params = _model.init(jax.random.PRNGKey(0), jnp.zeros((1, _LEN), jnp.int32))["params"]
_labels = {k: ("embed" if k in ("tokens", "positions") else "rest") for k in _params}
_opt = optax.chain(optax.clip_by_global_norm(1.0),
                   optax.multi_transform({"embed": optax.sgd(1e-2), "rest": optax.adamw(1e-3)}, _labels))
_state = _opt.init(_params)


def grouped_step(tokens, labels):
    def loss_fn(p):
        logits = _model.apply({"params": p}, tokens, train=True, rngs={"dropout": jax.random.PRNGKey(1)})
        return optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()

    loss, grads = jax.value_and_grad(loss_fn)(_params)
    updates, state = _opt.update(grads, _state, _params)
    return optax.apply_updates(_params, updates), state, loss
