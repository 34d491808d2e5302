"""How ``l2_penalty_step_post.hlo`` was made: a Keras MLP's training step whose loss adds an L2
penalty over its kernels, summed inline (``tf.add_n`` of ``tf.nn.l2_loss``), trained with Adam:

    hloviz dump tests/data/orders/l2_penalty.py:l2_penalty_step --arg "f32[8,400]" --arg "f32[8,1]" -o DIR

(TensorFlow 2.21 on the CPU; the fixture is DIR/post.hlo less each op's ``source_file``/``source_line``.)
"""
import keras
import tensorflow as tf

_model = keras.Sequential([
    keras.Input(shape=(400,)),
    keras.layers.Dense(16, activation="relu", name="hidden"),
    keras.layers.Dense(1, name="score"),
], name="scorer")
_opt = keras.optimizers.Adam(1e-3)
_opt.build(_model.trainable_variables)
_mse = keras.losses.MeanSquaredError()


@tf.function(jit_compile=True)
def l2_penalty_step(x, y):
    with tf.GradientTape() as tape:
        penalty = tf.add_n([tf.nn.l2_loss(v) for v in _model.trainable_variables if "kernel" in v.name])
        loss = _mse(y, _model(x, training=True)) + 1e-4 * penalty
    grads = tape.gradient(loss, _model.trainable_variables)
    _opt.apply_gradients(zip(grads, _model.trainable_variables))
    return loss
