"""Held out (sixty-second round, TensorFlow): written before any change it might lead to, run
through every command.

* ``masked_gru_step``: a text classifier — ``Embedding(mask_zero=True)`` whose mask reaches a
  ``Bidirectional(GRU)`` (masked steps carry the state: selects inside the recurrence), a
  ``Dense`` head — trained one step by ``RMSprop(centered=True)`` with a global ``clipnorm``.
* ``conv1d_autoencoder``: ``Conv1D`` with ``strides=2``, ``Conv1DTranspose`` back up,
  ``LayerNormalization`` and ``tf.clip_by_value`` on the reconstruction (inference).

Capture with ``hloviz dump benchmarks/heldout/round62.py:masked_gru_step --arg "s32[4,10]" --arg
"s32[4]" -o DIR`` and ``… :conv1d_autoencoder --arg "f32[2,32,4]" -o DIR``.
"""
import keras
import tensorflow as tf

_tokens = keras.Input((10,), dtype="int32")
_h = keras.layers.Embedding(50, 8, mask_zero=True, name="embed")(_tokens)
_h = keras.layers.Bidirectional(keras.layers.GRU(6), name="bigru")(_h)
_logits = keras.layers.Dense(3, name="head")(_h)
_classifier = keras.Model(_tokens, _logits, name="masked_gru")
_opt = keras.optimizers.RMSprop(1e-3, centered=True, clipnorm=1.0)
_loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)


@tf.function(jit_compile=True)
def masked_gru_step(tokens, labels):
    with tf.GradientTape() as tape:
        loss = _loss(labels, _classifier(tokens, training=True))
    grads = tape.gradient(loss, _classifier.trainable_variables)
    _opt.apply_gradients(zip(grads, _classifier.trainable_variables))
    return loss


_auto = keras.Sequential([keras.Input((32, 4)),
                          keras.layers.Conv1D(8, 3, strides=2, padding="same", activation="relu", name="enc"),
                          keras.layers.LayerNormalization(name="norm"),
                          keras.layers.Conv1DTranspose(4, 3, strides=2, padding="same", name="dec")], name="auto")


@tf.function(jit_compile=True)
def conv1d_autoencoder(x):
    return tf.clip_by_value(_auto(x), -1.0, 1.0)
