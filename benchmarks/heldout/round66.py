"""Held out (sixty-sixth round, TensorFlow): written after the loops of round 64 were told apart and
not looked at while that was built.

* ``several_steps``: three whole training steps in one call, as ``steps_per_execution`` runs them
  — a ``for`` over ``tf.range(3)`` whose body holds a Keras CNN's forward pass, its backward pass
  and ``RMSprop``'s update — the last loss returned.
* ``accumulate_then_clip``: gradient accumulation over two micro-batches of a ``Dense`` stack
  with ``BatchNormalization`` (its moving statistics assigned inside the loop), the sum clipped by
  ``tf.clip_by_global_norm`` and applied by ``SGD`` with momentum.

Capture with ``hloviz dump benchmarks/heldout/round66.py:several_steps --arg "f32[3,4,8,8,1]" --arg
"s32[3,4]" -o DIR`` and ``… :accumulate_then_clip --arg "f32[8,6]" --arg "f32[8,1]" -o DIR``.
"""
import keras
import tensorflow as tf

_cnn = keras.Sequential([keras.Input((8, 8, 1)), keras.layers.Conv2D(4, 3, activation="relu", name="conv"),
                         keras.layers.GlobalAveragePooling2D(name="pool"), keras.layers.Dense(3, name="head")],
                        name="cnn")
_rms = keras.optimizers.RMSprop(1e-3)
_rms.build(_cnn.trainable_variables)
_xent = keras.losses.SparseCategoricalCrossentropy(from_logits=True)


@tf.function(jit_compile=True)
def several_steps(images, labels):
    loss = tf.constant(0.0)
    for i in tf.range(3):
        with tf.GradientTape() as tape:
            loss = _xent(labels[i], _cnn(images[i], training=True))
        grads = tape.gradient(loss, _cnn.trainable_variables)
        _rms.apply_gradients(zip(grads, _cnn.trainable_variables))
    return loss


_net = keras.Sequential([keras.Input((6,)), keras.layers.Dense(8, name="fc1"),
                         keras.layers.BatchNormalization(name="bn"), keras.layers.ReLU(name="act"),
                         keras.layers.Dense(1, name="out")], name="net")
_sgd = keras.optimizers.SGD(0.01, momentum=0.9)
_sgd.build(_net.trainable_variables)


@tf.function(jit_compile=True)
def accumulate_then_clip(x, y):
    xs, ys = tf.reshape(x, (2, 4, 6)), tf.reshape(y, (2, 4, 1))
    sums = [tf.zeros_like(v) for v in _net.trainable_variables]
    for i in tf.range(2):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(_net(xs[i], training=True) - ys[i]))
        sums = [s + g for s, g in zip(sums, tape.gradient(loss, _net.trainable_variables))]
    clipped, _ = tf.clip_by_global_norm(sums, 1.0)
    _sgd.apply_gradients(zip(clipped, _net.trainable_variables))
    return loss
