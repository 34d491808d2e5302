"""Held out (twenty-ninth round, TensorFlow): written at the start of a session, before any change,
from models nobody here had drawn.

* ``nasnet``: ``keras.applications.NASNetMobile`` (``weights=None``) on 96×96 images, inference —
  cells of separable-convolution branches joined by ``Add`` and ``Concatenate``.
* ``mixed_precision_step``: a small Keras CNN under the ``mixed_float16`` policy, trained with
  ``LossScaleOptimizer(Adam)``: the loss scaled, the gradients unscaled and checked for
  infinities, the update applied only when they are finite.
* ``effnet_v2_step``: ``keras.applications.EfficientNetV2B0`` (``weights=None``) on 64×64 images
  — fused MBConv stages, then MBConv with squeeze-and-excitation — trained with SGD with Nesterov
  momentum. (RegNetX002 was meant; Keras 3.15 has none.)

Capture with ``hloviz dump benchmarks/heldout/round29.py:nasnet --arg "f32[1,96,96,3]" -o DIR``,
``…:mixed_precision_step --arg "f32[4,32,32,3]" --arg "s32[4]" -o DIR`` and
``…:effnet_v2_step --arg "f32[2,64,64,3]" --arg "s32[2]" -o DIR``.
"""
import keras
import tensorflow as tf

_nasnet = keras.applications.NASNetMobile(weights=None, input_shape=(96, 96, 3), classes=10)


@tf.function(jit_compile=True)
def nasnet(images):
    return _nasnet(images, training=False)


def _small_cnn() -> keras.Model:
    inputs = keras.Input((32, 32, 3))
    x = keras.layers.Conv2D(16, 3, padding="same", activation="relu", name="conv_a")(inputs)
    x = keras.layers.MaxPooling2D(name="pool_a")(x)
    x = keras.layers.Conv2D(32, 3, padding="same", activation="relu", name="conv_b")(x)
    x = keras.layers.GlobalAveragePooling2D(name="gap")(x)
    x = keras.layers.Dense(10, name="logits")(x)
    outputs = keras.layers.Activation("linear", dtype="float32", name="to_float32")(x)
    return keras.Model(inputs, outputs, name="mp_cnn")


keras.mixed_precision.set_global_policy("mixed_float16")
_mp_model = _small_cnn()
keras.mixed_precision.set_global_policy("float32")
_mp_opt = keras.mixed_precision.LossScaleOptimizer(keras.optimizers.Adam(1e-3))
_mp_opt.build(_mp_model.trainable_variables)
_xent = keras.losses.SparseCategoricalCrossentropy(from_logits=True)


@tf.function(jit_compile=True)
def mixed_precision_step(images, labels):
    with tf.GradientTape() as tape:
        loss = _xent(labels, _mp_model(images, training=True))
        scaled = _mp_opt.scale_loss(loss)
    grads = tape.gradient(scaled, _mp_model.trainable_variables)
    _mp_opt.apply_gradients(zip(grads, _mp_model.trainable_variables))
    return loss


_effnet = keras.applications.EfficientNetV2B0(weights=None, input_shape=(64, 64, 3), classes=10)
_nesterov = keras.optimizers.SGD(0.01, momentum=0.9, nesterov=True)
_nesterov.build(_effnet.trainable_variables)


@tf.function(jit_compile=True)
def effnet_v2_step(images, labels):
    with tf.GradientTape() as tape:
        loss = _xent(labels, _effnet(images, training=True))
    grads = tape.gradient(loss, _effnet.trainable_variables)
    _nesterov.apply_gradients(zip(grads, _effnet.trainable_variables))
    return loss
