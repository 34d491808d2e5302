"""Round 70 (held out, TF): loops of training steps of deeper models, written after the change
that orders a loop body's boxes and not looked at while building it.

* ``conv_steps``: ``for step in tf.range(3)`` around a GradientTape step of a Sequential CNN
  (Conv2D, MaxPooling2D, Conv2D, Flatten, Dropout, Dense) with SGD and momentum.
* ``residual_steps``: ``tf.while_loop`` around two Adam steps of a functional MLP with a residual
  add, LayerNormalization and Dropout, the batch taken by ``tf.gather`` of the step index.

Capture with ``hloviz dump benchmarks/heldout/round70.py:conv_steps --arg "f32[3,4,10,10,2]" --arg "s32[3,4]" -o DIR``
and ``… :residual_steps --arg "f32[2,6,10]" --arg "f32[2,6,1]" -o DIR``.
"""
import keras
import tensorflow as tf

_cnn = keras.Sequential([
    keras.Input((10, 10, 2)),
    keras.layers.Conv2D(6, 3, activation="relu", name="conv_a"),
    keras.layers.MaxPooling2D(name="pool"),
    keras.layers.Conv2D(8, 2, activation="relu", name="conv_b"),
    keras.layers.Flatten(name="flat"),
    keras.layers.Dropout(0.2, name="dropout"),
    keras.layers.Dense(5, name="logits"),
], name="convnet")
_sgd = keras.optimizers.SGD(0.01, momentum=0.9)
_sgd.build(_cnn.trainable_variables)
_xent = keras.losses.SparseCategoricalCrossentropy(from_logits=True)


@tf.function(jit_compile=True)
def conv_steps(images, labels):
    total = tf.constant(0.0)
    for step in tf.range(3):
        with tf.GradientTape() as tape:
            loss = _xent(labels[step], _cnn(images[step], training=True))
        grads = tape.gradient(loss, _cnn.trainable_variables)
        _sgd.apply_gradients(zip(grads, _cnn.trainable_variables))
        total += loss
    return total / 3.0


_x = keras.Input((10,))
_h = keras.layers.Dense(10, activation="gelu", name="up")(_x)
_h = keras.layers.Add(name="skip")([_x, _h])
_h = keras.layers.LayerNormalization(name="ln")(_h)
_h = keras.layers.Dropout(0.1, name="drop")(_h)
_y = keras.layers.Dense(1, name="head")(_h)
_res = keras.Model(_x, _y, name="resmlp")
_adam = keras.optimizers.Adam(1e-3)
_adam.build(_res.trainable_variables)


@tf.function(jit_compile=True)
def residual_steps(xs, ys):
    def body(i, last):
        x, y = tf.gather(xs, i), tf.gather(ys, i)
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(_res(x, training=True) - y))
        _adam.apply_gradients(zip(tape.gradient(loss, _res.trainable_variables), _res.trainable_variables))
        return i + 1, loss

    _, loss = tf.while_loop(lambda i, _l: i < 2, body, [tf.constant(0), tf.constant(0.0)])
    return loss
