"""Round 81 (held out, TF): models written the way users write them, not looked at while building
anything.

* ``recompute_mha_lion_step``: a subclassed ``keras.Model`` text classifier — an ``Embedding`` of
  tokens plus a position ``Embedding`` read at ``tf.range(length)``, two post-norm encoder blocks
  (a custom ``keras.layers.Layer``): ``layers.MultiHeadAttention`` with a padding
  ``attention_mask`` (tokens ``!= 0``), its output passed through ``clip_grad_norm`` — a
  ``@tf.custom_gradient`` identity whose gradient is ``tf.clip_by_norm(dy, 1.0)`` — then ``Add`` and
  ``LayerNormalization``; a feed-forward of two ``Dense`` wrapped in ``tf.recompute_grad`` (gradient
  checkpointing: the feed-forward recomputed in the backward pass), ``Dropout`` and another
  ``LayerNormalization``; a masked mean pool and a ``Dense`` head.
  ``SparseCategoricalCrossentropy(from_logits=True)``; one step of
  ``keras.optimizers.Lion(weight_decay=0.01, global_clipnorm=1.0)`` in a
  ``tf.function(jit_compile=True)`` with a ``tf.GradientTape``.
* ``bf16_recycle_unet_step``: a denoising U-Net built under the ``mixed_bfloat16`` policy (set
  before the model is made and put back to ``float32`` right after): the noisy image and the
  previous estimate ``Concatenate``-d, ``Conv2D`` + ``keras.ops.silu`` (called directly on the
  functional graph's tensors) twice with ``MaxPooling2D``, a ``Conv2D`` + ``keras.ops.gelu``
  bottleneck, an ``UpSampling2D`` + ``Conv2D`` up step and a strided ``Conv2DTranspose`` up step,
  each concatenated with its skip, a ``float32`` ``Conv2D`` output. The step "recycles" like
  AlphaFold: a ``tf.while_loop`` (``maximum_iterations=2``) runs the network twice without
  gradient (``tf.stop_gradient``), each estimate fed back in as the next call's input, then one
  more call under the ``tf.GradientTape``; the MSE of that last estimate, one step of
  ``keras.optimizers.Adafactor``. (Written first with the gradient through the loop: TF's XLA
  bridge cannot compile ``UpSampling2D``'s ``Tile`` gradient inside a ``while`` gradient — a shape
  it cannot make constant — nor, with ``interpolation="bilinear"``, the ``ResizeBilinearGrad`` of a
  bfloat16 tensor, which it makes ``f32``.)

Capture with
``hloviz dump benchmarks/heldout/round81.py:recompute_mha_lion_step --arg "s32[4,12]" --arg "s32[4]" -o DIR`` and
``hloviz dump benchmarks/heldout/round81.py:bf16_recycle_unet_step --arg "f32[2,16,16,1]" --arg "f32[2,16,16,1]" -o DIR``.
"""
import keras
import tensorflow as tf
from keras import layers

# --- text classifier: MHA blocks, custom-gradient clip, recomputed feed-forward, Lion --------------

VOCAB = 50
SEQ = 12
DIM = 32
HEADS = 4
CLASSES = 3


@tf.custom_gradient
def clip_grad_norm(x):
    def grad(dy):
        return tf.clip_by_norm(dy, 1.0)

    return tf.identity(x), grad


class EncoderBlock(layers.Layer):
    def __init__(self, dim, heads, **kw):
        super().__init__(**kw)
        self.attention = layers.MultiHeadAttention(heads, dim // heads, name="attention")
        self.norm1 = layers.LayerNormalization(name="norm1")
        self.ff_in = layers.Dense(2 * dim, activation="relu", name="ff_in")
        self.ff_out = layers.Dense(dim, name="ff_out")
        self.dropout = layers.Dropout(0.1, name="dropout")
        self.norm2 = layers.LayerNormalization(name="norm2")

    def call(self, x, mask, training=False):
        attn_mask = tf.logical_and(mask[:, :, None], mask[:, None, :])
        h = self.attention(x, x, attention_mask=attn_mask, training=training)
        x = self.norm1(x + clip_grad_norm(h))

        @tf.recompute_grad
        def feed_forward(y):
            return self.ff_out(self.ff_in(y))

        h = self.dropout(feed_forward(x), training=training)
        return self.norm2(x + h)


class TextClassifier(keras.Model):
    def __init__(self, **kw):
        super().__init__(**kw)
        self.tokens = layers.Embedding(VOCAB, DIM, name="token_embedding")
        self.positions = layers.Embedding(SEQ, DIM, name="position_embedding")
        self.blocks = [EncoderBlock(DIM, HEADS, name=f"block{i}") for i in range(2)]
        self.head = layers.Dense(CLASSES, name="classifier")

    def call(self, ids, training=False):
        mask = tf.not_equal(ids, 0)
        x = self.tokens(ids) + self.positions(tf.range(tf.shape(ids)[1]))[None]
        for block in self.blocks:
            x = block(x, mask, training=training)
        weights = tf.cast(mask, x.dtype)[:, :, None]
        pooled = tf.reduce_sum(x * weights, axis=1) / tf.maximum(tf.reduce_sum(weights, axis=1), 1.0)
        return self.head(pooled)


_text_net = TextClassifier(name="text_classifier")
_text_net(tf.ones((1, SEQ), tf.int32))
_lion = keras.optimizers.Lion(learning_rate=1e-4, weight_decay=0.01, global_clipnorm=1.0)
_lion.build(_text_net.trainable_variables)
_xent = keras.losses.SparseCategoricalCrossentropy(from_logits=True)


@tf.function(jit_compile=True)
def recompute_mha_lion_step(tokens, labels):
    with tf.GradientTape() as tape:
        logits = _text_net(tokens, training=True)
        loss = _xent(labels, logits)
    grads = tape.gradient(loss, _text_net.trainable_variables)
    _lion.apply_gradients(zip(grads, _text_net.trainable_variables))
    return loss


# --- bfloat16 U-Net with recycling in a while loop, Adafactor ---------------------------------------

SIZE = 16
RECYCLES = 3


def _unet() -> keras.Model:
    noisy = keras.Input((SIZE, SIZE, 1), name="noisy")
    previous = keras.Input((SIZE, SIZE, 1), name="previous")
    x = layers.Concatenate(name="stack_inputs")([noisy, previous])
    d1 = keras.ops.silu(layers.Conv2D(16, 3, padding="same", name="down1_conv")(x))
    x = layers.MaxPooling2D(name="down1_pool")(d1)
    d2 = keras.ops.silu(layers.Conv2D(32, 3, padding="same", name="down2_conv")(x))
    x = layers.MaxPooling2D(name="down2_pool")(d2)
    x = keras.ops.gelu(layers.Conv2D(64, 3, padding="same", name="bottleneck_conv")(x))
    x = layers.UpSampling2D(name="up2_upsample")(x)
    x = layers.Conv2D(32, 3, padding="same", activation="relu", name="up2_conv")(x)
    x = layers.Concatenate(name="up2_skip")([x, d2])
    x = layers.Conv2DTranspose(16, 3, strides=2, padding="same", activation="relu", name="up1_deconv")(x)
    x = layers.Concatenate(name="up1_skip")([x, d1])
    out = layers.Conv2D(1, 1, dtype="float32", name="estimate")(x)
    return keras.Model([noisy, previous], out, name="recycling_unet")


keras.mixed_precision.set_global_policy("mixed_bfloat16")
try:
    _unet_net = _unet()
finally:
    keras.mixed_precision.set_global_policy("float32")
_adafactor = keras.optimizers.Adafactor(learning_rate=1e-3)
_adafactor.build(_unet_net.trainable_variables)


@tf.function(jit_compile=True)
def bf16_recycle_unet_step(noisy, clean):
    def body(i, estimate):
        return i + 1, tf.stop_gradient(_unet_net([noisy, estimate], training=False))

    _, estimate = tf.while_loop(lambda i, e: i < RECYCLES - 1, body, (tf.constant(0), tf.zeros_like(noisy)),
                                maximum_iterations=RECYCLES - 1)
    with tf.GradientTape() as tape:
        estimate = _unet_net([noisy, estimate], training=True)
        loss = tf.reduce_mean(tf.square(estimate - clean))
    grads = tape.gradient(loss, _unet_net.trainable_variables)
    _adafactor.apply_gradients(zip(grads, _unet_net.trainable_variables))
    return loss
