"""Held out (sixth round): models written as users write them, with layers, training loops and
gradients no earlier round used, not looked at while any rule was built. TensorFlow: a
convolutional autoencoder
(``Conv2DTranspose``, ``UpSampling2D``) trained with Nadam; a bidirectional GRU classifier
with Adamax; a layer with a hand-written gradient (``tf.custom_gradient``: a clipped
straight-through estimator) trained with SGD. The round's GAN step (two models, two
optimizers, two tapes), whose discriminator's weights, read by both its calls, were drawn as
boxes of their own, became the sample ``samples/keras_gan.py``. Capture each with ``hloviz dump
benchmarks/heldout/round6.py:NAME --arg ... -o DIR``:

* ``autoencoder_nadam_step``: ``--arg "f32[4,16,16,1]"``
* ``bigru_adamax_step``: ``--arg "s32[4,12]" --arg "s32[4]"``
* ``ste_sgd_step``: ``--arg "f32[8,10]" --arg "s32[8]"``

then ``python benchmarks/overview_bench.py --no-diffs --model DIR`` and
``python benchmarks/commands_bench.py --captures DIR``.
"""
import keras
import tensorflow as tf

_autoencoder = keras.Sequential([
    keras.Input((16, 16, 1)),
    keras.layers.Conv2D(8, 3, strides=2, padding="same", activation="relu", name="enc_conv1"),
    keras.layers.Conv2D(16, 3, strides=2, padding="same", activation="relu", name="enc_conv2"),
    keras.layers.Conv2DTranspose(8, 3, strides=2, padding="same", activation="relu", name="dec_deconv"),
    keras.layers.UpSampling2D(2, name="dec_upsample"),
    keras.layers.Conv2D(1, 3, padding="same", activation="sigmoid", name="dec_out"),
], name="autoencoder")
_ae_opt = keras.optimizers.Nadam(1e-3)


@tf.function(jit_compile=True)
def autoencoder_nadam_step(x):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(_autoencoder(x, training=True) - x))
    grads = tape.gradient(loss, _autoencoder.trainable_variables)
    _ae_opt.apply_gradients(zip(grads, _autoencoder.trainable_variables))
    return loss


_bigru = keras.Sequential([keras.Input((12,), dtype="int32"), keras.layers.Embedding(40, 8, name="tokens"),
                           keras.layers.Bidirectional(keras.layers.GRU(12), name="bigru"),
                           keras.layers.Dense(3, name="classes")], name="bigru_classifier")
_gru_opt = keras.optimizers.Adamax(1e-3)
_sce = keras.losses.SparseCategoricalCrossentropy(from_logits=True)


@tf.function(jit_compile=True)
def bigru_adamax_step(tokens, labels):
    with tf.GradientTape() as tape:
        loss = _sce(labels, _bigru(tokens, training=True))
    grads = tape.gradient(loss, _bigru.trainable_variables)
    _gru_opt.apply_gradients(zip(grads, _bigru.trainable_variables))
    return loss


@tf.custom_gradient
def _clipped_sign(x):
    def grad(dy):
        return dy * tf.cast(tf.abs(x) <= 1.0, dy.dtype)
    return tf.sign(x), grad


class BinaryDense(keras.layers.Layer):
    """A dense layer whose weights are binarized on the way in (a straight-through estimator)."""

    def __init__(self, units, **kwargs):
        super().__init__(**kwargs)
        self.units = units

    def build(self, shape):
        self.w = self.add_weight(shape=(shape[-1], self.units), initializer="glorot_uniform", name="w")

    def call(self, x):
        return tf.matmul(x, _clipped_sign(self.w))


_ste = keras.Sequential([keras.Input((10,)), BinaryDense(16, name="binary_hidden"), keras.layers.ReLU(name="act"),
                         keras.layers.Dense(4, name="head")], name="ste_net")
_ste_opt = keras.optimizers.SGD(0.1)


@tf.function(jit_compile=True)
def ste_sgd_step(x, y):
    with tf.GradientTape() as tape:
        loss = _sce(y, _ste(x, training=True))
    grads = tape.gradient(loss, _ste.trainable_variables)
    _ste_opt.apply_gradients(zip(grads, _ste.trainable_variables))
    return loss
