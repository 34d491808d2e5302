"""Round 74 (held out, TF): models written the way users write them, not looked at while
building anything.

* ``unet_step``: a small Keras U-Net (Conv2D, MaxPooling2D, Conv2DTranspose, Concatenate skip
  connections, a sigmoid mask) trained one step on a soft Dice loss with Adam(amsgrad=True).
* ``dcn_step``: a Deep & Cross network for click-through rates — two ``Embedding`` tables read
  by integer ids, three cross layers written by hand (``x0 * (x W + b) + x``) beside an MLP —
  trained one step with Adagrad on binary cross-entropy.

Capture with
``hloviz dump benchmarks/heldout/round74.py:unet_step --arg "f32[4,32,32,3]" --arg "f32[4,32,32,1]" -o DIR`` and
``hloviz dump benchmarks/heldout/round74.py:dcn_step --arg "s32[64,2]" --arg "f32[64,8]" --arg "f32[64,1]" -o DIR``.
"""
import keras
import tensorflow as tf
from keras import layers


def _unet() -> keras.Model:
    inputs = keras.Input((32, 32, 3))
    skips, x = [], inputs
    for width in (8, 16):
        x = layers.Conv2D(width, 3, padding="same", activation="relu")(x)
        x = layers.Conv2D(width, 3, padding="same", activation="relu")(x)
        skips.append(x)
        x = layers.MaxPooling2D()(x)
    x = layers.Conv2D(32, 3, padding="same", activation="relu")(x)
    for width, skip in zip((16, 8), reversed(skips)):
        x = layers.Conv2DTranspose(width, 2, strides=2)(x)
        x = layers.Concatenate()([x, skip])
        x = layers.Conv2D(width, 3, padding="same", activation="relu")(x)
    return keras.Model(inputs, layers.Conv2D(1, 1, activation="sigmoid")(x), name="unet")


_net = _unet()
_adam = keras.optimizers.Adam(1e-3, amsgrad=True)
_adam.build(_net.trainable_variables)


def _dice(y, p):
    inter = tf.reduce_sum(y * p, axis=[1, 2, 3])
    return 1.0 - tf.reduce_mean((2.0 * inter + 1.0) / (tf.reduce_sum(y + p, axis=[1, 2, 3]) + 1.0))


@tf.function(jit_compile=True)
def unet_step(images, masks):
    with tf.GradientTape() as tape:
        loss = _dice(masks, _net(images, training=True))
    _adam.apply_gradients(zip(tape.gradient(loss, _net.trainable_variables), _net.trainable_variables))
    return loss


class Cross(layers.Layer):
    def build(self, shape):
        self.w = self.add_weight(shape=(shape[-1], shape[-1]), name="w")
        self.b = self.add_weight(shape=(shape[-1],), initializer="zeros", name="b")

    def call(self, x0, x):
        return x0 * (tf.matmul(x, self.w) + self.b) + x


def _dcn() -> keras.Model:
    ids = keras.Input((2,), dtype="int32")
    dense = keras.Input((8,))
    user = layers.Flatten()(layers.Embedding(100, 8, name="user_emb")(ids[:, :1]))
    item = layers.Flatten()(layers.Embedding(500, 8, name="item_emb")(ids[:, 1:]))
    x0 = layers.Concatenate()([user, item, dense])
    x = x0
    for k in range(3):
        x = Cross(name=f"cross_{k}")(x0, x)
    deep = layers.Dense(32, activation="relu", name="deep_1")(x0)
    deep = layers.Dense(16, activation="relu", name="deep_2")(deep)
    out = layers.Dense(1, activation="sigmoid", name="ctr")(layers.Concatenate()([x, deep]))
    return keras.Model([ids, dense], out, name="dcn")


_dcn_net = _dcn()
_adagrad = keras.optimizers.Adagrad(0.05)
_adagrad.build(_dcn_net.trainable_variables)
_bce = keras.losses.BinaryCrossentropy()


@tf.function(jit_compile=True)
def dcn_step(ids, dense, clicked):
    with tf.GradientTape() as tape:
        loss = _bce(clicked, _dcn_net([ids, dense], training=True))
    _adagrad.apply_gradients(zip(tape.gradient(loss, _dcn_net.trainable_variables), _dcn_net.trainable_variables))
    return loss
