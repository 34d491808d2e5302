"""Held out (twelfth round, JAX): a Flax linen mixture-of-experts language model — token
embedding, two layers of attention-free mixing plus a top-2 router over four expert MLPs
(``jax.lax.top_k``, ``jnp.einsum`` over the experts), a head — trained with optax Lion through
a ``flax.training.train_state.TrainState``, as the Flax examples write a step.

    hloviz dump benchmarks/heldout/round12_moe.py:train_step -o DIR

(the arguments are the objects themselves, ``HLOVIZ_ARGS``), then ``python
benchmarks/overview_bench.py --no-diffs --model DIR``. Figures: benchmarks/results/overview_bench.txt.
"""
import jax
import jax.numpy as jnp
import optax
from flax import linen as nn
from flax.training import train_state


class Experts(nn.Module):
    experts: int = 4
    hidden: int = 64

    @nn.compact
    def __call__(self, x):
        dim = x.shape[-1]
        gate = nn.Dense(self.experts, name="router")(x)
        weights, chosen = jax.lax.top_k(jax.nn.softmax(gate), 2)
        mask = jnp.sum(jax.nn.one_hot(chosen, self.experts) * weights[..., None], axis=-2)  # [b, t, e]
        w_in = self.param("w_in", nn.initializers.lecun_normal(), (self.experts, dim, self.hidden))
        w_out = self.param("w_out", nn.initializers.lecun_normal(), (self.experts, self.hidden, dim))
        h = jax.nn.gelu(jnp.einsum("btd,edh->bteh", x, w_in))
        out = jnp.einsum("bteh,ehd->bted", h, w_out)
        return jnp.einsum("bted,bte->btd", out, mask)


class Layer(nn.Module):
    @nn.compact
    def __call__(self, x):
        x = x + nn.Dense(x.shape[-1], name="mix")(nn.LayerNorm(name="norm1")(x))
        return x + Experts(name="moe")(nn.LayerNorm(name="norm2")(x))


class MoELM(nn.Module):
    vocab: int = 200
    dim: int = 32

    @nn.compact
    def __call__(self, tokens):
        x = nn.Embed(self.vocab, self.dim, name="embed")(tokens)
        for i in range(2):
            x = Layer(name=f"layer_{i}")(x)
        return nn.Dense(self.vocab, name="head")(nn.LayerNorm(name="final_norm")(x))


_model = MoELM()
_tokens = jnp.zeros((8, 16), jnp.int32)
state = train_state.TrainState.create(apply_fn=_model.apply, params=_model.init(jax.random.PRNGKey(0), _tokens)["params"],
                                      tx=optax.lion(1e-4))


@jax.jit
def train_step(state, tokens, targets):
    def loss_fn(params):
        logits = state.apply_fn({"params": params}, tokens)
        return optax.softmax_cross_entropy_with_integer_labels(logits, targets).mean()

    loss, grads = jax.value_and_grad(loss_fn)(state.params)
    return state.apply_gradients(grads=grads), loss


HLOVIZ_ARGS = {"train_step": [state, _tokens, _tokens]}
