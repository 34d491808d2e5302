"""Held out (fifty-fourth round, TensorFlow): ops no earlier round used, written as a user writes
them, run through every command.

* ``graph_pool``: a graph network's message passing — ``tf.math.unsorted_segment_sum`` and
  ``unsorted_segment_max`` over edges, ``tf.gather`` of node features, a Keras ``Dense`` — and a
  ``tf.math.segment_mean`` readout per graph, one SGD step by a Keras optimizer.
* ``banded_attention``: attention masked to a band by ``tf.linalg.band_part``, with
  ``tf.signal.frame`` cutting the sequence into overlapping windows first (inference).

Capture with ``hloviz dump benchmarks/heldout/round54.py:graph_pool --arg "f32[12,8]" --arg "s32[30]"
--arg "s32[30]" --arg "s32[12]" -o DIR`` and ``… :banded_attention --arg "f32[2,40,16]" -o DIR``.
"""
import keras
import tensorflow as tf

_message = keras.layers.Dense(8, activation="relu", name="message")
_readout = keras.layers.Dense(3, name="readout")
_message.build((None, 16))
_readout.build((None, 16))
_opt = keras.optimizers.SGD(0.05)


@tf.function(jit_compile=True)
def graph_pool(nodes, senders, receivers, graph_of_node):
    with tf.GradientTape() as tape:
        msg = _message(tf.concat([tf.gather(nodes, senders), tf.gather(nodes, receivers)], axis=-1))
        summed = tf.math.unsorted_segment_sum(msg, receivers, num_segments=12)
        peak = tf.math.unsorted_segment_max(msg, receivers, num_segments=12)
        h = tf.concat([summed, tf.maximum(peak, 0.0)], axis=-1)
        pooled = tf.math.unsorted_segment_mean(h, graph_of_node, num_segments=3)
        loss = tf.reduce_mean(tf.square(_readout(pooled)))
    variables = _message.trainable_variables + _readout.trainable_variables
    _opt.apply_gradients(zip(tape.gradient(loss, variables), variables))
    return loss


@tf.function(jit_compile=True)
def banded_attention(x):
    windows = tf.signal.frame(x, frame_length=8, frame_step=4, axis=1)  # [b, n, 8, d]
    scores = tf.einsum("bnqd,bnkd->bnqk", windows, windows) / 4.0
    band = tf.linalg.band_part(tf.ones([8, 8]), 2, 2)
    scores = scores + (1.0 - band) * -1e9
    return tf.einsum("bnqk,bnkd->bnqd", tf.nn.softmax(scores), windows)
