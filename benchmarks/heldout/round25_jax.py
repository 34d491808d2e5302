"""Held out (twenty-fifth round, JAX): written after this round's changes and the twenty-fourth
round's, to check them on models nobody here had captured.

* ``accumulate_step``: plain JAX — an MLP whose parameters are a dict passed in, its gradients
  summed over four micro-batches by ``lax.scan`` (the batch reshaped), then an SGD step with
  weight decay written by hand.
* ``causal_lm_step``: a Flax ``linen`` language model — ``nn.Embed``, an
  ``nn.SelfAttention`` block with a causal mask (``nn.make_causal_mask``), ``nn.LayerNorm``, an
  output ``Dense`` — trained with ``optax.chain(add_decayed_weights, sgd)``; parameters closed over.

Capture with ``hloviz dump benchmarks/heldout/round25_jax.py:accumulate_step -o DIR`` and
``…:causal_lm_step -o DIR`` (their arguments are the objects themselves, ``HLOVIZ_ARGS``).
"""
import flax.linen as nn
import jax
import jax.numpy as jnp
import optax


def _mlp(params, x):
    with jax.named_scope("layer_1"):
        x = jnp.tanh(x @ params["w1"] + params["b1"])
    with jax.named_scope("layer_2"):
        return x @ params["w2"] + params["b2"]


def accumulate_step(params, x, y):
    def loss_fn(p, xb, yb):
        return jnp.mean((_mlp(p, xb) - yb) ** 2)

    def micro(total, batch):
        grads = jax.grad(loss_fn)(params, *batch)
        return jax.tree_util.tree_map(jnp.add, total, grads), None

    batches = (x.reshape(4, -1, x.shape[-1]), y.reshape(4, -1, y.shape[-1]))
    zeros = jax.tree_util.tree_map(jnp.zeros_like, params)
    grads, _ = jax.lax.scan(micro, zeros, batches)
    return jax.tree_util.tree_map(lambda p, g: p * (1 - 1e-4) - 0.01 * g / 4, params, grads)


class _Lm(nn.Module):
    @nn.compact
    def __call__(self, tokens):
        x = nn.Embed(100, 32, name="embed")(tokens)
        mask = nn.make_causal_mask(tokens)
        x = nn.LayerNorm(name="norm")(x + nn.SelfAttention(4, name="attention")(x, mask=mask))
        return nn.Dense(100, name="logits")(x)


_lm = _Lm()
_lm_params = _lm.init(jax.random.PRNGKey(0), jnp.zeros((1, 12), jnp.int32))["params"]
_chain = optax.chain(optax.add_decayed_weights(1e-4), optax.sgd(0.1))
_chain_state = _chain.init(_lm_params)


def causal_lm_step(tokens):
    def loss_fn(p):
        logits = _lm.apply({"params": p}, tokens[:, :-1])
        return optax.softmax_cross_entropy_with_integer_labels(logits, tokens[:, 1:]).mean()

    loss, grads = jax.value_and_grad(loss_fn)(_lm_params)
    updates, state = _chain.update(grads, _chain_state, _lm_params)
    return optax.apply_updates(_lm_params, updates), state, loss


_k = jax.random.split(jax.random.PRNGKey(3), 2)
HLOVIZ_ARGS = {
    "accumulate_step": [{"w1": jax.random.normal(_k[0], (10, 32)) * 0.1, "b1": jnp.zeros(32),
                         "w2": jax.random.normal(_k[1], (32, 1)) * 0.1, "b2": jnp.zeros(1)},
                        jnp.zeros((16, 10)), jnp.zeros((16, 1))],
    "causal_lm_step": [jnp.zeros((4, 13), jnp.int32)],
}
