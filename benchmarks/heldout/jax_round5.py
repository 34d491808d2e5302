"""Held out (fifth round): JAX written by hand — a transformer whose layers are one
``lax.scan`` over stacked weights, each layer under ``jax.checkpoint``, with a ``custom_vjp``
activation, trained with ``optax.adam``; and per-example gradient norms by ``vmap`` of ``grad``.
Not looked at while the overview's rules were built. The arguments are the arrays themselves
(``HLOVIZ_ARGS``): ``hloviz dump benchmarks/heldout/jax_round5.py:train_step -o DIR`` and
``…:per_example_norms``.
"""
import jax
import jax.numpy as jnp
import optax

D, L, T = 32, 4, 16


@jax.custom_vjp
def clipped_gelu(x):
    return jax.nn.gelu(jnp.clip(x, -6.0, 6.0))


def _fwd(x):
    return clipped_gelu(x), x


def _bwd(x, g):
    return (g * jax.grad(lambda y: jax.nn.gelu(y).sum())(x) * (jnp.abs(x) < 6.0),)


clipped_gelu.defvjp(_fwd, _bwd)


def _layer(x, w):
    h = x / jnp.sqrt(jnp.mean(x * x, axis=-1, keepdims=True) + 1e-6)
    q, k, v = h @ w["q"], h @ w["k"], h @ w["v"]
    a = jax.nn.softmax(q @ k.T / jnp.sqrt(D), axis=-1) @ v
    x = x + a @ w["o"]
    return x + clipped_gelu(x @ w["up"]) @ w["down"]


def model(params, tokens):
    x = params["embed"][tokens]
    x, _ = jax.lax.scan(lambda c, w: (jax.checkpoint(_layer)(c, w), None), x, params["layers"])
    return x @ params["embed"].T


def loss_fn(params, tokens):
    logits = model(params, tokens[:-1])
    return optax.softmax_cross_entropy_with_integer_labels(logits, tokens[1:]).mean()


_keys = jax.random.split(jax.random.PRNGKey(0), 8)
params = {"embed": jax.random.normal(_keys[0], (64, D)) * 0.02,
          "layers": {n: jax.random.normal(k, (L, D, D * (4 if n == "up" else 1)) if n != "down"
                                          else (L, 4 * D, D)) * 0.02
                     for n, k in zip(("q", "k", "v", "o", "up", "down"), _keys[1:7], strict=True)}}
tx = optax.adam(1e-3)
opt_state = tx.init(params)
tokens = jnp.arange(T + 1) % 64


@jax.jit
def train_step(params, opt_state, tokens):
    loss, grads = jax.value_and_grad(loss_fn)(params, tokens)
    updates, opt_state = tx.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, loss


def _example_loss(w, x, y):
    return jnp.square(jnp.tanh(x @ w["a"]) @ w["b"] - y).sum()


small = {"a": jnp.ones((8, 16)) * 0.1, "b": jnp.ones((16, 1)) * 0.1}
xs, ys = jnp.ones((32, 8)), jnp.zeros((32, 1))


@jax.jit
def per_example_norms(w, xs, ys):
    grads = jax.vmap(jax.grad(_example_loss), in_axes=(None, 0, 0))(w, xs, ys)
    return jnp.sqrt(sum(jnp.sum(g.reshape(g.shape[0], -1) ** 2, axis=1) for g in jax.tree_util.tree_leaves(grads)))


HLOVIZ_ARGS = {"train_step": [params, opt_state, tokens], "per_example_norms": [small, xs, ys]}
