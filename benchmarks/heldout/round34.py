"""Held out (thirty-fourth round, TensorFlow): written at the start of this session, before any
change, and drawn only to check the overview on models nobody here had drawn.

* ``mobilenet_v1_step``: ``keras.applications.MobileNet`` (``weights=None``, ``alpha=0.5``: the
  first MobileNet, depthwise-separable blocks) on 64×64 images, trained by SGD with momentum and
  weight decay.
* ``patch_vit_step``: a small vision transformer written as users write one — a ``Conv2D`` patch
  embedding, a learned position table, two encoder blocks of ``LayerNormalization``,
  ``MultiHeadAttention`` and a GELU ``Dense`` pair with residual adds, a class head — trained by
  ``AdamW`` with ``clipnorm``.

Capture with ``hloviz dump benchmarks/heldout/round34.py:mobilenet_v1_step --arg "f32[2,64,64,3]"
--arg "s32[2]" -o DIR`` and ``…:patch_vit_step --arg "f32[2,32,32,3]" --arg "s32[2]" -o DIR``.
"""
import keras
import tensorflow as tf

_mobilenet = keras.applications.MobileNet(weights=None, alpha=0.5, input_shape=(64, 64, 3), classes=4)
_momentum = keras.optimizers.SGD(0.05, momentum=0.9, weight_decay=1e-4)
_momentum.build(_mobilenet.trainable_variables)
_xent = keras.losses.SparseCategoricalCrossentropy(from_logits=False)


@tf.function(jit_compile=True)
def mobilenet_v1_step(images, labels):
    with tf.GradientTape() as tape:
        loss = _xent(labels, _mobilenet(images, training=True))
    grads = tape.gradient(loss, _mobilenet.trainable_variables)
    _momentum.apply_gradients(zip(grads, _mobilenet.trainable_variables))
    return loss


class _Positions(keras.layers.Layer):
    def build(self, shape):
        self.table = self.add_weight(name="table", shape=(shape[1], shape[2]), initializer="zeros")

    def call(self, x):
        return x + self.table


def _encoder(x, k):
    h = keras.layers.LayerNormalization(name=f"enc{k}_norm1")(x)
    h = keras.layers.MultiHeadAttention(2, 16, name=f"enc{k}_attention")(h, h)
    x = keras.layers.Add(name=f"enc{k}_add1")([x, h])
    h = keras.layers.LayerNormalization(name=f"enc{k}_norm2")(x)
    h = keras.layers.Dense(64, activation="gelu", name=f"enc{k}_mlp1")(h)
    h = keras.layers.Dense(32, name=f"enc{k}_mlp2")(h)
    return keras.layers.Add(name=f"enc{k}_add2")([x, h])


_images = keras.Input((32, 32, 3))
_x = keras.layers.Conv2D(32, 8, strides=8, name="patchify")(_images)
_x = keras.layers.Reshape((16, 32), name="tokens")(_x)
_x = _Positions(name="positions")(_x)
for _k in (1, 2):
    _x = _encoder(_x, _k)
_x = keras.layers.GlobalAveragePooling1D(name="pool")(keras.layers.LayerNormalization(name="final_norm")(_x))
_vit = keras.Model(_images, keras.layers.Dense(10, name="head")(_x), name="patch_vit")
_adamw = keras.optimizers.AdamW(1e-3, clipnorm=1.0)
_adamw.build(_vit.trainable_variables)
_logits_xent = keras.losses.SparseCategoricalCrossentropy(from_logits=True)


@tf.function(jit_compile=True)
def patch_vit_step(images, labels):
    with tf.GradientTape() as tape:
        loss = _logits_xent(labels, _vit(images, training=True))
    grads = tape.gradient(loss, _vit.trainable_variables)
    _adamw.apply_gradients(zip(grads, _vit.trainable_variables))
    return loss
