"""How ``pinn_step_pre.hlo`` and ``pinn_step_post.hlo`` were made: a physics-informed Keras MLP's
training step (``benchmarks/heldout/round19.py:pinn_step``) — its loss holds the network's first
and second derivatives with respect to its input, taken with nested ``tf.GradientTape``s, and is
written inline (``tf.reduce_mean`` of squares), trained with Adam:

    hloviz dump tests/data/orders/pinn.py:pinn_step --arg "f32[64,1]" -o DIR

(TensorFlow 2.21 on the CPU; the fixtures are DIR/pre.hlo and DIR/post.hlo less each op's
``source_file``/``source_line``.)
"""
import keras
import tensorflow as tf

_pinn = keras.Sequential([
    keras.Input(shape=(1,)),
    keras.layers.Dense(32, activation="tanh", name="hidden_1"),
    keras.layers.Dense(32, activation="tanh", name="hidden_2"),
    keras.layers.Dense(1, name="u"),
], name="pinn")
_opt = keras.optimizers.Adam(1e-3)
_opt.build(_pinn.trainable_variables)


@tf.function(jit_compile=True)
def pinn_step(x):
    with tf.GradientTape() as outer:
        with tf.GradientTape() as t2:
            t2.watch(x)
            with tf.GradientTape() as t1:
                t1.watch(x)
                u = _pinn(x, training=True)
            du = t1.gradient(u, x)
        d2u = t2.gradient(du, x)
        residual = d2u + tf.sin(3.0 * x)  # u'' = -sin(3x)
        boundary = _pinn(tf.constant([[0.0], [1.0]]), training=True)
        loss = tf.reduce_mean(tf.square(residual)) + tf.reduce_mean(tf.square(boundary))
    grads = outer.gradient(loss, _pinn.trainable_variables)
    _opt.apply_gradients(zip(grads, _pinn.trainable_variables))
    return loss
