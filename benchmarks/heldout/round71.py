"""Round 71 (held out, TF): a loop of steps of a sequence model, written after the changes that
open a loop of steps' model first and not looked at while building them.

* ``text_steps``: ``for step in tf.range(2)`` around a GradientTape step of a functional
  Conv1D text classifier (Embedding, Conv1D, LayerNormalization, GlobalAveragePooling1D, Dense)
  with RMSprop, the batch taken by ``tf.gather``; the mean loss returned.

Capture with ``hloviz dump benchmarks/heldout/round71.py:text_steps --arg "s32[2,4,12]" --arg "s32[2,4]" -o DIR``.
"""
import keras
import tensorflow as tf

_tokens = keras.Input((12,), dtype="int32")
_h = keras.layers.Embedding(50, 8, name="embed")(_tokens)
_h = keras.layers.Conv1D(16, 3, activation="relu", name="conv")(_h)
_h = keras.layers.LayerNormalization(name="ln")(_h)
_h = keras.layers.GlobalAveragePooling1D(name="pool")(_h)
_y = keras.layers.Dense(3, name="out")(_h)
_model = keras.Model(_tokens, _y, name="texter")
_rms = keras.optimizers.RMSprop(1e-3)
_rms.build(_model.trainable_variables)
_xent = keras.losses.SparseCategoricalCrossentropy(from_logits=True)


@tf.function(jit_compile=True)
def text_steps(tokens, labels):
    total = tf.constant(0.0)
    for step in tf.range(2):
        with tf.GradientTape() as tape:
            loss = _xent(tf.gather(labels, step), _model(tf.gather(tokens, step), training=True))
        _rms.apply_gradients(zip(tape.gradient(loss, _model.trainable_variables), _model.trainable_variables))
        total += loss
    return total / 2.0
