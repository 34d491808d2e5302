"""Round 69 (held out, TF): loops of steps written other ways.

* ``while_loop_steps``: ``tf.while_loop`` by hand around a GradientTape step of a Keras
  functional model with BatchNormalization and Dropout (training=True), Adam.
* ``variable_accumulation``: gradients summed into ``tf.Variable`` accumulators with
  ``assign_add`` inside a ``for`` over ``tf.range(3)``, applied by SGD after the loop.
"""
import keras
import tensorflow as tf

_inp = keras.Input((12,))
_h = keras.layers.Dense(16, name="enc")(_inp)
_h = keras.layers.BatchNormalization(name="norm")(_h)
_h = keras.layers.Dropout(0.1, name="drop")(_h)
_out = keras.layers.Dense(3, name="cls")(keras.layers.ReLU(name="act")(_h))
_model = keras.Model(_inp, _out, name="tabular")
_adam = keras.optimizers.Adam(1e-3)
_adam.build(_model.trainable_variables)
_xent = keras.losses.SparseCategoricalCrossentropy(from_logits=True)


@tf.function(jit_compile=True)
def while_loop_steps(xs, ys):
    def body(i, loss):
        with tf.GradientTape() as tape:
            loss = _xent(ys[i], _model(xs[i], training=True))
        _adam.apply_gradients(zip(tape.gradient(loss, _model.trainable_variables), _model.trainable_variables))
        return i + 1, loss

    _, loss = tf.while_loop(lambda i, _l: i < 4, body, [tf.constant(0), tf.constant(0.0)])
    return loss


_mlp = keras.Sequential([keras.Input((10,)), keras.layers.Dense(8, activation="tanh", name="l1"),
                         keras.layers.Dense(1, name="l2")], name="reg")
_sgd = keras.optimizers.SGD(0.05)
_sgd.build(_mlp.trainable_variables)
_acc = [tf.Variable(tf.zeros_like(v), trainable=False) for v in _mlp.trainable_variables]


@tf.function(jit_compile=True)
def variable_accumulation(x, y):
    for a in _acc:
        a.assign(tf.zeros_like(a))
    for i in tf.range(3):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(_mlp(x[i]) - y[i]))
        for a, g in zip(_acc, tape.gradient(loss, _mlp.trainable_variables)):
            a.assign_add(g)
    _sgd.apply_gradients(zip([a / 3.0 for a in _acc], _mlp.trainable_variables))
    return loss
