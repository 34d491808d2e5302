"""Two real Keras models, as users inspect them: MobileNetV2 and ResNet50 inference.

``tf.keras.applications`` with ``weights=None`` (random weights: XLA compiles the same program
either way, and nothing is downloaded), batch 1, 224×224×3 images::

    hloviz stats samples/keras_applications.py:mobilenet_v2 --by scope --depth 2
    hloviz show samples/keras_applications.py:resnet50

Saved captures of both are in ``samples/captures/`` (no TensorFlow needed to read them).
"""

import functools

import tensorflow as tf

HLOVIZ_ARGS = {
    "mobilenet_v2": ["f32[1,224,224,3]"],
    "resnet50": ["f32[1,224,224,3]"],
}


@functools.cache
def _model(name: str) -> tf.keras.Model:
    # Built once, eagerly (tf.init_scope leaves the graph being traced): a traced function must
    # not create variables, and only this file's chosen model is built.
    with tf.init_scope():
        return getattr(tf.keras.applications, name)(weights=None, input_shape=(224, 224, 3))


@tf.function(jit_compile=True)
def mobilenet_v2(images):
    """MobileNetV2 (alpha 1.0, 224×224) inference: the class probabilities of ``images``."""
    return _model("MobileNetV2")(images, training=False)


@tf.function(jit_compile=True)
def resnet50(images):
    """ResNet50 inference: the class probabilities of ``images``."""
    return _model("ResNet50")(images, training=False)
