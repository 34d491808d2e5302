"""Held out (thirty-sixth round, TensorFlow): written after this session's fixes (a dropout's bits
read out of a tuple, the order of a repeat's copies, captured tensors' names), and not looked at
while they were made.

* ``resnet101``: ``keras.applications.ResNet101`` (``weights=None``) on one 128×128 image, for
  inference: 33 bottlenecks in four stages, larger than any inference capture before it.
* ``loop_rnn_step``: a recurrent network written by hand — a ``keras.layers.Dense`` cell applied
  in a ``tf.while_loop`` over the time steps, its state carried in the loop — trained one step by
  ``RMSprop`` on the last state's mean-squared error.

Capture with ``hloviz dump benchmarks/heldout/round36.py:resnet101 --arg "f32[1,128,128,3]" -o DIR``
and ``…:loop_rnn_step --arg "f32[4,7,5]" --arg "f32[4,16]" -o DIR``.
"""
import keras
import tensorflow as tf

_resnet101 = keras.applications.ResNet101(weights=None, input_shape=(128, 128, 3), classes=10)


@tf.function(jit_compile=True)
def resnet101(images):
    return _resnet101(images, training=False)


_cell = keras.layers.Dense(16, activation="tanh", name="cell")
_cell.build((None, 21))
_readout = keras.layers.Dense(16, name="readout")
_readout.build((None, 16))
_rms = keras.optimizers.RMSprop(1e-3)
_weights = _cell.trainable_variables + _readout.trainable_variables
_rms.build(_weights)


@tf.function(jit_compile=True)
def loop_rnn_step(sequence, target):
    with tf.GradientTape() as tape:
        state = tf.zeros((tf.shape(sequence)[0], 16))

        def body(t, h):
            return t + 1, _cell(tf.concat([sequence[:, t, :], h], axis=-1))

        _, state = tf.while_loop(lambda t, _h: t < tf.shape(sequence)[1], body, (0, state),
                                 maximum_iterations=sequence.shape[1])
        loss = tf.reduce_mean(tf.square(_readout(state) - target))
    grads = tape.gradient(loss, _weights)
    _rms.apply_gradients(zip(grads, _weights))
    return loss
