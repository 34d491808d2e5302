"""Round 68 (held out): JAX training loops written as users write them.

* ``scan_steps``: ``lax.scan`` over a stack of batches, each iteration a whole step of a
  two-layer MLP (``jax.value_and_grad`` + optax Adam), the losses stacked.
* ``fori_steps_plain``: ``lax.fori_loop`` of three SGD steps of a plain-JAX CNN (``lax.conv``),
  no Flax, no optax.

Capture with ``hloviz dump benchmarks/heldout/round68_jax.py:scan_steps --arg "f32[5,8,16]" --arg "s32[5,8]"
-o DIR`` and ``… :fori_steps_plain --arg "f32[3,3,1,4]" --arg "f32[4,2]" --arg "f32[8,6,6,1]" --arg "f32[8,2]" -o DIR``.
"""
import jax
import jax.numpy as jnp
import optax

_opt = optax.adam(1e-3)


def _mlp(params, x):
    h = jax.nn.relu(x @ params["w1"] + params["b1"])
    return h @ params["w2"] + params["b2"]


def _loss(params, x, y):
    logits = _mlp(params, x)
    return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()


@jax.jit
def scan_steps(xs, ys):
    k1, k2 = jax.random.split(jax.random.PRNGKey(0))
    params = {"w1": jax.random.normal(k1, (16, 32)) * 0.1, "b1": jnp.zeros(32),
              "w2": jax.random.normal(k2, (32, 4)) * 0.1, "b2": jnp.zeros(4)}
    state = _opt.init(params)

    def step(carry, batch):
        params, state = carry
        loss, grads = jax.value_and_grad(_loss)(params, *batch)
        updates, state = _opt.update(grads, state, params)
        return (optax.apply_updates(params, updates), state), loss

    (params, _), losses = jax.lax.scan(step, (params, state), (xs, ys))
    return params, losses


def _cnn(w, x):
    y = jax.lax.conv_general_dilated(x, w["conv"], (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
    y = jax.nn.relu(y).mean(axis=(1, 2))
    return y @ w["head"]


@jax.jit
def fori_steps_plain(conv, head, x, y):
    def body(i, w):
        g = jax.grad(lambda w: jnp.mean((_cnn(w, x) - y) ** 2))(w)
        return jax.tree_util.tree_map(lambda p, d: p - 0.01 * d, w, g)

    w = jax.lax.fori_loop(0, 3, body, {"conv": conv, "head": head})
    return w["conv"], w["head"]


#: The arguments ``benchmarks/flops_vs_xla.py`` compiles each function with.
HLOVIZ_ARGS = {"scan_steps": ["f32[5,8,16]", "s32[5,8]"],
               "fori_steps_plain": ["f32[3,3,1,4]", "f32[4,2]", "f32[8,6,6,1]", "f32[8,2]"]}
