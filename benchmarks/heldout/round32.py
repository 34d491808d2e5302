"""Held out (thirty-second round, TensorFlow): written after this session's change to fitting
(``cut._deepen`` going past a training step's loss), and not looked at while it was made.

* ``inception_step``: ``keras.applications.InceptionV3`` (``weights=None``) on 75×75 images,
  trained with Adam.
* ``nested_step``: a functional model around a ``keras.Sequential`` backbone of three
  conv-batch-norm stages and a two-layer head, trained with Nesterov SGD.

Capture with ``hloviz dump benchmarks/heldout/round32.py:inception_step --arg "f32[2,75,75,3]"
--arg "s32[2]" -o DIR`` and ``…:nested_step --arg "f32[4,32,32,3]" --arg "s32[4]" -o DIR``.
"""
import keras
import tensorflow as tf

_xent = keras.losses.SparseCategoricalCrossentropy(from_logits=False)

_inception = keras.applications.InceptionV3(weights=None, input_shape=(75, 75, 3), classes=5)
_adam = keras.optimizers.Adam(1e-3)
_adam.build(_inception.trainable_variables)


@tf.function(jit_compile=True)
def inception_step(images, labels):
    with tf.GradientTape() as tape:
        loss = _xent(labels, _inception(images, training=True))
    grads = tape.gradient(loss, _inception.trainable_variables)
    _adam.apply_gradients(zip(grads, _inception.trainable_variables))
    return loss


def _stage(filters, name):
    return keras.Sequential([
        keras.layers.Conv2D(filters, 3, padding="same", use_bias=False),
        keras.layers.BatchNormalization(),
        keras.layers.ReLU(),
        keras.layers.MaxPooling2D(),
    ], name=name)


_backbone = keras.Sequential([_stage(16, "stage1"), _stage(32, "stage2"), _stage(64, "stage3")], name="backbone")
_inputs = keras.Input((32, 32, 3))
_features = keras.layers.GlobalAveragePooling2D(name="pool")(_backbone(_inputs))
_hidden = keras.layers.Dense(64, activation="relu", name="hidden")(_features)
_nested = keras.Model(_inputs, keras.layers.Dense(10, activation="softmax", name="classes")(_hidden), name="nested")
_sgd = keras.optimizers.SGD(0.05, momentum=0.9, nesterov=True)
_sgd.build(_nested.trainable_variables)


@tf.function(jit_compile=True)
def nested_step(images, labels):
    with tf.GradientTape() as tape:
        loss = _xent(labels, _nested(images, training=True))
    grads = tape.gradient(loss, _nested.trainable_variables)
    _sgd.apply_gradients(zip(grads, _nested.trainable_variables))
    return loss
