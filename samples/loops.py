"""JAX loops as users write them: a Flax ViT whose blocks run under ``nn.scan(nn.remat(Block))``,
its AdamW training step, and plain ``lax.scan`` / ``lax.fori_loop`` / ``vmap`` / nested
``while_loop`` + ``cond`` code. XLA turns each loop into a ``while`` whose body computation
holds the work once; hloviz files that work under the loop's own scopes (``ViT/blocks/mlp``)
with the trip count XLA knows.

* ``vit_forward(params, images)``: the logits of a batch of images; the ``DEPTH`` blocks are one
  ``nn.scan`` over stacked parameters, each block rematerialised (``nn.remat``);
* ``vit_forward_relu(params, images)``: the same model with ``relu`` in the MLP instead of
  ``gelu`` (``hloviz diff`` of the two points at ``mlp``);
* ``vit_train_step(params, adamw_state, images, labels)``: one optax AdamW step of the ViT;
* ``rnn_scan(w, h0, xs)``: a tanh RNN over a sequence with ``jax.lax.scan``;
* ``power_fori(a, x)``: ``x ← normalise(a @ x)`` eight times with ``jax.lax.fori_loop``;
* ``batched_newton(x)``: a per-example Newton square root under ``vmap``, each a ``while_loop``
  whose body takes a ``lax.cond`` branch, nested in an outer ``while_loop``.

The captures the tests read were made from the project root with::

    hloviz dump samples/loops.py:vit_forward -o samples/captures/loops_vit
    hloviz dump samples/loops.py:vit_forward_relu -o samples/captures/loops_vit_relu
    hloviz dump samples/loops.py:vit_train_step -o samples/captures/loops_vit_train
    hloviz dump samples/loops.py:rnn_scan -o samples/captures/loops_rnn_scan
    hloviz dump samples/loops.py:power_fori -o samples/captures/loops_power_fori
    hloviz dump samples/loops.py:batched_newton -o samples/captures/loops_newton

The argument shapes (``HLOVIZ_ARGS``) are read from the models with ``jax.eval_shape``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import flax.linen as nn
import jax
import jax.numpy as jnp
import optax

IMAGE, PATCH, WIDTH, HEADS, DEPTH, MLP, CLASSES, BATCH = 16, 4, 32, 2, 3, 64, 10, 4
STEPS, HIDDEN = 12, 32


class MlpBlock(nn.Module):
    activation: Callable[[jax.Array], jax.Array]

    @nn.compact
    def __call__(self, x):
        return nn.Dense(WIDTH, name="fc2")(self.activation(nn.Dense(MLP, name="fc1")(x)))


class Block(nn.Module):
    """One pre-norm transformer block; called as ``nn.scan``'s body, so it returns (carry, out)."""

    activation: Callable[[jax.Array], jax.Array]

    @nn.compact
    def __call__(self, x, _):
        x = x + nn.SelfAttention(num_heads=HEADS, name="attn")(nn.LayerNorm(name="ln1")(x))
        x = x + MlpBlock(self.activation, name="mlp")(nn.LayerNorm(name="ln2")(x))
        return x, None


class ViT(nn.Module):
    activation: Callable[[jax.Array], jax.Array] = nn.gelu

    @nn.compact
    def __call__(self, images):
        x = nn.Conv(WIDTH, (PATCH, PATCH), strides=(PATCH, PATCH), name="patch_embed")(images)
        x = x.reshape(x.shape[0], -1, WIDTH)
        x = x + self.param("pos_embed", nn.initializers.normal(0.02), (1, x.shape[1], WIDTH))
        blocks = nn.scan(nn.remat(Block), variable_axes={"params": 0}, split_rngs={"params": True},
                         length=DEPTH)
        x, _ = blocks(self.activation, name="blocks")(x, None)
        return nn.Dense(CLASSES, name="head")(nn.LayerNorm(name="norm")(x).mean(axis=1))


vit, vit_relu = ViT(), ViT(activation=nn.relu)
adamw = optax.adamw(1e-3, weight_decay=1e-4)


def vit_forward(params, images):
    """The class logits of a batch of images."""
    return vit.apply({"params": params}, images)


def vit_forward_relu(params, images):
    """The same ViT with ``relu`` in its MLP."""
    return vit_relu.apply({"params": params}, images)


def vit_train_step(params, adamw_state, images, labels):
    """One AdamW step: the loss, its gradient through the scanned blocks, the update."""
    def loss(p):
        logits: Any = vit.apply({"params": p}, images)
        return optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()

    value, grads = jax.value_and_grad(loss)(params)
    state = (optax.ScaleByAdamState(count=adamw_state["count"], mu=adamw_state["mu"], nu=adamw_state["nu"]),
             optax.EmptyState(), optax.EmptyState())
    steps, new = adamw.update(grads, state, params)
    return optax.apply_updates(params, steps), _plain(new), value


def _plain(state: Any) -> dict:
    """optax's Adam state as the plain dict the step was given (count, mu, nu)."""
    return {"count": state[0].count, "mu": state[0].mu, "nu": state[0].nu}


def rnn_scan(w, h0, xs):
    """The last hidden state and all outputs of ``h ← tanh(h @ w + x)`` over ``xs``."""
    def step(h, x):
        h = jnp.tanh(h @ w + x)
        return h, h.sum()

    return jax.lax.scan(step, h0, xs)


def power_fori(a, x):
    """Eight steps of power iteration with ``fori_loop``."""
    def body(_, v):
        v = a @ v
        return v / jnp.linalg.norm(v)

    return jax.lax.fori_loop(0, 8, body, x)


def _newton_sqrt(value):
    """The square root of one value: Newton steps until they stop moving, a ``cond`` inside."""
    def keep_going(state):
        guess, previous, _ = state
        return jnp.abs(guess - previous) > 1e-6

    def step(state):
        guess, _, count = state
        better = jax.lax.cond(guess > 0, lambda g: 0.5 * (g + value / g), lambda g: jnp.ones_like(g), guess)
        return better, guess, count + 1

    return jax.lax.while_loop(keep_going, step, (value, value + 1.0, 0))[0]


def batched_newton(x):
    """Square roots of a batch by ``vmap``, repeated under an outer ``while_loop`` three times."""
    def outer(state):
        k, y = state
        return k + 1, jax.vmap(_newton_sqrt)(y + 1.0)

    return jax.lax.while_loop(lambda s: s[0] < 3, outer, (0, x))[1]


def _spec(s: Any) -> str:
    kind = {"float32": "f32", "int32": "s32"}[str(s.dtype)]
    return f"{kind}[{','.join(map(str, s.shape))}]"


def _specs(tree: Any) -> Any:
    """The spec strings hloviz reads (``f32[3,3,3,32]``) for a tree of shapes."""
    return {k: _specs(v) for k, v in tree.items()} if hasattr(tree, "items") else _spec(tree)


def _shapes() -> dict[str, list[Any]]:
    images, labels = f"f32[{BATCH},{IMAGE},{IMAGE},3]", f"s32[{BATCH}]"
    params = _specs(jax.eval_shape(lambda: vit.init(jax.random.PRNGKey(0), jnp.zeros((1, IMAGE, IMAGE, 3))))["params"])
    return {
        "vit_forward": [params, images],
        "vit_forward_relu": [params, images],
        "vit_train_step": [params, {"count": "s32[]", "mu": params, "nu": params}, images, labels],
        "rnn_scan": [f"f32[{HIDDEN},{HIDDEN}]", f"f32[{BATCH},{HIDDEN}]", f"f32[{STEPS},{BATCH},{HIDDEN}]"],
        "power_fori": [f"f32[{HIDDEN},{HIDDEN}]", f"f32[{HIDDEN}]"],
        "batched_newton": [f"f32[{BATCH * 4}]"],
    }


HLOVIZ_ARGS = _shapes()
