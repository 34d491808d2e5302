"""Held out (second round): Keras applications and a training step nobody here looked at
while the overview was built. Capture each with, e.g.,
``hloviz dump benchmarks/heldout/apps_round2.py:xception --arg "f32[1,128,128,3]" -o DIR``
(``nasnet``: ``f32[1,96,96,3]``; ``v2b0_step``: ``--arg "f32[2,64,64,3]" --arg "s32[2]"``), then
``python benchmarks/overview_bench.py --no-diffs --model DIR``. Figures:
benchmarks/results/overview_bench.txt.
"""
import keras
import tensorflow as tf

_xception = keras.applications.Xception(weights=None, input_shape=(128, 128, 3), classes=10)
_nasnet = keras.applications.NASNetMobile(weights=None, input_shape=(96, 96, 3), classes=10)


@tf.function(jit_compile=True)
def xception(x):
    return _xception(x, training=False)


@tf.function(jit_compile=True)
def nasnet(x):
    return _nasnet(x, training=False)


_v2 = keras.applications.EfficientNetV2B0(weights=None, input_shape=(64, 64, 3), classes=5)
_opt = keras.optimizers.SGD(0.01, momentum=0.9)
_loss = keras.losses.SparseCategoricalCrossentropy()


@tf.function(jit_compile=True)
def v2b0_step(x, y):
    with tf.GradientTape() as tape:
        loss = _loss(y, _v2(x, training=True))
    grads = tape.gradient(loss, _v2.trainable_variables)
    _opt.apply_gradients(zip(grads, _v2.trainable_variables))
    return loss
