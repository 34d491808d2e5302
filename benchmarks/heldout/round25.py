"""Held out (twenty-fifth round, TensorFlow): written after this round's changes and the
twenty-fourth round's, to check them on a model nobody here had captured.

* ``gated_step``: a functional Keras model around a custom layer — a ``keras.layers.Layer``
  subclass with its own ``add_weight`` kernels computing a gated linear unit — after a
  ``Conv1D`` over an ``Embedding``, with ``GlobalAveragePooling1D`` and a head; a
  ``CategoricalCrossentropy`` with label smoothing on one-hot labels made in the step, and
  ``Adam(global_clipnorm=1.0)``.

Capture with ``hloviz dump benchmarks/heldout/round25.py:gated_step --arg "s32[8,30]" --arg
"s32[8]" -o DIR``.
"""
import keras
import tensorflow as tf


class GatedLinear(keras.layers.Layer):
    def __init__(self, units: int, **kwargs):
        super().__init__(**kwargs)
        self.units = units

    def build(self, input_shape):
        self.value_kernel = self.add_weight(shape=(input_shape[-1], self.units), name="value_kernel")
        self.gate_kernel = self.add_weight(shape=(input_shape[-1], self.units), name="gate_kernel")
        self.bias = self.add_weight(shape=(self.units,), initializer="zeros", name="bias")

    def call(self, x):
        return (x @ self.value_kernel + self.bias) * tf.sigmoid(x @ self.gate_kernel)


def _gated() -> keras.Model:
    tokens = keras.Input((30,), dtype="int32")
    x = keras.layers.Embedding(400, 24, name="embed")(tokens)
    x = keras.layers.Conv1D(32, 3, padding="same", activation="relu", name="conv")(x)
    x = GatedLinear(32, name="glu")(x)
    x = keras.layers.GlobalAveragePooling1D(name="pool")(x)
    return keras.Model(tokens, keras.layers.Dense(5, name="head")(x), name="gated")


_model = _gated()
_loss = keras.losses.CategoricalCrossentropy(from_logits=True, label_smoothing=0.1)
_adam = keras.optimizers.Adam(1e-3, global_clipnorm=1.0)
_adam.build(_model.trainable_variables)


@tf.function(jit_compile=True)
def gated_step(tokens, labels):
    with tf.GradientTape() as tape:
        loss = _loss(tf.one_hot(labels, 5), _model(tokens, training=True))
    grads = tape.gradient(loss, _model.trainable_variables)
    _adam.apply_gradients(zip(grads, _model.trainable_variables))
    return loss
