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


def _step(model, opt):
    opt.build(model.trainable_variables)

    @tf.function(jit_compile=True)
    def step(images, labels):
        with tf.GradientTape() as tape:
            loss = _xent(labels, model(images, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss
    return step


resnet50_step = _step(keras.applications.ResNet50(weights=None, input_shape=(64, 64, 3), classes=5),
                      keras.optimizers.SGD(0.01, momentum=0.9))
densenet169_step = _step(keras.applications.DenseNet169(weights=None, input_shape=(64, 64, 3), classes=5),
                         keras.optimizers.RMSprop(1e-3))

_vgg = keras.applications.VGG16(weights=None, input_shape=(64, 64, 3), classes=5)


@tf.function(jit_compile=True)
def vgg16(images):
    return _vgg(images, training=False)
