"""Held out (forty-sixth round, TensorFlow): large Keras applications nobody here had drawn,
captured to measure the overview's goals (boxes a column, canvas, cover, crossings, seconds) on
models the rules were not tuned on.

* ``resnet101_step``: ResNet101 (33 bottlenecks: 3, 4, 23, 3) trained one step by Adam with a
  ``CosineDecay`` schedule.
* ``mobilenet_v3_large``: MobileNetV3Large, ``minimalistic=False``, inference.

Capture with ``hloviz dump benchmarks/heldout/round46.py:resnet101_step --arg "f32[2,64,64,3]"
--arg "s32[2]" -o DIR`` and ``hloviz dump benchmarks/heldout/round46.py:mobilenet_v3_large --arg
"f32[1,96,96,3]" -o DIR``.
"""
import keras
import tensorflow as tf

_regnet = keras.applications.ResNet101(weights=None, input_shape=(64, 64, 3), classes=7)
_adam = keras.optimizers.Adam(keras.optimizers.schedules.CosineDecay(1e-3, 1000))
_adam.build(_regnet.trainable_variables)
_xent = keras.losses.SparseCategoricalCrossentropy(from_logits=False)


@tf.function(jit_compile=True)
def resnet101_step(images, labels):
    with tf.GradientTape() as tape:
        loss = _xent(labels, _regnet(images, training=True))
    grads = tape.gradient(loss, _regnet.trainable_variables)
    _adam.apply_gradients(zip(grads, _regnet.trainable_variables))
    return loss


_mnv3 = keras.applications.MobileNetV3Large(weights=None, input_shape=(96, 96, 3), classes=10,
                                            include_preprocessing=True)


@tf.function(jit_compile=True)
def mobilenet_v3_large(images):
    return _mnv3(images, training=False)
