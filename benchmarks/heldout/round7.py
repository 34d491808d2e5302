"""Held out (seventh round): the model issue 32 names and nobody here had captured, and a training
step written the way a Keras user writes one, to check ``show`` with its explorer's detail on
demand (and every other command) on inputs the round did not look at while it was built.

Capture each with ``hloviz dump benchmarks/heldout/round7.py:NAME --arg SPEC -o DIR``:

* ``inception_resnet_v2``: ``--arg "f32[1,96,96,3]"``
* ``rmsprop_step``: ``--arg "f32[8,32,32,3]" --arg "s32[8]"``

then ``python benchmarks/commands_bench.py --captures DIR --show DIR`` and ``python
benchmarks/overview_bench.py --no-diffs --model DIR``. Figures: benchmarks/results/commands_bench.txt.
"""
import keras
import tensorflow as tf

_irv2 = keras.applications.InceptionResNetV2(weights=None, input_shape=(96, 96, 3), classes=10)


@tf.function(jit_compile=True)
def inception_resnet_v2(x):
    return _irv2(x, training=False)


def _classifier() -> keras.Model:
    inputs = keras.Input((32, 32, 3))
    x = keras.layers.Conv2D(32, 3, padding="same", use_bias=False)(inputs)
    x = keras.layers.BatchNormalization()(x)
    x = keras.layers.Activation("swish")(x)
    for width in (32, 64):
        shortcut = keras.layers.Conv2D(width, 1, strides=2)(x)
        y = keras.layers.SeparableConv2D(width, 3, strides=2, padding="same")(x)
        y = keras.layers.BatchNormalization()(y)
        x = keras.layers.Add()([shortcut, keras.layers.Activation("swish")(y)])
    x = keras.layers.GlobalAveragePooling2D()(x)
    x = keras.layers.Dropout(0.2)(x)
    return keras.Model(inputs, keras.layers.Dense(10)(x), name="small_resnet")


_model = _classifier()
_opt = keras.optimizers.RMSprop(1e-3)
_loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
_opt.build(_model.trainable_variables)


@tf.function(jit_compile=True)
def rmsprop_step(images, labels):
    with tf.GradientTape() as tape:
        loss = _loss(labels, _model(images, training=True))
    grads = tape.gradient(loss, _model.trainable_variables)
    _opt.apply_gradients(zip(grads, _model.trainable_variables))
    return loss
