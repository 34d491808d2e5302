"""Round 82 (held out, TF): models written the way users write them, not looked at while building
anything.

* ``capsnet_margin_step``: a capsule network (Sabour et al.) on small grey images, a functional
  ``keras.Model``: a ``Conv2D`` stem, a strided ``Conv2D`` whose output is reshaped into primary
  capsules and squashed (a ``layers.Lambda`` around a ``squash`` function), and a custom
  ``keras.layers.Layer`` ``DigitCaps`` holding one transform weight (``add_weight``) per
  (input capsule, class): the predictions are a ``tf.einsum``, then three iterations of dynamic
  routing written as a Python ``for`` loop (``tf.nn.softmax`` of the routing logits, a weighted
  sum, ``squash``, the logits updated by the agreement ``tf.einsum``; the routing logits carry no
  gradient into the next iteration: ``tf.stop_gradient`` on the predictions inside the loop, as
  the reference implementations do). The loss is the margin loss on the capsule lengths plus
  ``0.0005 *`` the MSE of a reconstruction decoder (three ``Dense``) fed the class capsule masked
  by ``tf.one_hot`` of the label. One step of ``keras.optimizers.Nadam`` under
  ``keras.optimizers.schedules.InverseTimeDecay`` in a ``tf.function(jit_compile=True)`` with a
  ``tf.GradientTape``.
* ``perceiver_triplet_step``: a Perceiver-style point-cloud embedder, a subclassed ``keras.Model``:
  each point's ``xyz`` gets Fourier features (``tf.sin``/``tf.cos`` of a fixed frequency
  matrix) and a ``Dense`` projection; a learned latent array (``add_weight`` in a small custom
  layer, tiled over the batch) cross-attends to the points (``layers.MultiHeadAttention``,
  query = latents), then ONE latent self-attention block (``MultiHeadAttention`` +
  ``LayerNormalization`` + a ``Dense`` feed-forward) is applied twice with shared weights (the
  same Python layer object called in a loop); ``GlobalAveragePooling1D``, a ``Dense`` and
  ``layers.UnitNormalization``. Batch-hard triplet loss written by hand (pairwise squared
  distances, label masks from ``tf.equal``, hardest positive by ``reduce_max``, hardest negative
  by ``reduce_min`` after adding a large value on the positives, ``tf.nn.relu(margin + ...)``).
  One step of ``keras.optimizers.SGD(momentum=0.9, nesterov=True)`` under
  ``keras.optimizers.schedules.CosineDecayRestarts`` with ``clipnorm=1.0``.

Capture with
``hloviz dump benchmarks/heldout/round82.py:capsnet_margin_step --arg "f32[4,20,20,1]" --arg "s32[4]" -o DIR`` and
``hloviz dump benchmarks/heldout/round82.py:perceiver_triplet_step --arg "f32[8,64,3]" --arg "s32[8]" -o DIR``.
"""
import keras
import tensorflow as tf
from keras import layers

# --- capsule network, dynamic routing, margin loss + masked reconstruction, Nadam -----------------

IMG = 20
CLASSES = 5
PRIMARY_DIM = 8
DIGIT_DIM = 12
ROUTING_ITERS = 3


def squash(s, axis=-1):
    sq = tf.reduce_sum(tf.square(s), axis=axis, keepdims=True)
    return sq / (1.0 + sq) * s / tf.sqrt(sq + 1e-7)


class DigitCaps(layers.Layer):
    def __init__(self, num_caps, dim, iterations, **kw):
        super().__init__(**kw)
        self.num_caps = num_caps
        self.dim = dim
        self.iterations = iterations

    def build(self, input_shape):
        in_caps, in_dim = input_shape[1], input_shape[2]
        self.W = self.add_weight(name="transform", shape=(in_caps, self.num_caps, self.dim, in_dim),
                                 initializer=keras.initializers.RandomNormal(stddev=0.05))

    def call(self, u):
        # u: [batch, in_caps, in_dim] -> predictions u_hat: [batch, in_caps, num_caps, dim]
        u_hat = tf.einsum("ijdk,bik->bijd", self.W, u)
        u_hat_stopped = tf.stop_gradient(u_hat)
        b = tf.zeros(tf.shape(u_hat)[:3])
        for i in range(self.iterations):
            c = tf.nn.softmax(b, axis=2)
            if i == self.iterations - 1:
                v = squash(tf.einsum("bij,bijd->bjd", c, u_hat))
            else:
                v = squash(tf.einsum("bij,bijd->bjd", c, u_hat_stopped))
                b = b + tf.einsum("bijd,bjd->bij", u_hat_stopped, v)
        return v


def _capsnet() -> keras.Model:
    image = keras.Input((IMG, IMG, 1), name="image")
    x = layers.Conv2D(32, 5, activation="relu", name="stem_conv")(image)
    x = layers.Conv2D(4 * PRIMARY_DIM, 5, strides=2, name="primary_conv")(x)
    x = layers.Reshape((-1, PRIMARY_DIM), name="primary_reshape")(x)
    x = layers.Lambda(squash, name="primary_squash")(x)
    caps = DigitCaps(CLASSES, DIGIT_DIM, ROUTING_ITERS, name="digit_caps")(x)
    return keras.Model(image, caps, name="capsnet")


def _decoder() -> keras.Model:
    masked = keras.Input((CLASSES * DIGIT_DIM,), name="masked_caps")
    x = layers.Dense(64, activation="relu", name="recon_fc1")(masked)
    x = layers.Dense(128, activation="relu", name="recon_fc2")(x)
    x = layers.Dense(IMG * IMG, activation="sigmoid", name="recon_out")(x)
    return keras.Model(masked, x, name="decoder")


_caps_net = _capsnet()
_caps_decoder = _decoder()
_caps_vars = _caps_net.trainable_variables + _caps_decoder.trainable_variables
_nadam = keras.optimizers.Nadam(
    learning_rate=keras.optimizers.schedules.InverseTimeDecay(1e-3, decay_steps=100, decay_rate=0.5))
_nadam.build(_caps_vars)


@tf.function(jit_compile=True)
def capsnet_margin_step(images, labels):
    with tf.GradientTape() as tape:
        caps = _caps_net(images, training=True)
        lengths = tf.sqrt(tf.reduce_sum(tf.square(caps), axis=-1) + 1e-7)
        t = tf.one_hot(labels, CLASSES)
        margin = t * tf.square(tf.nn.relu(0.9 - lengths)) + 0.5 * (1.0 - t) * tf.square(tf.nn.relu(lengths - 0.1))
        margin_loss = tf.reduce_mean(tf.reduce_sum(margin, axis=-1))
        masked = tf.reshape(caps * t[:, :, None], (-1, CLASSES * DIGIT_DIM))
        recon = _caps_decoder(masked, training=True)
        recon_loss = tf.reduce_mean(tf.square(recon - tf.reshape(images, (-1, IMG * IMG))))
        loss = margin_loss + 0.0005 * recon_loss
    grads = tape.gradient(loss, _caps_vars)
    _nadam.apply_gradients(zip(grads, _caps_vars))
    return loss


# --- Perceiver point-cloud embedder, shared latent block, batch-hard triplet loss, Nesterov SGD -----

POINTS = 64
FREQS = 8
WIDTH = 32
LATENTS = 8
EMBED = 16
MARGIN = 0.2


class LatentArray(layers.Layer):
    def __init__(self, num, dim, **kw):
        super().__init__(**kw)
        self.latents = self.add_weight(name="latents", shape=(num, dim),
                                       initializer=keras.initializers.TruncatedNormal(stddev=0.02))

    def call(self, batch_size):
        return tf.tile(self.latents[None], [batch_size, 1, 1])


class LatentBlock(layers.Layer):
    def __init__(self, dim, **kw):
        super().__init__(**kw)
        self.attn = layers.MultiHeadAttention(2, dim // 2, name="self_attn")
        self.norm1 = layers.LayerNormalization(name="ln_attn")
        self.ff = layers.Dense(dim, activation="gelu", name="ff")
        self.norm2 = layers.LayerNormalization(name="ln_ff")

    def call(self, z):
        z = self.norm1(z + self.attn(z, z))
        return self.norm2(z + self.ff(z))


class PointPerceiver(keras.Model):
    def __init__(self, **kw):
        super().__init__(**kw)
        self.freqs = tf.constant(tf.random.stateless_normal((3, FREQS), seed=(1, 2)) * 3.0)
        self.point_proj = layers.Dense(WIDTH, name="point_proj")
        self.latent_array = LatentArray(LATENTS, WIDTH, name="latent_array")
        self.cross_attn = layers.MultiHeadAttention(1, WIDTH, name="cross_attn")
        self.cross_norm = layers.LayerNormalization(name="cross_norm")
        self.latent_block = LatentBlock(WIDTH, name="latent_block")
        self.pool = layers.GlobalAveragePooling1D(name="pool")
        self.embed = layers.Dense(EMBED, name="embed")
        self.unit = layers.UnitNormalization(name="l2norm")

    def call(self, points):
        proj = tf.einsum("bnc,cf->bnf", points, self.freqs)
        feats = tf.concat([points, tf.sin(proj), tf.cos(proj)], axis=-1)
        x = self.point_proj(feats)
        z = self.latent_array(tf.shape(points)[0])
        z = self.cross_norm(z + self.cross_attn(z, x))
        for _ in range(2):
            z = self.latent_block(z)
        return self.unit(self.embed(self.pool(z)))


def batch_hard_triplet_loss(labels, emb, margin=MARGIN):
    sq = tf.reduce_sum(tf.square(emb), axis=1)
    dist = tf.maximum(sq[:, None] - 2.0 * tf.matmul(emb, emb, transpose_b=True) + sq[None, :], 0.0)
    same = tf.equal(labels[:, None], labels[None, :])
    not_self = tf.logical_not(tf.eye(tf.shape(labels)[0], dtype=tf.bool))
    positive = tf.cast(tf.logical_and(same, not_self), dist.dtype)
    hardest_pos = tf.reduce_max(dist * positive, axis=1)
    hardest_neg = tf.reduce_min(dist + 1e3 * tf.cast(same, dist.dtype), axis=1)
    return tf.reduce_mean(tf.nn.relu(margin + hardest_pos - hardest_neg))


_perceiver = PointPerceiver(name="point_perceiver")
_perceiver(tf.zeros((1, POINTS, 3)))
_sgd = keras.optimizers.SGD(
    learning_rate=keras.optimizers.schedules.CosineDecayRestarts(0.05, first_decay_steps=50),
    momentum=0.9, nesterov=True, clipnorm=1.0)
_sgd.build(_perceiver.trainable_variables)


@tf.function(jit_compile=True)
def perceiver_triplet_step(points, labels):
    with tf.GradientTape() as tape:
        emb = _perceiver(points, training=True)
        loss = batch_hard_triplet_loss(labels, emb)
    grads = tape.gradient(loss, _perceiver.trainable_variables)
    _sgd.apply_gradients(zip(grads, _perceiver.trainable_variables))
    return loss
