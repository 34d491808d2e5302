"""Held out (forty-fifth round, JAX): programs written to test the memory estimate, each compiled
for its XLA record, before any change they might lead to.

* ``pool_grad_step``: a max pool's gradient (``select-and-scatter``), a transposed convolution
  and ``jax.nn.one_hot`` into a cross-entropy, one SGD step.
* ``scans``: ``lax.associative_scan`` (a cumulative max), ``lax.scan`` run in reverse carrying
  two arrays, ``jnp.lexsort`` of two keys (a sort of three operands) and ``lax.top_k``.
* ``remat_loop``: a ``jax.checkpoint``-ed MLP applied inside ``lax.fori_loop`` updating a slice
  of a buffer with ``dynamic_update_slice`` each step, then its gradient.

Capture with ``hloviz dump benchmarks/heldout/round45_jax.py:NAME -o DIR`` (the arguments are the
objects themselves, ``HLOVIZ_ARGS``).
"""
import jax
import jax.numpy as jnp


def _pool_loss(params, x, labels):
    h = jax.lax.conv_general_dilated(x, params["conv"], (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
    h = jax.nn.relu(h)
    h = jax.lax.reduce_window(h, -jnp.inf, jax.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    up = jax.lax.conv_transpose(h, params["up"], (2, 2), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
    logits = up.mean(axis=(1, 2)) @ params["head"]
    return -jnp.mean(jnp.sum(jax.nn.one_hot(labels, 5) * jax.nn.log_softmax(logits), axis=-1))


@jax.jit
def pool_grad_step(params, x, labels):
    loss, grads = jax.value_and_grad(_pool_loss)(params, x, labels)
    return jax.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads), loss


@jax.jit
def scans(x, keys):
    running_max = jax.lax.associative_scan(jnp.maximum, x, axis=1)

    def back(carry, row):
        a, b = carry
        a = a * 0.9 + row
        b = jnp.maximum(b, a)
        return (a, b), a.sum()
    (a, b), sums = jax.lax.scan(back, (jnp.zeros(x.shape[1]), jnp.zeros(x.shape[1])), x, reverse=True)
    order = jnp.lexsort((keys[1], keys[0]))
    top, idx = jax.lax.top_k(x.reshape(-1), 7)
    return running_max.sum() + a.sum() + b.sum() + sums.sum(), order, top, idx


@jax.checkpoint
def _mlp(w, h):
    return jnp.tanh(jnp.tanh(h @ w[0]) @ w[1])


def _loop_loss(w, x):
    out = jnp.zeros((8, x.shape[0], x.shape[1]))

    def body(i, carry):
        h, out = carry
        h = _mlp(w, h)
        return h, jax.lax.dynamic_update_slice(out, h[None], (i, 0, 0))
    h, out = jax.lax.fori_loop(0, 8, body, (x, out))
    return jnp.mean(out ** 2) + jnp.mean(h)


@jax.jit
def remat_loop(w, x):
    return jax.value_and_grad(_loop_loss)(w, x)


HLOVIZ_ARGS = {
    "pool_grad_step": [{"conv": jnp.ones((3, 3, 3, 8)) * 0.1, "up": jnp.ones((2, 2, 8, 4)) * 0.1,
                        "head": jnp.ones((4, 5)) * 0.1}, jnp.ones((4, 16, 16, 3)), jnp.arange(4) % 5],
    "scans": [jnp.arange(96.0).reshape(12, 8) / 96.0, jnp.stack([jnp.arange(12) % 3, jnp.arange(12) % 5])],
    "remat_loop": [jnp.ones((2, 16, 16)) * 0.05, jnp.ones((4, 16))],
}
