"""Held out (twenty-fourth round, TensorFlow): written after this round's changes to check them
on models nobody here had captured, none looked at while they were built.

* ``attention_step``: a functional Keras sequence classifier — ``Embedding``, a
  ``MultiHeadAttention`` block with its residual add and ``LayerNormalization``, a feed-forward
  ``Dense`` pair, ``GlobalAveragePooling1D`` and a head — trained with ``Adafactor``.
* ``sequential_step``: a ``keras.Sequential`` CNN (``Conv2D``, ``BatchNormalization``,
  ``ReLU``, ``MaxPooling2D`` twice, ``Flatten``, ``Dropout``, ``Dense``) trained with Nesterov
  ``SGD`` on an ``ExponentialDecay`` schedule.

Capture with ``hloviz dump benchmarks/heldout/round24.py:attention_step --arg "s32[8,24]" --arg
"s32[8]" -o DIR`` and ``…:sequential_step --arg "f32[8,28,28,1]" --arg "s32[8]" -o DIR``.
"""
import keras
import tensorflow as tf


def _attention() -> keras.Model:
    tokens = keras.Input((24,), dtype="int32")
    x = keras.layers.Embedding(300, 32, name="embed")(tokens)
    attended = keras.layers.MultiHeadAttention(4, 8, name="attention")(x, x)
    x = keras.layers.LayerNormalization(name="norm_1")(x + attended)
    ff = keras.layers.Dense(32, name="ff_out")(keras.layers.Dense(64, activation="gelu", name="ff_in")(x))
    x = keras.layers.LayerNormalization(name="norm_2")(x + ff)
    x = keras.layers.GlobalAveragePooling1D(name="pool")(x)
    return keras.Model(tokens, keras.layers.Dense(3, name="head")(x), name="classifier")


def _step(model: keras.Model, loss_fn, optimizer):
    optimizer.build(model.trainable_variables)

    @tf.function(jit_compile=True)
    def step(inputs, labels):
        with tf.GradientTape() as tape:
            loss = loss_fn(labels, model(inputs, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    return step


attention_step = _step(_attention(), keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                       keras.optimizers.Adafactor(1e-2))

_sequential = keras.Sequential([
    keras.Input((28, 28, 1)),
    keras.layers.Conv2D(16, 3, name="conv_a"),
    keras.layers.BatchNormalization(name="bn_a"),
    keras.layers.ReLU(name="relu_a"),
    keras.layers.MaxPooling2D(name="pool_a"),
    keras.layers.Conv2D(32, 3, name="conv_b"),
    keras.layers.BatchNormalization(name="bn_b"),
    keras.layers.ReLU(name="relu_b"),
    keras.layers.MaxPooling2D(name="pool_b"),
    keras.layers.Flatten(name="flatten"),
    keras.layers.Dropout(0.25, name="dropout"),
    keras.layers.Dense(10, name="classes"),
], name="sequential_cnn")

sequential_step = _step(_sequential, keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                        keras.optimizers.SGD(keras.optimizers.schedules.ExponentialDecay(0.05, 100, 0.9),
                                             momentum=0.9, nesterov=True))
