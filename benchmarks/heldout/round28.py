"""Held out (twenty-eighth round, TensorFlow): written after this round's changes (rounds 26 and
27), and not looked at while they were made.

* ``mha_rmsprop_step``: a functional Keras encoder block — ``Embedding``, a residual
  ``MultiHeadAttention`` and a residual two-layer feed-forward, each followed by
  ``LayerNormalization`` — pooled and classified, trained with centered ``RMSprop`` with momentum.

Capture with ``hloviz dump benchmarks/heldout/round28.py:mha_rmsprop_step --arg "s32[4,12]" --arg
"s32[4]" -o DIR``.
"""
import keras
import tensorflow as tf


def _encoder() -> keras.Model:
    tokens = keras.Input((12,), dtype="int32")
    x = keras.layers.Embedding(100, 32, name="embed")(tokens)
    a = keras.layers.MultiHeadAttention(4, 8, name="mha")(x, x)
    x = keras.layers.LayerNormalization(name="ln_1")(x + a)
    f = keras.layers.Dense(64, activation="relu", name="ff_in")(x)
    f = keras.layers.Dense(32, name="ff_out")(f)
    x = keras.layers.LayerNormalization(name="ln_2")(x + f)
    x = keras.layers.GlobalAveragePooling1D(name="pool")(x)
    return keras.Model(tokens, keras.layers.Dense(3, name="classify")(x), name="encoder")


_model = _encoder()
_rmsprop = keras.optimizers.RMSprop(1e-3, momentum=0.9, centered=True)
_rmsprop.build(_model.trainable_variables)
_loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)


@tf.function(jit_compile=True)
def mha_rmsprop_step(tokens, labels):
    with tf.GradientTape() as tape:
        loss = _loss(labels, _model(tokens, training=True))
    grads = tape.gradient(loss, _model.trainable_variables)
    _rmsprop.apply_gradients(zip(grads, _model.trainable_variables))
    return loss
