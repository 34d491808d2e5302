"""Held out (fourteenth round): models written the way users write them, none captured here
before, to check the overview (issue 33) after a TF op outside the model became one box, chains
stopped at scope borders and a step's gradient clipping became the optimizer's. Nothing here was
looked at while those were built.

Capture each with ``hloviz dump benchmarks/heldout/round14.py:NAME --arg SPEC … -o DIR``:

* ``accumulate_step`` (a Keras MLP classifier trained with gradients accumulated into
  variables of their own over micro-batches and applied with Adam every call; a
  ``tf.cond`` on the step count decides whether to apply): ``--arg "f32[16,20]" --arg "s32[16]"``
* ``greedy_decode`` (a small Keras GRU decoder run for 12 steps in a ``tf.while_loop``, each
  step's argmax fed back as the next input, inference): ``--arg "s32[4]"``

and, in JAX, ``round14_jax.py`` (a transformer in plain JAX with ``jax.named_scope`` per
block); then ``python benchmarks/overview_bench.py --no-diffs --model DIR``.
"""
import keras
import tensorflow as tf

_mlp = keras.Sequential([keras.Input((20,)), keras.layers.Dense(64, activation="relu", name="hidden_1"),
                         keras.layers.Dropout(0.1, name="drop"), keras.layers.Dense(64, activation="relu", name="hidden_2"),
                         keras.layers.Dense(5, name="logits")], name="mlp")
_opt = keras.optimizers.Adam(1e-3)
_opt.build(_mlp.trainable_variables)
_accum = [tf.Variable(tf.zeros_like(v), trainable=False, name=f"accum_{i}") for i, v in enumerate(_mlp.trainable_variables)]
_count = tf.Variable(0, dtype=tf.int32, trainable=False, name="micro_steps")
_loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
MICRO = 4


@tf.function(jit_compile=True)
def accumulate_step(x, y):
    with tf.GradientTape() as tape:
        loss = _loss(y, _mlp(x, training=True)) / MICRO
    grads = tape.gradient(loss, _mlp.trainable_variables)
    with tf.name_scope("accumulate"):
        for a, g in zip(_accum, grads):
            a.assign_add(g)
    _count.assign_add(1)

    def apply():
        _opt.apply_gradients(zip([a.read_value() for a in _accum], _mlp.trainable_variables))
        for a in _accum:
            a.assign(tf.zeros_like(a))
        return tf.constant(True)

    applied = tf.cond(_count % MICRO == 0, apply, lambda: tf.constant(False))
    return loss, applied


VOCAB, HIDDEN = 50, 32
_embed = keras.layers.Embedding(VOCAB, 16, name="embed")
_gru = keras.layers.GRUCell(HIDDEN, name="gru")
_proj = keras.layers.Dense(VOCAB, name="proj")
_embed.build((None,))
_gru.build((None, 16))
_proj.build((None, HIDDEN))


@tf.function(jit_compile=True)
def greedy_decode(start):
    def body(i, token, state, out):
        h, [state] = _gru(_embed(token), [state])
        token = tf.argmax(_proj(h), axis=-1, output_type=tf.int32)
        return i + 1, token, state, out.write(i, token)

    out = tf.TensorArray(tf.int32, size=12)
    _, _, _, out = tf.while_loop(lambda i, *_: i < 12, body,
                                 (tf.constant(0), start, tf.zeros([tf.shape(start)[0], HIDDEN]), out))
    return tf.transpose(out.stack())
