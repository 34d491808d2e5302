"""Held out (fifty-fifth round, TensorFlow): written at the start of a session, before any change
it led to, run through every command.

* ``pinn_step``: a physics-informed network — a Keras MLP ``u(x, t)`` whose loss is the residual of
  the heat equation ``u_t - 0.1 u_xx``, the second derivative taken by a ``tf.GradientTape``
  nested inside another (gradients of gradients), plus a boundary term; one Adam step on it.
* ``roi_head``: a detection head — ``tf.image.resize`` (bilinear) of a feature map, windows cut
  out of it by ``tf.image.extract_patches``, a ``Conv2D`` and global pooling per window, scores by
  ``tf.nn.sigmoid`` and the best windows by ``tf.math.top_k`` (inference). (Written first with
  ``tf.image.crop_and_resize``, which XLA has no kernel for: ``hloviz dump`` said so and where.)

Capture with ``hloviz dump benchmarks/heldout/round55.py:pinn_step --arg "f32[64,1]" --arg
"f32[64,1]" -o DIR`` and ``… :roi_head --arg "f32[2,16,16,8]" -o DIR``.
"""
import keras
import tensorflow as tf

_u = keras.Sequential([keras.layers.Dense(32, activation="tanh", name="hidden1"),
                       keras.layers.Dense(32, activation="tanh", name="hidden2"),
                       keras.layers.Dense(1, name="u")], name="field")
_u.build((None, 2))
_opt = keras.optimizers.Adam(1e-3)


@tf.function(jit_compile=True)
def pinn_step(x, t):
    with tf.GradientTape() as outer:
        with tf.GradientTape() as second:
            second.watch(x)
            with tf.GradientTape(persistent=True) as first:
                first.watch([x, t])
                u = _u(tf.concat([x, t], axis=-1))
            u_x = first.gradient(u, x)
            u_t = first.gradient(u, t)
        u_xx = second.gradient(u_x, x)
        residual = u_t - 0.1 * u_xx
        boundary = _u(tf.concat([tf.zeros_like(t), t], axis=-1)) - 0.0
        loss = tf.reduce_mean(tf.square(residual)) + tf.reduce_mean(tf.square(boundary))
    grads = outer.gradient(loss, _u.trainable_variables)
    _opt.apply_gradients(zip(grads, _u.trainable_variables))
    return loss


_box_conv = keras.layers.Conv2D(16, 3, padding="same", activation="relu", name="box_conv")
_score = keras.layers.Dense(1, name="box_score")
_box_conv.build((None, 7, 7, 8))
_score.build((None, 16))


@tf.function(jit_compile=True)
def roi_head(features):
    bigger = tf.image.resize(features, [32, 32], method="bilinear")
    patches = tf.image.extract_patches(bigger, sizes=[1, 7, 7, 1], strides=[1, 5, 5, 1], rates=[1, 1, 1, 1],
                                       padding="VALID")  # [b, 6, 6, 7*7*8]
    crops = tf.reshape(patches, [-1, 7, 7, 8])
    pooled = tf.reduce_mean(_box_conv(crops), axis=[1, 2])
    scores = tf.reshape(tf.nn.sigmoid(_score(pooled)), [tf.shape(features)[0], -1])
    best, which = tf.math.top_k(scores, k=3)
    return best, which
