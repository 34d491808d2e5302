"""Held out (twenty-sixth round, TensorFlow): written at the start of the round, before any
change, to check the overview on models nobody here had captured.

* ``resnet_v2_lion_step``: ``keras.applications.ResNet50V2`` (64×64 inputs, ten classes, no
  weights) trained one step with ``keras.optimizers.Lion`` and a sparse cross-entropy.
* ``ftrl_text_step``: a functional Keras text classifier — ``Embedding``, a
  ``Bidirectional(GRU)`` returning sequences, a self ``keras.layers.Attention``,
  ``GlobalMaxPooling1D``, a ``Dense`` head — trained with ``Ftrl``.

Capture with ``hloviz dump benchmarks/heldout/round26.py:resnet_v2_lion_step --arg
"f32[4,64,64,3]" --arg "s32[4]" -o DIR`` and ``…:ftrl_text_step``: ``--arg "s32[8,20]" --arg
"s32[8]"``.
"""
import keras
import tensorflow as tf

_resnet = keras.applications.ResNet50V2(weights=None, input_shape=(64, 64, 3), classes=10)
_lion = keras.optimizers.Lion(1e-4)
_lion.build(_resnet.trainable_variables)
_sparse = keras.losses.SparseCategoricalCrossentropy()


@tf.function(jit_compile=True)
def resnet_v2_lion_step(images, labels):
    with tf.GradientTape() as tape:
        loss = _sparse(labels, _resnet(images, training=True))
    grads = tape.gradient(loss, _resnet.trainable_variables)
    _lion.apply_gradients(zip(grads, _resnet.trainable_variables))
    return loss


def _text() -> keras.Model:
    tokens = keras.Input((20,), dtype="int32")
    x = keras.layers.Embedding(300, 16, name="embed")(tokens)
    x = keras.layers.Bidirectional(keras.layers.GRU(12, return_sequences=True), name="bigru")(x)
    x = keras.layers.Attention(name="self_attention")([x, x])
    x = keras.layers.GlobalMaxPooling1D(name="max_pool")(x)
    return keras.Model(tokens, keras.layers.Dense(4, name="head")(x), name="text")


_text_model = _text()
_ftrl = keras.optimizers.Ftrl(0.05)
_ftrl.build(_text_model.trainable_variables)
_logits_loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)


@tf.function(jit_compile=True)
def ftrl_text_step(tokens, labels):
    with tf.GradientTape() as tape:
        loss = _logits_loss(labels, _text_model(tokens, training=True))
    grads = tape.gradient(loss, _text_model.trainable_variables)
    _ftrl.apply_gradients(zip(grads, _text_model.trainable_variables))
    return loss
