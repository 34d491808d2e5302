"""Held out (eleventh round): a Flax NNX transformer — four pre-norm blocks, embedding and head —
trained with ``nnx.Optimizer`` (AdamW), written as the NNX docs write models. NNX's op names carry
no module names (``jit(train_step)/jvp()/…``), and ``nnx.MultiHeadAttention``'s einsums write their
subscripts into the name stack, which the overview drew as a box of every layer's attention
scores (``hloviz/analysis/opnames.py``: they are no scope now).

    hloviz dump benchmarks/heldout/round11_nnx.py:train_step -o DIR

(the arguments are the objects themselves, ``HLOVIZ_ARGS``), then ``python
benchmarks/overview_bench.py --no-diffs --model DIR``. Figures: benchmarks/results/overview_bench.txt.
"""
import jax
import jax.numpy as jnp
import optax
from flax import nnx


class Block(nnx.Module):
    def __init__(self, dim: int, rngs: nnx.Rngs):
        self.norm1 = nnx.LayerNorm(dim, rngs=rngs)
        self.attn = nnx.MultiHeadAttention(num_heads=4, in_features=dim, decode=False, rngs=rngs)
        self.norm2 = nnx.LayerNorm(dim, rngs=rngs)
        self.up = nnx.Linear(dim, 4 * dim, rngs=rngs)
        self.down = nnx.Linear(4 * dim, dim, rngs=rngs)

    def __call__(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.down(jax.nn.gelu(self.up(self.norm2(x))))


class Model(nnx.Module):
    def __init__(self, rngs: nnx.Rngs, layers: int = 4, dim: int = 32):
        self.embed = nnx.Embed(100, dim, rngs=rngs)
        blocks = [Block(dim, rngs) for _ in range(layers)]
        self.blocks = nnx.List(blocks) if hasattr(nnx, "List") else blocks
        self.head = nnx.Linear(dim, 5, rngs=rngs)

    def __call__(self, tokens):
        x = self.embed(tokens)
        for block in self.blocks:
            x = block(x)
        return self.head(x.mean(axis=1))


model = Model(nnx.Rngs(0))
optimizer = nnx.Optimizer(model, optax.adamw(1e-3), wrt=nnx.Param)


@nnx.jit
def train_step(model, optimizer, tokens, labels):
    def loss_fn(m):
        return optax.softmax_cross_entropy_with_integer_labels(m(tokens), labels).mean()

    loss, grads = nnx.value_and_grad(loss_fn)(model)
    optimizer.update(model, grads)
    return loss


HLOVIZ_ARGS = {"train_step": [model, optimizer, jnp.zeros((4, 12), jnp.int32), jnp.zeros((4,), jnp.int32)]}
