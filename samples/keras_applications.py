"""Real Keras models, as users inspect them: MobileNetV2, ResNet50, InceptionV3, DenseNet121,
EfficientNetB0 and ConvNeXtTiny.

``tf.keras.applications`` with ``weights=None`` (random weights: XLA compiles the same program
either way, and nothing is downloaded), batch 1, 224×224×3 images (InceptionV3 75×75×3 and
DenseNet121 64×64×3, the smallest inputs they accept; EfficientNetB0 and ConvNeXtTiny 64×64×3:
the graph is the same at any size)::

    hloviz stats samples/keras_applications.py:mobilenet_v2 --by scope --depth 2
    hloviz show samples/keras_applications.py:resnet50

Saved captures of all six are in ``samples/captures/`` (no TensorFlow needed to read them).
"""

import functools

import tensorflow as tf

HLOVIZ_ARGS = {
    "mobilenet_v2": ["f32[1,224,224,3]"],
    "resnet50": ["f32[1,224,224,3]"],
    "inception_v3": ["f32[1,75,75,3]"],
    "densenet121": ["f32[1,64,64,3]"],
    "efficientnet_b0": ["f32[1,64,64,3]"],
    "convnext_tiny": ["f32[1,64,64,3]"],
}

_SHAPES = {"InceptionV3": (75, 75, 3), "DenseNet121": (64, 64, 3), "EfficientNetB0": (64, 64, 3),
           "ConvNeXtTiny": (64, 64, 3)}


@functools.cache
def _model(name: str) -> tf.keras.Model:
    # Built once, eagerly (tf.init_scope leaves the graph being traced): a traced function must
    # not create variables, and only this file's chosen model is built.
    with tf.init_scope():
        return getattr(tf.keras.applications, name)(weights=None, input_shape=_SHAPES.get(name, (224, 224, 3)))


@tf.function(jit_compile=True)
def mobilenet_v2(images):
    """MobileNetV2 (alpha 1.0, 224×224) inference: the class probabilities of ``images``."""
    return _model("MobileNetV2")(images, training=False)


@tf.function(jit_compile=True)
def resnet50(images):
    """ResNet50 inference: the class probabilities of ``images``."""
    return _model("ResNet50")(images, training=False)


@tf.function(jit_compile=True)
def inception_v3(images):
    """InceptionV3 inference: eleven ``mixed`` blocks whose layers are named ``conv2d_N``."""
    return _model("InceptionV3")(images, training=False)


@tf.function(jit_compile=True)
def densenet121(images):
    """DenseNet121 inference: four dense blocks of 6, 12, 24 and 16 layers."""
    return _model("DenseNet121")(images, training=False)


@tf.function(jit_compile=True)
def efficientnet_b0(images):
    """EfficientNetB0 inference: seven stages of MBConv blocks (``block2a_expand_conv``, ``block2b_se_excite``)."""
    return _model("EfficientNetB0")(images, training=False)


@tf.function(jit_compile=True)
def convnext_tiny(images):
    """ConvNeXtTiny inference: four stages of 3, 3, 9 and 3 blocks (``convnext_tiny_stage_2_block_4_depthwise_conv``)."""
    return _model("ConvNeXtTiny")(images, training=False)
