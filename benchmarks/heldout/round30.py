"""Held out (thirtieth round, TensorFlow): written after this session's changes (round 29), and
not looked at while they were made.

* ``effnet_v2_b1_step``: ``keras.applications.EfficientNetV2B1`` (``weights=None``) on 64×64
  images, trained with Adam.
* ``lstm_lm_step``: a ``keras.Sequential`` language model — ``Embedding``, ``LSTM`` returning
  sequences, ``TimeDistributed(Dense)`` — trained with SGD and ``clipnorm``.

Capture with ``hloviz dump benchmarks/heldout/round30.py:effnet_v2_b1_step --arg "f32[2,64,64,3]"
--arg "s32[2]" -o DIR`` and ``…:lstm_lm_step --arg "s32[4,10]" --arg "s32[4,10]" -o DIR``.
"""
import keras
import tensorflow as tf

_effnet = keras.applications.EfficientNetV2B1(weights=None, input_shape=(64, 64, 3), classes=5)
_adam = keras.optimizers.Adam(1e-3)
_adam.build(_effnet.trainable_variables)
_xent = keras.losses.SparseCategoricalCrossentropy(from_logits=False)


@tf.function(jit_compile=True)
def effnet_v2_b1_step(images, labels):
    with tf.GradientTape() as tape:
        loss = _xent(labels, _effnet(images, training=True))
    grads = tape.gradient(loss, _effnet.trainable_variables)
    _adam.apply_gradients(zip(grads, _effnet.trainable_variables))
    return loss


_lm = keras.Sequential([
    keras.Input((10,), dtype="int32"),
    keras.layers.Embedding(200, 24, name="tokens"),
    keras.layers.LSTM(32, return_sequences=True, name="lstm"),
    keras.layers.TimeDistributed(keras.layers.Dense(200), name="logits"),
], name="lstm_lm")
_sgd = keras.optimizers.SGD(0.1, clipnorm=1.0)
_sgd.build(_lm.trainable_variables)
_seq_xent = keras.losses.SparseCategoricalCrossentropy(from_logits=True)


@tf.function(jit_compile=True)
def lstm_lm_step(tokens, targets):
    with tf.GradientTape() as tape:
        loss = _seq_xent(targets, _lm(tokens, training=True))
    grads = tape.gradient(loss, _lm.trainable_variables)
    _sgd.apply_gradients(zip(grads, _lm.trainable_variables))
    return loss
