"""TensorFlow loops as users write them: a hand-written RNN with ``tf.while_loop`` whose body
takes a ``tf.cond`` branch, and the same recurrence with ``tf.scan``. XLA keeps each loop as a
``while`` whose body computation holds the step once (and the ``tf.cond`` as a ``conditional``
inside it, or a ``select`` where both branches are cheap).

* ``rnn_while_cond(w, xs)``: ``h ← tanh(h @ w + x)`` over ``xs``, clipping ``h`` in a
  ``tf.cond`` branch when its norm grows past 4;
* ``rnn_scan(w, xs)``: the same recurrence with ``tf.scan`` (every state kept).

The captures the tests read were made from the project root with::

    hloviz dump samples/tf_loops.py:rnn_while_cond -o samples/captures/tf_while_cond
    hloviz dump samples/tf_loops.py:rnn_scan -o samples/captures/tf_scan
"""

import tensorflow as tf

STEPS, BATCH, HIDDEN = 10, 4, 16

HLOVIZ_ARGS = {
    "rnn_while_cond": [f"f32[{HIDDEN},{HIDDEN}]", f"f32[{STEPS},{BATCH},{HIDDEN}]"],
    "rnn_scan": [f"f32[{HIDDEN},{HIDDEN}]", f"f32[{STEPS},{BATCH},{HIDDEN}]"],
}


@tf.function(jit_compile=True)
def rnn_while_cond(w, xs):
    """The last state of a clipped tanh RNN, with a ``tf.cond`` in the loop body."""
    def body(i, h):
        with tf.name_scope("cell"):
            h = tf.tanh(tf.matmul(h, w) + xs[i])
        norm = tf.norm(h)
        h = tf.cond(norm > 4.0, lambda: h * (4.0 / norm), lambda: h)
        return i + 1, h

    _, h = tf.while_loop(lambda i, h: i < STEPS, body, (tf.constant(0), tf.zeros([BATCH, HIDDEN])))
    return h


@tf.function(jit_compile=True)
def rnn_scan(w, xs):
    """Every state of the tanh RNN, with ``tf.scan``."""
    with tf.name_scope("rnn"):
        return tf.scan(lambda h, x: tf.tanh(tf.matmul(h, w) + x), xs, initializer=tf.zeros([BATCH, HIDDEN]))
