"""Held out (thirty-first round, TensorFlow): written at the start of the session, while its
first change (fitting past a training step's loss, ``cut._deepen``) was drafted, and drawn only
after it: what the session changes, on models nobody here drew before.

* ``resnet50_step``: ``keras.applications.ResNet50`` (``weights=None``) on 64×64 images,
  trained with SGD and momentum — its stages of bottlenecks, ×3/×4/×6/×3.
* ``densenet169_step``: ``keras.applications.DenseNet169`` on 64×64 images, trained with RMSprop.
* ``vgg16``: ``keras.applications.VGG16`` inference on 64×64 images.

Capture with ``hloviz dump benchmarks/heldout/round31.py:resnet50_step --arg "f32[2,64,64,3]"
--arg "s32[2]" -o DIR`` (``densenet169_step`` the same) and ``…:vgg16 --arg "f32[2,64,64,3]" -o DIR``.
"""
import keras
import tensorflow as tf

_xent = keras.losses.SparseCategoricalCrossentropy(from_logits=False)

_resnet = keras.applications.ResNet50(weights=None, input_shape=(64, 64, 3), classes=5)
_sgd = keras.optimizers.SGD(0.01, momentum=0.9)
_sgd.build(_resnet.trainable_variables)


@tf.function(jit_compile=True)
def resnet50_step(images, labels):
    with tf.GradientTape() as tape:
        loss = _xent(labels, _resnet(images, training=True))
    grads = tape.gradient(loss, _resnet.trainable_variables)
    _sgd.apply_gradients(zip(grads, _resnet.trainable_variables))
    return loss


_densenet = keras.applications.DenseNet169(weights=None, input_shape=(64, 64, 3), classes=5)
_rmsprop = keras.optimizers.RMSprop(1e-3)
_rmsprop.build(_densenet.trainable_variables)


@tf.function(jit_compile=True)
def densenet169_step(images, labels):
    with tf.GradientTape() as tape:
        loss = _xent(labels, _densenet(images, training=True))
    grads = tape.gradient(loss, _densenet.trainable_variables)
    _rmsprop.apply_gradients(zip(grads, _densenet.trainable_variables))
    return loss


_vgg = keras.applications.VGG16(weights=None, input_shape=(64, 64, 3), classes=5)


@tf.function(jit_compile=True)
def vgg16(images):
    return _vgg(images, training=False)
