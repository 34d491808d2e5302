"""Round 72 (held out, TF): a loop of steps whose model runs a loop of its own, written after
the changes that open a loop of steps' model first and not looked at while building them.

* ``gru_steps``: ``for step in tf.range(2)`` around a GradientTape step of a Keras GRU
  classifier (Embedding, GRU, Dense) with SGD; the GRU's recurrence is a ``while`` inside the
  loop's body, its gradient another.

Capture with ``hloviz dump benchmarks/heldout/round72.py:gru_steps --arg "s32[2,4,6]" --arg "s32[2,4]" -o DIR``.
"""
import keras
import tensorflow as tf

_model = keras.Sequential([
    keras.Input((6,), dtype="int32"),
    keras.layers.Embedding(30, 8, name="embed"),
    keras.layers.GRU(12, name="gru"),
    keras.layers.Dense(3, name="out"),
], name="reader")
_sgd = keras.optimizers.SGD(0.05)
_sgd.build(_model.trainable_variables)
_xent = keras.losses.SparseCategoricalCrossentropy(from_logits=True)


@tf.function(jit_compile=True)
def gru_steps(tokens, labels):
    total = tf.constant(0.0)
    for step in tf.range(2):
        with tf.GradientTape() as tape:
            loss = _xent(labels[step], _model(tokens[step], training=True))
        _sgd.apply_gradients(zip(tape.gradient(loss, _model.trainable_variables), _model.trainable_variables))
        total += loss
    return total
