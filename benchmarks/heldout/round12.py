"""Held out (twelfth round): models written the way users write them, none captured here before,
to check the overview (issue 33) after the post column began to be drawn in a forked copy and a
step's forward pass to open first. Nothing here was looked at while those were built.

Capture each with ``hloviz dump benchmarks/heldout/round12.py:NAME --arg SPEC … -o DIR``:

* ``wide_deep_step`` (a Keras functional wide-and-deep model: thirteen dense features and four
  categorical ids, an embedding per id, a deep MLP beside a wide linear part; Adagrad, binary
  cross-entropy): ``--arg "f32[32,13]" --arg "s32[32,4]" --arg "f32[32,1]"``
* ``vae_step`` (a subclassed Keras convolutional VAE: encoder, reparameterised sample with
  ``tf.random.normal``, transposed-convolution decoder; reconstruction plus KL loss, Adam):
  ``--arg "f32[16,28,28,1]"``

and, in JAX, ``round12_moe.py`` (a Flax linen mixture of experts); then ``python benchmarks/overview_bench.py --no-diffs --model DIR``.
"""
import keras
import tensorflow as tf


def _wide_deep() -> keras.Model:
    dense = keras.Input((13,), name="dense_features")
    ids = keras.Input((4,), dtype="int32", name="categorical_ids")
    embedded = [keras.layers.Flatten(name=f"flat_{i}")(keras.layers.Embedding(100, 8, name=f"embed_{i}")(ids[:, i]))
                for i in range(4)]
    deep = keras.layers.Concatenate(name="deep_input")([dense, *embedded])
    for i, width in enumerate((64, 32, 16)):
        deep = keras.layers.Dense(width, activation="relu", name=f"deep_{i}")(deep)
    wide = keras.layers.Dense(1, name="wide")(keras.layers.Concatenate(name="wide_input")([dense, *embedded]))
    out = keras.layers.Activation("sigmoid", name="prob")(keras.layers.Add(name="logit")(
        [wide, keras.layers.Dense(1, name="deep_out")(deep)]))
    return keras.Model([dense, ids], out, name="wide_and_deep")


_wd = _wide_deep()
_wd_opt = keras.optimizers.Adagrad(0.05)
_wd_opt.build(_wd.trainable_variables)
_bce = keras.losses.BinaryCrossentropy()


@tf.function(jit_compile=True)
def wide_deep_step(dense, ids, labels):
    with tf.GradientTape() as tape:
        loss = _bce(labels, _wd([dense, ids], training=True))
    grads = tape.gradient(loss, _wd.trainable_variables)
    _wd_opt.apply_gradients(zip(grads, _wd.trainable_variables))
    return loss


class VAE(keras.Model):
    def __init__(self, latent: int = 8):
        super().__init__(name="vae")
        self.encoder = keras.Sequential([
            keras.layers.Conv2D(16, 3, strides=2, padding="same", activation="relu", name="enc_conv1"),
            keras.layers.Conv2D(32, 3, strides=2, padding="same", activation="relu", name="enc_conv2"),
            keras.layers.Flatten(name="enc_flat"),
            keras.layers.Dense(64, activation="relu", name="enc_dense"),
        ], name="encoder")
        self.z_mean = keras.layers.Dense(latent, name="z_mean")
        self.z_log_var = keras.layers.Dense(latent, name="z_log_var")
        self.decoder = keras.Sequential([
            keras.layers.Dense(7 * 7 * 32, activation="relu", name="dec_dense"),
            keras.layers.Reshape((7, 7, 32), name="dec_reshape"),
            keras.layers.Conv2DTranspose(32, 3, strides=2, padding="same", activation="relu", name="dec_up1"),
            keras.layers.Conv2DTranspose(16, 3, strides=2, padding="same", activation="relu", name="dec_up2"),
            keras.layers.Conv2D(1, 3, padding="same", activation="sigmoid", name="dec_out"),
        ], name="decoder")

    def call(self, x):
        h = self.encoder(x)
        mean, log_var = self.z_mean(h), self.z_log_var(h)
        z = mean + tf.exp(0.5 * log_var) * tf.random.normal(tf.shape(mean))
        return self.decoder(z), mean, log_var


_vae = VAE()
_vae(tf.zeros((1, 28, 28, 1)))
_vae_opt = keras.optimizers.Adam(1e-3)
_vae_opt.build(_vae.trainable_variables)


@tf.function(jit_compile=True)
def vae_step(images):
    with tf.GradientTape() as tape:
        recon, mean, log_var = _vae(images, training=True)
        reconstruction = tf.reduce_mean(tf.reduce_sum(keras.losses.binary_crossentropy(images, recon), axis=(1, 2)))
        kl = -0.5 * tf.reduce_mean(tf.reduce_sum(1 + log_var - tf.square(mean) - tf.exp(log_var), axis=1))
        loss = reconstruction + kl
    grads = tape.gradient(loss, _vae.trainable_variables)
    _vae_opt.apply_gradients(zip(grads, _vae.trainable_variables))
    return loss
