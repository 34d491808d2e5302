"""Round 77 (held out, JAX): models written the way users write them, not looked at while building
anything.

* ``siamese_topk_step``: a Flax ``linen`` siamese encoder — one ``nn.Dense`` projection shared by
  the two branches (anchor and candidate go through the same submodule), an ``nn.RMSNorm`` and a
  ``nn.DenseGeneral`` head per branch — trained on a retrieval loss: similarity logits of every
  anchor against every candidate, ``jax.nn.one_hot`` of the true match, a hard-negative margin
  from ``jax.lax.top_k`` of the off-diagonal logits, and the accuracy from ``jnp.argmax``
  (returned, not differentiated). The step warms up: ``jax.lax.cond`` on the step number picks the
  margin term's weight. One step of ``optax.chain(optax.masked(add_decayed_weights(1e-4), mask),
  optax.adam(1e-3))`` — weight decay on kernels only.
* ``nnx_cnn_lars_step``: a Flax NNX CNN — ``nnx.Conv`` → ``nnx.BatchNorm`` → ``relu`` twice with
  ``nnx.avg_pool``, ``nnx.Dropout``, an ``nnx.Linear`` head — trained one step by
  ``nnx.Optimizer`` with ``optax.apply_if_finite(optax.lars(0.1), 3)`` (skips non-finite updates)
  under ``nnx.jit``.

Capture with ``hloviz dump benchmarks/heldout/round77_jax.py:NAME -o DIR`` (the arguments are the
objects themselves, ``HLOVIZ_ARGS``).
"""
import flax.linen as nn
import jax
import jax.numpy as jnp
import optax
from flax import nnx

# --- siamese retrieval with a shared projection -----------------------------------------------


class Siamese(nn.Module):
    @nn.compact
    def __call__(self, anchor, candidate):
        shared = nn.Dense(32, name="shared_proj")

        def branch(x, prefix):
            h = nn.relu(shared(x))
            h = nn.RMSNorm(name=f"{prefix}_norm")(h)
            return nn.DenseGeneral(16, name=f"{prefix}_head")(h)

        return branch(anchor, "anchor"), branch(candidate, "candidate")


_siamese = Siamese()
_siam_params = _siamese.init(jax.random.PRNGKey(0), jnp.zeros((16, 20)), jnp.zeros((16, 20)))
_decay_mask = jax.tree_util.tree_map_with_path(lambda path, _: path[-1].key == "kernel", _siam_params)
_siam_opt = optax.chain(optax.masked(optax.add_decayed_weights(1e-4), _decay_mask), optax.adam(1e-3))


@jax.jit
def siamese_topk_step(params, opt_state, step, anchor, candidate):
    def loss_fn(p):
        a, c = _siamese.apply(p, anchor, candidate)
        logits = a @ c.T / 0.1
        n = logits.shape[0]
        target = jax.nn.one_hot(jnp.arange(n), n)
        xent = optax.softmax_cross_entropy(logits, target).mean()
        negatives = jnp.where(target > 0, -jnp.inf, logits)
        hard, _ = jax.lax.top_k(negatives, 3)
        margin = jax.nn.relu(hard - jnp.diagonal(logits)[:, None] + 1.0).mean()
        weight = jax.lax.cond(step < 100, lambda: jnp.float32(0.0), lambda: jnp.float32(0.5))
        accuracy = (jnp.argmax(logits, axis=-1) == jnp.arange(n)).mean()
        return xent + weight * margin, accuracy

    (loss, accuracy), grads = jax.value_and_grad(loss_fn, has_aux=True)(params)
    updates, opt_state = _siam_opt.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, loss, accuracy


# --- NNX CNN + LARS under apply_if_finite -----------------------------------------------------


class SmallCNN(nnx.Module):
    def __init__(self, rngs: nnx.Rngs):
        self.conv1 = nnx.Conv(3, 16, (3, 3), rngs=rngs)
        self.bn1 = nnx.BatchNorm(16, rngs=rngs)
        self.conv2 = nnx.Conv(16, 32, (3, 3), rngs=rngs)
        self.bn2 = nnx.BatchNorm(32, rngs=rngs)
        self.dropout = nnx.Dropout(0.2, rngs=rngs)
        self.head = nnx.Linear(32 * 4 * 4, 10, rngs=rngs)

    def __call__(self, x):
        x = nnx.avg_pool(nnx.relu(self.bn1(self.conv1(x))), (2, 2), (2, 2))
        x = nnx.avg_pool(nnx.relu(self.bn2(self.conv2(x))), (2, 2), (2, 2))
        x = self.dropout(x.reshape(x.shape[0], -1))
        return self.head(x)


_cnn = SmallCNN(nnx.Rngs(0))
_lars = nnx.Optimizer(_cnn, optax.apply_if_finite(optax.lars(0.1), 3), wrt=nnx.Param)


@nnx.jit
def nnx_cnn_lars_step(model, optimizer, images, labels):
    def loss_fn(m):
        logits = m(images)
        return optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()

    loss, grads = nnx.value_and_grad(loss_fn)(model)
    optimizer.update(model, grads)
    return loss


HLOVIZ_ARGS = {
    "siamese_topk_step": [_siam_params, _siam_opt.init(_siam_params), jnp.int32(150), jnp.zeros((16, 20)),
                          jnp.ones((16, 20))],
    "nnx_cnn_lars_step": [_cnn, _lars, jnp.zeros((4, 16, 16, 3)), jnp.zeros((4,), jnp.int32)],
}
