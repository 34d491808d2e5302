"""Held out (sixty-fourth round, TensorFlow): written before any change it might lead to, run
through every command.

* ``accumulated_step``: gradient accumulation as users write it when a batch does not fit — a
  ``for`` over ``tf.range(4)`` micro-batches (a ``tf.while_loop`` whose body holds the forward
  *and* the backward pass of a Keras MLP), the summed gradients applied once by ``Adam``.
* ``recompute_step``: a residual block wrapped in ``tf.recompute_grad`` (its forward run again
  in the backward pass), trained one step by ``SGD``.
* ``scatter_update``: an embedding table updated row by row, the sparse way — ``tf.gather_nd``
  of the looked-up rows, ``tf.tensor_scatter_nd_add`` of their gradient-like update, and a
  ``tf.math.unsorted_segment_max`` over the rows (inference, no tape).

Capture with ``hloviz dump benchmarks/heldout/round64.py:accumulated_step --arg "f32[16,8]" --arg
"s32[16]" -o DIR``, ``… :recompute_step --arg "f32[4,16]" --arg "f32[4,16]" -o DIR`` and
``… :scatter_update --arg "f32[50,8]" --arg "s32[6,1]" --arg "f32[6,8]" -o DIR``.
"""
import keras
import tensorflow as tf

_mlp = keras.Sequential([keras.Input((8,)), keras.layers.Dense(16, activation="relu", name="hidden"),
                         keras.layers.Dense(3, name="logits")], name="mlp")
_adam = keras.optimizers.Adam(1e-3)
_adam.build(_mlp.trainable_variables)
_xent = keras.losses.SparseCategoricalCrossentropy(from_logits=True)


@tf.function(jit_compile=True)
def accumulated_step(x, y):
    micro = 4
    xs = tf.reshape(x, (micro, -1, 8))
    ys = tf.reshape(y, (micro, -1))
    sums = [tf.zeros_like(v) for v in _mlp.trainable_variables]
    for i in tf.range(micro):
        with tf.GradientTape() as tape:
            loss = _xent(ys[i], _mlp(xs[i], training=True))
        grads = tape.gradient(loss, _mlp.trainable_variables)
        sums = [s + g for s, g in zip(sums, grads)]
    _adam.apply_gradients(zip([s / micro for s in sums], _mlp.trainable_variables))
    return loss


_dense1 = keras.layers.Dense(16, activation="tanh", name="res_in")
_dense2 = keras.layers.Dense(16, name="res_out")
_dense1.build((None, 16))
_dense2.build((None, 16))
_weights = _dense1.trainable_variables + _dense2.trainable_variables
_sgd = keras.optimizers.SGD(0.1)
_sgd.build(_weights)


@tf.recompute_grad
def _block(h):
    return h + _dense2(_dense1(h))


@tf.function(jit_compile=True)
def recompute_step(x, target):
    with tf.GradientTape() as tape:
        out = _block(_block(x))
        loss = tf.reduce_mean(tf.square(out - target))
    grads = tape.gradient(loss, _weights)
    _sgd.apply_gradients(zip(grads, _weights))
    return loss


@tf.function(jit_compile=True)
def scatter_update(table, rows, delta):
    looked_up = tf.gather_nd(table, rows)
    updated = tf.tensor_scatter_nd_add(table, rows, 0.1 * delta * tf.nn.sigmoid(looked_up))
    peak = tf.math.unsorted_segment_max(updated, tf.range(50) % 5, num_segments=5)
    return updated, peak
