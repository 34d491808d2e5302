"""Held out (fifty-eighth round, TensorFlow): linear algebra XLA runs as loops, and a loop whose
trip count depends on the data — written before any change they might lead to, run through every
command.

* ``whiten_classify``: ZCA whitening of a batch — the covariance's ``tf.linalg.eigh`` (XLA's
  Jacobi sweeps: a while loop run until converged), ``tf.linalg.qr`` of a projection, then a
  Keras ``Dense`` head (inference).
* ``newton_sqrt``: square roots by Newton's method in a ``tf.while_loop`` that stops when every
  element has converged (``tf.reduce_max`` of the change in its condition) — no trip count XLA
  could know.

Capture with ``hloviz dump benchmarks/heldout/round58.py:whiten_classify --arg "f32[32,6]" -o DIR``
and ``… :newton_sqrt --arg "f32[128]" -o DIR``.
"""
import keras
import tensorflow as tf

_head = keras.layers.Dense(3, activation="softmax", name="head")
_head.build((None, 6))
_projection = tf.random.stateless_normal([6, 6], seed=[5, 8])


@tf.function(jit_compile=True)
def whiten_classify(x):
    centred = x - tf.reduce_mean(x, axis=0, keepdims=True)
    cov = tf.matmul(centred, centred, transpose_a=True) / 31.0
    values, vectors = tf.linalg.eigh(cov + 1e-3 * tf.eye(6))
    zca = tf.matmul(vectors * tf.math.rsqrt(values), vectors, transpose_b=True)
    q, _ = tf.linalg.qr(_projection)
    return _head(tf.matmul(tf.matmul(centred, zca), q))


@tf.function(jit_compile=True)
def newton_sqrt(a):
    a = tf.abs(a) + 1.0

    def cond(y, change):
        return change > 1e-6

    def body(y, change):
        nxt = 0.5 * (y + a / y)
        return nxt, tf.reduce_max(tf.abs(nxt - y))

    y, _ = tf.while_loop(cond, body, (a, tf.constant(1.0)))
    return y
