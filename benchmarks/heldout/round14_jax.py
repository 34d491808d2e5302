"""Held out (fourteenth round, JAX): a decoder-only transformer in plain JAX — parameters a dict
of arrays, each block under ``jax.named_scope(f"block_{i}")`` with ``attention`` and ``mlp``
scopes inside — trained with a hand-written SGD-with-momentum update, as users write one
without a framework.

    hloviz dump benchmarks/heldout/round14_jax.py:train_step -o DIR

(the arguments are the objects themselves, ``HLOVIZ_ARGS``), then ``python
benchmarks/overview_bench.py --no-diffs --model DIR``. Figures: benchmarks/results/overview_bench.txt.
"""
import jax
import jax.numpy as jnp

VOCAB, DIM, HEADS, LAYERS, SEQ = 128, 64, 4, 4, 32


def _init(key):
    keys = iter(jax.random.split(key, 4 + 6 * LAYERS))
    normal = lambda shape: 0.02 * jax.random.normal(next(keys), shape)  # noqa: E731
    params = {"embed": normal((VOCAB, DIM)), "pos": normal((SEQ, DIM)), "head": normal((DIM, VOCAB))}
    for i in range(LAYERS):
        params[f"block_{i}"] = {"qkv": normal((DIM, 3 * DIM)), "out": normal((DIM, DIM)),
                                "up": normal((DIM, 4 * DIM)), "down": normal((4 * DIM, DIM)),
                                "ln1": jnp.ones(DIM), "ln2": jnp.ones(DIM)}
    return params


def _norm(x, scale):
    return scale * (x - x.mean(-1, keepdims=True)) * jax.lax.rsqrt(x.var(-1, keepdims=True) + 1e-5)


def _block(p, x):
    with jax.named_scope("attention"):
        q, k, v = jnp.split(_norm(x, p["ln1"]) @ p["qkv"], 3, axis=-1)
        split = lambda t: t.reshape(*t.shape[:-1], HEADS, DIM // HEADS)  # noqa: E731
        scores = jnp.einsum("bqhd,bkhd->bhqk", split(q), split(k)) / jnp.sqrt(DIM // HEADS)
        scores = jnp.where(jnp.tril(jnp.ones((SEQ, SEQ), bool)), scores, -1e9)
        x = x + jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(scores), split(v)).reshape(x.shape) @ p["out"]
    with jax.named_scope("mlp"):
        return x + jax.nn.gelu(_norm(x, p["ln2"]) @ p["up"]) @ p["down"]


def forward(params, tokens):
    x = params["embed"][tokens] + params["pos"]
    for i in range(LAYERS):
        with jax.named_scope(f"block_{i}"):
            x = _block(params[f"block_{i}"], x)
    return x @ params["head"]


def loss_fn(params, tokens):
    logits = forward(params, tokens[:, :-1])
    targets = jax.nn.one_hot(tokens[:, 1:], VOCAB)
    return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * targets, axis=-1))


@jax.jit
def train_step(params, velocity, tokens):
    loss, grads = jax.value_and_grad(loss_fn)(params, tokens)
    velocity = jax.tree_util.tree_map(lambda v, g: 0.9 * v + g, velocity, grads)
    params = jax.tree_util.tree_map(lambda p, v: p - 1e-2 * v, params, velocity)
    return params, velocity, loss


params = _init(jax.random.PRNGKey(0))
velocity = jax.tree_util.tree_map(jnp.zeros_like, params)
HLOVIZ_ARGS = {"train_step": [params, velocity, jnp.zeros((8, SEQ + 1), jnp.int32)]}
