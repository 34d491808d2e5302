"""Round 81 (held out, JAX): models written the way users write them, not looked at while building
anything.

* ``bn_clipvjp_multisteps_step``: a Flax ``linen`` CNN — two stages of ``nn.Conv`` →
  ``nn.BatchNorm`` (training mode: ``mutable=["batch_stats"]``, the running statistics returned)
  → ``clipped_relu``, a ``jax.custom_vjp`` ReLU whose backward rule clips the incoming cotangent
  to ``[-1, 1]`` (a per-activation gradient clip), with ``nn.max_pool`` after the first, a mean
  over the pixels and an ``nn.Dense`` head. Label-smoothed cross-entropy
  (``optax.smooth_labels`` + ``optax.softmax_cross_entropy``), ``jax.value_and_grad(has_aux=True)``;
  one step of ``optax.MultiSteps(optax.chain(optax.clip_by_global_norm(1.0),
  optax.adamw(warmup_cosine_decay_schedule)), every_k_schedule=2)`` (the update applied every
  second call: a ``lax.cond`` inside the optimizer).
* ``scan_lstm_freeze_step``: a character language model — ``nn.Embed``, an ``nn.LSTMCell``
  scanned over time by ``nn.scan`` (``variable_broadcast="params"``, ``split_rngs={"params":
  False}``, ``in_axes=1``/``out_axes=1``), ``nn.Dropout``, an ``nn.Dense`` vocabulary head — in a
  ``flax.training.train_state.TrainState`` with ``optax.nadamw``. The step freezes the embedding
  for the first ``FREEZE_STEPS`` steps: ``jax.lax.cond(state.step < FREEZE_STEPS, …)`` zeroes the
  embedding's gradient or passes it through, then ``state.apply_gradients``. The dropout key is
  ``jax.random.fold_in(key, state.step)``.

Capture with ``hloviz dump benchmarks/heldout/round81_jax.py:NAME -o DIR`` (the arguments are the
objects themselves, ``HLOVIZ_ARGS``).
"""
import flax.linen as nn
import jax
import jax.numpy as jnp
import optax
from flax.training import train_state

# --- BatchNorm CNN, custom_vjp gradient-clipping ReLU, MultiSteps(clip + AdamW) -------------------

CLASSES = 6


@jax.custom_vjp
def clipped_relu(x):
    return jnp.maximum(x, 0.0)


def _clipped_relu_fwd(x):
    return jnp.maximum(x, 0.0), x


def _clipped_relu_bwd(x, g):
    return (jnp.where(x > 0, jnp.clip(g, -1.0, 1.0), 0.0),)


clipped_relu.defvjp(_clipped_relu_fwd, _clipped_relu_bwd)


class BNNet(nn.Module):
    @nn.compact
    def __call__(self, x, train: bool):
        x = nn.Conv(16, (3, 3), use_bias=False, name="conv1")(x)
        x = nn.BatchNorm(use_running_average=not train, momentum=0.9, name="bn1")(x)
        x = clipped_relu(x)
        x = nn.max_pool(x, (2, 2), strides=(2, 2))
        x = nn.Conv(32, (3, 3), use_bias=False, name="conv2")(x)
        x = nn.BatchNorm(use_running_average=not train, momentum=0.9, name="bn2")(x)
        x = clipped_relu(x)
        x = x.mean(axis=(1, 2))
        return nn.Dense(CLASSES, name="head")(x)


_bn_net = BNNet()
_bn_vars = _bn_net.init(jax.random.PRNGKey(0), jnp.zeros((1, 16, 16, 3)), train=False)
_bn_schedule = optax.warmup_cosine_decay_schedule(0.0, 1e-3, warmup_steps=10, decay_steps=500)
_bn_tx = optax.MultiSteps(optax.chain(optax.clip_by_global_norm(1.0), optax.adamw(_bn_schedule, weight_decay=1e-4)),
                          every_k_schedule=2)


@jax.jit
def bn_clipvjp_multisteps_step(params, batch_stats, opt_state, images, labels):
    def loss_fn(p):
        logits, updates = _bn_net.apply({"params": p, "batch_stats": batch_stats}, images, train=True,
                                        mutable=["batch_stats"])
        targets = optax.smooth_labels(jax.nn.one_hot(labels, CLASSES), 0.1)
        return optax.softmax_cross_entropy(logits, targets).mean(), updates["batch_stats"]

    (loss, new_stats), grads = jax.value_and_grad(loss_fn, has_aux=True)(params)
    updates, opt_state = _bn_tx.update(grads, opt_state, params)
    params = optax.apply_updates(params, updates)
    return params, new_stats, opt_state, loss


# --- nn.scan LSTM language model, embedding frozen by lax.cond on the step, NAdamW ---------------

VOCAB = 40
SEQ = 16
EMBED = 24
HIDDEN = 48
FREEZE_STEPS = 100


class CharLM(nn.Module):
    @nn.compact
    def __call__(self, ids, train: bool):
        x = nn.Embed(VOCAB, EMBED, name="embed")(ids)
        ScanLSTM = nn.scan(nn.LSTMCell, variable_broadcast="params", split_rngs={"params": False},
                           in_axes=1, out_axes=1)
        lstm = ScanLSTM(HIDDEN, name="lstm")
        carry = lstm.initialize_carry(jax.random.PRNGKey(0), x[:, 0].shape)
        _, h = lstm(carry, x)
        h = nn.Dropout(0.2, deterministic=not train)(h)
        return nn.Dense(VOCAB, name="vocab")(h)


_lm = CharLM()
_lm_params = _lm.init(jax.random.PRNGKey(1), jnp.zeros((1, SEQ), jnp.int32), train=False)["params"]
_lm_state = train_state.TrainState.create(apply_fn=_lm.apply, params=_lm_params,
                                          tx=optax.nadamw(2e-3, weight_decay=1e-4))


@jax.jit
def scan_lstm_freeze_step(state, tokens, key):
    dropout_key = jax.random.fold_in(key, state.step)

    def loss_fn(p):
        logits = state.apply_fn({"params": p}, tokens[:, :-1], train=True, rngs={"dropout": dropout_key})
        return optax.softmax_cross_entropy_with_integer_labels(logits, tokens[:, 1:]).mean()

    loss, grads = jax.value_and_grad(loss_fn)(state.params)
    grads = jax.lax.cond(state.step < FREEZE_STEPS,
                         lambda g: {**g, "embed": jax.tree_util.tree_map(jnp.zeros_like, g["embed"])},
                         lambda g: g, grads)
    state = state.apply_gradients(grads=grads)
    return state, loss


HLOVIZ_ARGS = {
    "bn_clipvjp_multisteps_step": [_bn_vars["params"], _bn_vars["batch_stats"], _bn_tx.init(_bn_vars["params"]),
                                   jax.random.normal(jax.random.PRNGKey(2), (8, 16, 16, 3)),
                                   jax.random.randint(jax.random.PRNGKey(3), (8,), 0, CLASSES)],
    "scan_lstm_freeze_step": [_lm_state, jax.random.randint(jax.random.PRNGKey(4), (4, SEQ + 1), 0, VOCAB),
                              jax.random.PRNGKey(5)],
}
