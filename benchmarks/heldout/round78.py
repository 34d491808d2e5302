"""Round 78 (held out, TF): models written the way users write them, not looked at while building
anything.

* ``pointnet_nesterov_step``: a PointNet classifier of point clouds — a T-Net (a ``Conv1D``
  ``kernel_size=1`` shared MLP, ``GlobalMaxPooling1D``, a ``Dense`` to nine numbers that a custom
  ``keras.layers.Layer`` turns into a 3×3 matrix plus the identity) whose transform is applied to
  the points by ``layers.Dot(axes=(2, 1))``, then a shared MLP of ``Conv1D(kernel_size=1)`` +
  ``BatchNormalization`` + ``ReLU``, ``GlobalMaxPooling1D``, ``Dropout`` and a ``Dense`` head. The
  model has two outputs (logits and the transform); the loss is
  ``SparseCategoricalCrossentropy(from_logits=True)`` plus an orthogonality penalty
  ``||T Tᵀ - I||²``. Gradients are clipped by ``tf.clip_by_global_norm`` by hand and applied by
  ``keras.optimizers.SGD(momentum=0.9, nesterov=True)``.
* ``vqvae_nadam_step``: a VQ-VAE on small images — an encoder of two strided ``Conv2D``, a
  custom ``VectorQuantizer`` layer (a codebook made by ``add_weight``, squared distances of every
  encoder vector to every code, ``tf.argmin``, the codes read by ``tf.gather``, the
  straight-through estimator ``z + tf.stop_gradient(q - z)``, codebook and commitment losses
  returned as a second output), a decoder of two ``Conv2DTranspose`` and a sigmoid ``Conv2D``;
  reconstruction MSE plus the VQ losses, one step of ``keras.optimizers.Nadam``.

Capture with
``hloviz dump benchmarks/heldout/round78.py:pointnet_nesterov_step --arg "f32[8,64,3]" --arg "s32[8]" -o DIR`` and
``hloviz dump benchmarks/heldout/round78.py:vqvae_nadam_step --arg "f32[4,16,16,1]" -o DIR``.
"""
import keras
import tensorflow as tf
from keras import layers

# --- PointNet with a T-Net, Nesterov SGD and clipping by hand ---------------------------------

POINTS = 64
CLASSES = 5


class ToTransform(layers.Layer):
    """Nine numbers per cloud to a 3x3 matrix, starting from the identity."""

    def call(self, x):
        return tf.reshape(x, (-1, 3, 3)) + tf.eye(3)


def _tnet(points):
    x = layers.Conv1D(16, 1, activation="relu", name="tnet_conv1")(points)
    x = layers.Conv1D(32, 1, activation="relu", name="tnet_conv2")(x)
    x = layers.GlobalMaxPooling1D(name="tnet_pool")(x)
    x = layers.Dense(16, activation="relu", name="tnet_fc")(x)
    x = layers.Dense(9, kernel_initializer="zeros", bias_initializer="zeros", name="tnet_out")(x)
    return ToTransform(name="tnet_matrix")(x)


def _pointnet() -> keras.Model:
    points = keras.Input((POINTS, 3))
    transform = _tnet(points)
    x = layers.Dot(axes=(2, 1), name="align")([points, transform])
    for i, width in enumerate((32, 64)):
        x = layers.Conv1D(width, 1, name=f"mlp{i}_conv")(x)
        x = layers.BatchNormalization(name=f"mlp{i}_bn")(x)
        x = layers.ReLU(name=f"mlp{i}_relu")(x)
    x = layers.GlobalMaxPooling1D(name="global_feature")(x)
    x = layers.Dropout(0.3, name="dropout")(x)
    logits = layers.Dense(CLASSES, name="classifier")(x)
    return keras.Model(points, [logits, transform], name="pointnet")


_pointnet_net = _pointnet()
_nesterov = keras.optimizers.SGD(0.01, momentum=0.9, nesterov=True)
_nesterov.build(_pointnet_net.trainable_variables)
_xent = keras.losses.SparseCategoricalCrossentropy(from_logits=True)


@tf.function(jit_compile=True)
def pointnet_nesterov_step(points, labels):
    with tf.GradientTape() as tape:
        logits, transform = _pointnet_net(points, training=True)
        ortho = tf.matmul(transform, transform, transpose_b=True) - tf.eye(3)
        reg = tf.reduce_mean(tf.reduce_sum(tf.square(ortho), axis=[1, 2]))
        loss = _xent(labels, logits) + 0.001 * reg
    grads = tape.gradient(loss, _pointnet_net.trainable_variables)
    grads, norm = tf.clip_by_global_norm(grads, 5.0)
    _nesterov.apply_gradients(zip(grads, _pointnet_net.trainable_variables))
    return loss, norm


# --- VQ-VAE with a custom quantizer layer, Nadam ----------------------------------------------

CODES = 32
CODE_DIM = 8


class VectorQuantizer(layers.Layer):
    def __init__(self, num_codes, code_dim, beta=0.25, **kwargs):
        super().__init__(**kwargs)
        self.num_codes = num_codes
        self.code_dim = code_dim
        self.beta = beta

    def build(self, input_shape):
        self.codebook = self.add_weight(
            name="codebook", shape=(self.num_codes, self.code_dim), initializer="random_uniform")

    def call(self, z):
        flat = tf.reshape(z, (-1, self.code_dim))
        distances = (tf.reduce_sum(flat ** 2, axis=1, keepdims=True)
                     - 2.0 * tf.matmul(flat, self.codebook, transpose_b=True)
                     + tf.reduce_sum(self.codebook ** 2, axis=1)[None, :])
        index = tf.argmin(distances, axis=1)
        quantized = tf.reshape(tf.gather(self.codebook, index), tf.shape(z))
        codebook_loss = tf.reduce_mean((quantized - tf.stop_gradient(z)) ** 2)
        commitment_loss = tf.reduce_mean((tf.stop_gradient(quantized) - z) ** 2)
        quantized = z + tf.stop_gradient(quantized - z)
        return quantized, codebook_loss + self.beta * commitment_loss


def _vqvae() -> keras.Model:
    images = keras.Input((16, 16, 1))
    x = layers.Conv2D(16, 3, strides=2, padding="same", activation="relu", name="enc_conv1")(images)
    x = layers.Conv2D(CODE_DIM, 3, strides=2, padding="same", name="enc_conv2")(x)
    quantized, vq_loss = VectorQuantizer(CODES, CODE_DIM, name="quantizer")(x)
    x = layers.Conv2DTranspose(16, 3, strides=2, padding="same", activation="relu", name="dec_up1")(quantized)
    x = layers.Conv2DTranspose(16, 3, strides=2, padding="same", activation="relu", name="dec_up2")(x)
    recon = layers.Conv2D(1, 3, padding="same", activation="sigmoid", name="dec_out")(x)
    return keras.Model(images, [recon, vq_loss], name="vqvae")


_vqvae_net = _vqvae()
_nadam = keras.optimizers.Nadam(2e-3)
_nadam.build(_vqvae_net.trainable_variables)


@tf.function(jit_compile=True)
def vqvae_nadam_step(images):
    with tf.GradientTape() as tape:
        recon, vq_loss = _vqvae_net(images, training=True)
        recon_loss = tf.reduce_mean(tf.square(images - recon))
        loss = recon_loss + vq_loss
    grads = tape.gradient(loss, _vqvae_net.trainable_variables)
    _nadam.apply_gradients(zip(grads, _vqvae_net.trainable_variables))
    return loss, recon_loss
