"""Held out (thirty-ninth round, TensorFlow): written after round 38's fixes, not looked at while
they were made; every command run on each.

* ``gp_step``: Gaussian-process regression written by hand — an RBF kernel of two
  ``tf.Variable`` hyperparameters (log length scale, log noise), the negative log marginal
  likelihood through ``tf.linalg.cholesky`` and ``tf.linalg.triangular_solve``, one step of a
  Keras ``Adam`` on the two variables.
* ``superres``: an ESPCN super-resolution network for inference — three ``Conv2D`` layers, the
  last producing ``scale²`` channels, rearranged by ``tf.nn.depth_to_space`` into an image twice
  the size, clipped to ``[0, 1]``.

Capture with ``hloviz dump benchmarks/heldout/round39.py:gp_step --arg "f32[24,2]" --arg "f32[24]"
-o DIR`` and ``…:superres --arg "f32[1,24,24,1]" -o DIR``.
"""
import keras
import tensorflow as tf

_log_length = tf.Variable(0.0, name="log_length_scale")
_log_noise = tf.Variable(-2.0, name="log_noise")
_gp_adam = keras.optimizers.Adam(0.05)
_gp_adam.build([_log_length, _log_noise])


def _rbf(a, b):
    sq = tf.reduce_sum(tf.square(a[:, None, :] - b[None, :, :]), axis=-1)
    return tf.exp(-0.5 * sq / tf.exp(2.0 * _log_length))


@tf.function(jit_compile=True)
def gp_step(x, y):
    with tf.GradientTape() as tape:
        k = _rbf(x, x) + tf.exp(_log_noise) * tf.eye(tf.shape(x)[0])
        chol = tf.linalg.cholesky(k)
        alpha = tf.linalg.triangular_solve(chol, y[:, None], lower=True)
        nll = 0.5 * tf.reduce_sum(tf.square(alpha)) + tf.reduce_sum(tf.math.log(tf.linalg.diag_part(chol)))
    grads = tape.gradient(nll, [_log_length, _log_noise])
    _gp_adam.apply_gradients(zip(grads, [_log_length, _log_noise]))
    return nll


_scale = 2
_espcn = keras.Sequential([
    keras.Input((None, None, 1)),
    keras.layers.Conv2D(32, 5, padding="same", activation="tanh", name="features"),
    keras.layers.Conv2D(16, 3, padding="same", activation="tanh", name="mapping"),
    keras.layers.Conv2D(_scale * _scale, 3, padding="same", name="subpixel"),
], name="espcn")


@tf.function(jit_compile=True)
def superres(low):
    return tf.clip_by_value(tf.nn.depth_to_space(_espcn(low), _scale), 0.0, 1.0)
