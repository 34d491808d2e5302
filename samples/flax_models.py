"""Two Flax (linen) models as a JAX user writes them, with their training steps (optax).

* ``cnn_forward(variables, images)``: a small CNN (``ConvBlock_0``/``ConvBlock_1``, each a
  ``Conv`` + ``BatchNorm`` + pooling, then an ``MLPHead`` of two ``Dense``) in inference mode;
* ``cnn_train_step(params, batch_stats, adam, images, labels)``: one Adam step of the same CNN
  (``BatchNorm`` in training mode, its statistics updated);
* ``transformer_train_step(params, adamw, tokens, targets)``: one AdamW step of a two-block
  transformer (``Embed``, ``Block_0``/``Block_1`` with ``MultiHeadDotProductAttention``,
  ``LayerNorm`` and an ``MlpBlock``), its parameters and optimizer state donated
  (``donate_argnums``), so XLA writes the updated values into the arguments' buffers.

Flax names every op after its module path (``ConvBlock_0/Conv_0/conv_general_dilated``), so
hloviz files buffers by layer as it does for Keras::

    hloviz memory samples/flax_models.py:transformer_train_step

The argument shapes (``HLOVIZ_ARGS``) are read from the models with ``jax.eval_shape`` when the
file is imported: nothing is allocated, and the optimizer states are plain dicts turned back into
optax's own states inside the step.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import flax.linen as nn
import jax
import jax.numpy as jnp
import optax

IMAGE, CLASSES, BATCH = (32, 32, 3), 10, 16
VOCAB, LENGTH, WIDTH, HEADS, LAYERS, SEQS = 256, 32, 64, 4, 2, 4


class ConvBlock(nn.Module):
    features: int

    @nn.compact
    def __call__(self, x, train: bool):
        x = nn.Conv(self.features, (3, 3))(x)
        x = nn.BatchNorm(use_running_average=not train, momentum=0.9)(x)
        return nn.max_pool(nn.relu(x), (2, 2), strides=(2, 2))


class MLPHead(nn.Module):
    hidden: int

    @nn.compact
    def __call__(self, x):
        x = nn.relu(nn.Dense(self.hidden)(x.reshape(x.shape[0], -1)))
        return nn.Dense(CLASSES)(x)


class CNN(nn.Module):
    @nn.compact
    def __call__(self, x, train: bool = False):
        x = ConvBlock(32)(x, train)
        x = ConvBlock(64)(x, train)
        return MLPHead(128)(x)


class MlpBlock(nn.Module):
    @nn.compact
    def __call__(self, x):
        return nn.Dense(WIDTH)(nn.gelu(nn.Dense(4 * WIDTH)(x)))


class Block(nn.Module):
    @nn.compact
    def __call__(self, x, mask):
        x = x + nn.MultiHeadDotProductAttention(num_heads=HEADS)(nn.LayerNorm()(x), mask=mask)
        return x + MlpBlock()(nn.LayerNorm()(x))


class Transformer(nn.Module):
    @nn.compact
    def __call__(self, tokens):
        x = nn.Embed(VOCAB, WIDTH)(tokens)
        mask = nn.make_causal_mask(tokens)
        for _ in range(LAYERS):
            x = Block()(x, mask)
        return nn.Dense(VOCAB)(nn.LayerNorm()(x))


cnn = CNN()
transformer = Transformer()
adam = optax.adam(1e-3)
adamw = optax.adamw(1e-3, weight_decay=1e-4)


def _adam_state(state: dict) -> Any:
    """optax's Adam state from the plain dict the step is given (count, mu, nu)."""
    return (optax.ScaleByAdamState(count=state["count"], mu=state["mu"], nu=state["nu"]), optax.EmptyState())


def _plain(state: Any) -> dict:
    return {"count": state[0].count, "mu": state[0].mu, "nu": state[0].nu}


def cnn_forward(variables, images):
    """The logits of a batch of images (BatchNorm uses its running averages)."""
    return cnn.apply(variables, images, train=False)


@jax.jit
def cnn_train_step(params, batch_stats, adam_state, images, labels):
    """One Adam step of the CNN: the loss, its gradient, the update; BatchNorm's statistics too."""
    def loss(p):
        logits, updates = cnn.apply({"params": p, "batch_stats": batch_stats}, images, train=True,
                                    mutable=["batch_stats"])
        return optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean(), updates

    (value, updates), grads = jax.value_and_grad(loss, has_aux=True)(params)
    steps, state = adam.update(grads, _adam_state(adam_state), params)
    return optax.apply_updates(params, steps), updates["batch_stats"], _plain(state), value


@partial(jax.jit, donate_argnums=(0, 1))
def transformer_train_step(params, adamw_state, tokens, targets):
    """One AdamW step of the transformer; the parameters and the optimizer state are donated."""
    def loss(p):
        logits = transformer.apply({"params": p}, tokens)
        return optax.softmax_cross_entropy_with_integer_labels(logits, targets).mean()

    value, grads = jax.value_and_grad(loss)(params)
    opt = (optax.ScaleByAdamState(count=adamw_state["count"], mu=adamw_state["mu"], nu=adamw_state["nu"]),
           optax.EmptyState(), optax.EmptyState())
    steps, state = adamw.update(grads, opt, params)
    return optax.apply_updates(params, steps), _plain(state), value


def _specs(tree: Any) -> Any:
    """The spec strings hloviz reads (``f32[3,3,3,32]``) for a tree of shapes."""
    def spec(s: Any) -> str:
        kind = {"float32": "f32", "int32": "s32"}[str(s.dtype)]
        return f"{kind}[{','.join(map(str, s.shape))}]"

    def plain(node: Any) -> Any:  # flax's FrozenDict / dicts → dicts of strings
        return {k: plain(v) for k, v in node.items()} if hasattr(node, "items") else spec(node)

    return plain(tree)


def _shapes() -> dict[str, list[Any]]:
    images, labels = f"f32[{BATCH},{','.join(map(str, IMAGE))}]", f"s32[{BATCH}]"
    tokens = f"s32[{SEQS},{LENGTH}]"
    key = jax.random.PRNGKey(0)
    cnn_vars = jax.eval_shape(lambda: cnn.init(key, jnp.zeros((1, *IMAGE)), train=False))
    cnn_params = _specs(cnn_vars["params"])
    tf_params = _specs(jax.eval_shape(lambda: transformer.init(key, jnp.zeros((1, LENGTH), jnp.int32)))["params"])
    return {
        "cnn_forward": [_specs(cnn_vars), images],
        "cnn_train_step": [cnn_params, _specs(cnn_vars["batch_stats"]),
                           {"count": "s32[]", "mu": cnn_params, "nu": cnn_params}, images, labels],
        "transformer_train_step": [tf_params, {"count": "s32[]", "mu": tf_params, "nu": tf_params}, tokens, tokens],
    }


HLOVIZ_ARGS = _shapes()
