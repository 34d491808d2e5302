"""Held out (fifth round): control flow and sharing written by hand, not looked at while the
overview's rules were built. TensorFlow: a siamese Keras model (one encoder applied to two
inputs) trained with Adam; a function with a user-written ``tf.while_loop`` and ``tf.cond``
(a power iteration with an early stop). Capture each with ``hloviz dump
benchmarks/heldout/round5.py:NAME --arg ... -o DIR``:

* ``siamese_adam_step``: ``--arg "f32[4,16]" --arg "f32[4,16]" --arg "f32[4]"``
* ``power_iteration``: ``--arg "f32[32,32]" --arg "f32[32]"``

then ``python benchmarks/overview_bench.py --no-diffs --model DIR`` and
``python benchmarks/commands_bench.py --captures DIR``.
"""
import keras
import tensorflow as tf

_encoder = keras.Sequential([keras.Input((16,)), keras.layers.Dense(32, activation="relu", name="enc_hidden"),
                             keras.layers.Dense(8, name="enc_out")], name="encoder")
_a, _b = keras.Input((16,)), keras.Input((16,))
_distance = keras.layers.Lambda(lambda t: tf.reduce_sum(tf.square(t[0] - t[1]), axis=-1), name="distance")
_siamese = keras.Model([_a, _b], _distance([_encoder(_a), _encoder(_b)]), name="siamese")
_opt = keras.optimizers.Adam(1e-3)


@tf.function(jit_compile=True)
def siamese_adam_step(a, b, same):
    with tf.GradientTape() as tape:
        d = _siamese([a, b], training=True)
        loss = tf.reduce_mean(same * d + (1.0 - same) * tf.nn.relu(1.0 - d))
    grads = tape.gradient(loss, _siamese.trainable_variables)
    _opt.apply_gradients(zip(grads, _siamese.trainable_variables))
    return loss


@tf.function(jit_compile=True)
def power_iteration(m, v):
    def cond(i, v, delta):
        return tf.logical_and(i < 50, delta > 1e-6)

    def body(i, v, delta):
        w = tf.linalg.matvec(m, v)
        w = tf.cond(tf.norm(w) > 0, lambda: w / tf.norm(w), lambda: v)
        return i + 1, w, tf.reduce_max(tf.abs(w - v))

    _, v, _ = tf.while_loop(cond, body, (tf.constant(0), v, tf.constant(1.0)))
    return tf.tensordot(v, tf.linalg.matvec(m, v), 1), v
