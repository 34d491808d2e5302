"""One small Keras CNN trained by two optimizers, and MobileNetV3Small at its smallest input.

* ``train_step_adam(images, labels)`` and ``train_step_sgd(images, labels)``: one training step
  of the same CNN (a 3×3 ``Conv2D``, a ``DepthwiseConv2D``, a 1×1 ``Conv2D``, ``Flatten``,
  ``Dense``; batch 4, 16×16×3 images), the one with
  Adam, the other with plain SGD. The forward and backward passes are the same program; only the
  update differs, so a comparison of the two must find every layer's forward and backward work
  unchanged. XLA rebuilds weight gradients (``Conv2DBackpropFilter``) as convolutions without an
  op name, which hloviz places by what they compute: with SGD the 1×1 convolution's gradient is
  read by nothing but the update (``sgd/…``), with Adam by the update's fusions.
* ``mobilenet_v3_small(images)``: ``keras.applications.MobileNetV3Small`` (``weights=None``,
  32×32×3, batch 1) inference: squeeze-and-excite blocks whose constants XLA merges across layers.
* ``mobilenet_train_sgd`` / ``mobilenet_train_adam(images, labels)``: one training step of a
  MobileNetV3Small (10 classes, 32×32×3, batch 2) with SGD / Adam: 54 weight gradients, 26 of
  which XLA leaves without an op name, and batch-norm statistics recomputed inside fusions.

The saved captures were made from this file with TensorFlow 2.21::

    hloviz dump samples/keras_optimizers.py:train_step_adam -o samples/captures/cnn_adam
    hloviz dump samples/keras_optimizers.py:train_step_sgd -o samples/captures/cnn_sgd
    hloviz dump samples/keras_optimizers.py:mobilenet_v3_small -o samples/captures/mobilenet_v3_small
    hloviz passes samples/keras_optimizers.py:train_step_sgd --save build/cnn_sgd_passes
    hloviz dump samples/keras_optimizers.py:mobilenet_train_sgd -o samples/captures/mobilenet_train_sgd
    hloviz dump samples/keras_optimizers.py:mobilenet_train_adam -o samples/captures/mobilenet_train_adam

(the passes' snapshots are ``samples/captures/passes/cnn_sgd.tar.xz``). The two MobileNetV3Small
training captures keep their HLO gzipped and, of ``capture.json``, what the tests read (the TF
graph's ops and edges and the source map, 2 MB, are left out: the op statuses then come from the
HLO's op names alone).
"""

import functools

import keras
import tensorflow as tf

HLOVIZ_ARGS = {
    "train_step_adam": ["f32[4,16,16,3]", "s32[4]"],
    "train_step_sgd": ["f32[4,16,16,3]", "s32[4]"],
    "mobilenet_v3_small": ["f32[1,32,32,3]"],
    "mobilenet_train_sgd": ["f32[2,32,32,3]", "s32[2]"],
    "mobilenet_train_adam": ["f32[2,32,32,3]", "s32[2]"],
}

keras.utils.set_random_seed(0)

cnn = keras.Sequential([
    keras.Input((16, 16, 3)),
    keras.layers.Conv2D(8, 3, activation="relu", name="conv1"),
    keras.layers.DepthwiseConv2D(3, activation="relu", name="dw2"),
    keras.layers.Conv2D(16, 1, activation="relu", name="pw2"),
    keras.layers.Flatten(name="flatten"),
    keras.layers.Dense(10, name="logits"),
], name="cnn")
loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
adam = keras.optimizers.Adam(learning_rate=1e-3)
adam.build(cnn.trainable_variables)
sgd = keras.optimizers.SGD(learning_rate=1e-2)
sgd.build(cnn.trainable_variables)


def _step(optimizer, images, labels):
    with tf.GradientTape() as tape:
        loss = loss_fn(labels, cnn(images, training=True))
    # under tf.function the loss is a tf.Tensor, which tape.gradient takes
    grads = tape.gradient(loss, cnn.trainable_variables)  # pyright: ignore[reportCallIssue, reportArgumentType]
    optimizer.apply_gradients(zip(grads, cnn.trainable_variables))
    return loss


@tf.function(jit_compile=True)
def train_step_adam(images, labels):
    """Forward, loss, gradients and one Adam update; returns the loss."""
    return _step(adam, images, labels)


@tf.function(jit_compile=True)
def train_step_sgd(images, labels):
    """Forward, loss, gradients and one SGD update; returns the loss."""
    return _step(sgd, images, labels)


@functools.cache
def _mobilenet() -> tf.keras.Model:
    with tf.init_scope():  # built once, eagerly: a traced function must not create variables
        return tf.keras.applications.MobileNetV3Small(weights=None, input_shape=(32, 32, 3))


@tf.function(jit_compile=True)
def mobilenet_v3_small(images):
    """MobileNetV3Small inference: the class probabilities of ``images``."""
    return _mobilenet()(images, training=False)


@functools.cache
def _trained():
    """MobileNetV3Small for 10 classes with an SGD and an Adam optimizer, built once, eagerly."""
    with tf.init_scope():
        model = tf.keras.applications.MobileNetV3Small(weights=None, input_shape=(32, 32, 3), classes=10)
        plain, moments = keras.optimizers.SGD(1e-2), keras.optimizers.Adam(1e-3)
        plain.build(model.trainable_variables)
        moments.build(model.trainable_variables)
    return model, plain, moments


def _mobilenet_step(optimizer, images, labels):
    model = _trained()[0]
    with tf.GradientTape() as tape:
        loss = keras.losses.SparseCategoricalCrossentropy()(labels, model(images, training=True))
    grads = tape.gradient(loss, model.trainable_variables)  # pyright: ignore[reportCallIssue, reportArgumentType]
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


@tf.function(jit_compile=True)
def mobilenet_train_sgd(images, labels):
    """One MobileNetV3Small training step with SGD; returns the loss."""
    return _mobilenet_step(_trained()[1], images, labels)


@tf.function(jit_compile=True)
def mobilenet_train_adam(images, labels):
    """One MobileNetV3Small training step with Adam; returns the loss."""
    return _mobilenet_step(_trained()[2], images, labels)
