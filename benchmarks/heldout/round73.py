"""Round 73 (held out, TF): a Keras application trained in a loop of steps, written after this
session's changes to loops of steps and not looked at while building them.

* ``mobilenet_steps``: ``for step in tf.range(2)`` around a GradientTape step of
  ``keras.applications.MobileNetV2`` (``weights=None``, 32×32 inputs, ``alpha=0.35``, 10
  classes) with SGD and momentum, the mean loss returned.

Capture with ``hloviz dump benchmarks/heldout/round73.py:mobilenet_steps --arg "f32[2,2,32,32,3]" --arg "s32[2,2]" -o DIR``.
"""
import keras
import tensorflow as tf

_net = keras.applications.MobileNetV2(input_shape=(32, 32, 3), alpha=0.35, weights=None, classes=10)
_sgd = keras.optimizers.SGD(0.01, momentum=0.9)
_sgd.build(_net.trainable_variables)
_xent = keras.losses.SparseCategoricalCrossentropy()


@tf.function(jit_compile=True)
def mobilenet_steps(images, labels):
    total = tf.constant(0.0)
    for step in tf.range(2):
        with tf.GradientTape() as tape:
            loss = _xent(labels[step], _net(images[step], training=True))
        _sgd.apply_gradients(zip(tape.gradient(loss, _net.trainable_variables), _net.trainable_variables))
        total += loss
    return total / 2.0
