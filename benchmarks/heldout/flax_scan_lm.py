"""Held out (second round): a small Flax language model whose layers are one ``nn.scan``
(weights stacked on a leading axis), trained with ``optax.adamw``; the arguments are the arrays
themselves (``HLOVIZ_ARGS``). ``hloviz dump benchmarks/heldout/flax_scan_lm.py:train_step -o DIR``.
"""
import flax.linen as nn
import jax
import jax.numpy as jnp
import optax


class Layer(nn.Module):
    @nn.compact
    def __call__(self, x, _):
        h = nn.LayerNorm()(x)
        h = nn.SelfAttention(num_heads=2, qkv_features=32, deterministic=True)(h)
        x = x + h
        h = nn.Dense(64)(nn.LayerNorm()(x))
        x = x + nn.Dense(32)(nn.gelu(h))
        return x, None


class LM(nn.Module):
    @nn.compact
    def __call__(self, tokens):
        x = nn.Embed(100, 32)(tokens)
        Stack = nn.scan(Layer, variable_axes={"params": 0}, split_rngs={"params": True}, length=4)
        x, _ = Stack()(x, None)
        return nn.Dense(100)(nn.LayerNorm()(x))


model = LM()
tx = optax.adamw(1e-3)
tokens = jnp.zeros((2, 16), jnp.int32)
params = model.init(jax.random.PRNGKey(0), tokens)
opt_state = tx.init(params)


@jax.jit
def train_step(params, opt_state, tokens):
    def loss_fn(p):
        logits = model.apply(p, tokens[:, :-1])
        return optax.softmax_cross_entropy_with_integer_labels(logits, tokens[:, 1:]).mean()

    loss, grads = jax.value_and_grad(loss_fn)(params)
    updates, opt_state = tx.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, loss


HLOVIZ_ARGS = {"train_step": [params, opt_state, tokens]}
