"""Round 75 (held out, TF): models written the way users write them, run after this session's
overview changes and not looked at while making them.

* ``mixed_vit_step``: a tiny Vision Transformer (patches by a strided ``Conv2D``, a learned
  position embedding, two pre-norm encoder blocks of ``MultiHeadAttention`` + MLP, a class head
  on the mean token) trained one step under the ``mixed_float16`` policy with
  ``LossScaleOptimizer(AdamW)`` — the loss scaled, the gradients unscaled and checked finite.
* ``bilstm_attention``: a text classifier's forward pass — ``Embedding``, a ``Bidirectional``
  ``LSTM`` returning sequences, additive attention pooling written by hand (``Dense`` scores,
  a masked softmax over time, a weighted sum, in ``keras.ops``), a sigmoid head.

Capture with
``hloviz dump benchmarks/heldout/round75.py:mixed_vit_step --arg "f32[4,32,32,3]" --arg "s32[4]" -o DIR`` and
``hloviz dump benchmarks/heldout/round75.py:bilstm_attention --arg "s32[8,20]" -o DIR``.
"""
import keras
import tensorflow as tf
from keras import layers, ops

keras.mixed_precision.set_global_policy("mixed_float16")


class Block(layers.Layer):
    def __init__(self, dim, heads, **kw):
        super().__init__(**kw)
        self.norm1 = layers.LayerNormalization(epsilon=1e-6)
        self.attn = layers.MultiHeadAttention(heads, dim // heads)
        self.norm2 = layers.LayerNormalization(epsilon=1e-6)
        self.mlp1 = layers.Dense(dim * 2, activation="gelu")
        self.mlp2 = layers.Dense(dim)

    def call(self, x):
        h = self.norm1(x)
        x = x + self.attn(h, h)
        return x + self.mlp2(self.mlp1(self.norm2(x)))


class PositionEmbedding(layers.Layer):
    def build(self, shape):
        self.pos = self.add_weight(shape=(1, shape[1], shape[2]), initializer="random_normal", name="pos")

    def call(self, x):
        return x + tf.cast(self.pos, x.dtype)


def _vit() -> keras.Model:
    images = keras.Input((32, 32, 3))
    x = layers.Conv2D(32, 8, strides=8, name="patches")(images)
    x = layers.Reshape((16, 32))(x)
    x = PositionEmbedding(name="position")(x)
    for k in range(2):
        x = Block(32, 4, name=f"block_{k}")(x)
    x = layers.LayerNormalization(epsilon=1e-6, name="final_norm")(x)
    x = layers.GlobalAveragePooling1D()(x)
    return keras.Model(images, layers.Dense(10, dtype="float32", name="head")(x), name="vit")


_vit_net = _vit()
_opt = keras.optimizers.LossScaleOptimizer(keras.optimizers.AdamW(1e-3))
_opt.build(_vit_net.trainable_variables)
_xent = keras.losses.SparseCategoricalCrossentropy(from_logits=True)


@tf.function(jit_compile=True)
def mixed_vit_step(images, labels):
    with tf.GradientTape() as tape:
        loss = _xent(labels, _vit_net(images, training=True))
        scaled = _opt.scale_loss(loss)
    grads = tape.gradient(scaled, _vit_net.trainable_variables)
    _opt.apply_gradients(zip(grads, _vit_net.trainable_variables))
    return loss


keras.mixed_precision.set_global_policy("float32")


def _bilstm() -> keras.Model:
    tokens = keras.Input((20,), dtype="int32")
    x = layers.Embedding(1000, 16, mask_zero=True, name="embed")(tokens)
    h = layers.Bidirectional(layers.LSTM(16, return_sequences=True), name="bilstm")(x)
    scores = layers.Dense(1, name="score")(layers.Dense(16, activation="tanh", name="attn_proj")(h))
    mask = ops.expand_dims(ops.cast(ops.not_equal(tokens, 0), scores.dtype), -1)
    weights = ops.softmax(scores + (1.0 - mask) * -1e9, axis=1)
    pooled = ops.sum(weights * h, axis=1)
    return keras.Model(tokens, layers.Dense(1, activation="sigmoid", name="out")(pooled), name="bilstm_attention")


_bilstm_net = _bilstm()


@tf.function(jit_compile=True)
def bilstm_attention(tokens):
    return _bilstm_net(tokens, training=False)
