"""How ``inline_loss_step.hlo`` was made: a Keras dense autoencoder's training step whose loss is
written inline (``tf.reduce_mean(tf.square(x - model(x)))``, no Keras loss), trained with Adam:

    hloviz dump tests/data/orders/inline_loss.py:inline_loss_step --arg "f32[16,12]" -o DIR

(TensorFlow 2.21 on the CPU; the fixture is DIR/pre.hlo less each op's ``source_file``/``source_line``.)
"""
import keras
import tensorflow as tf

_model = keras.Sequential([
    keras.Input(shape=(12,)),
    keras.layers.Dense(8, activation="relu", name="encode"),
    keras.layers.Dense(4, activation="relu", name="code"),
    keras.layers.Dense(8, activation="relu", name="decode"),
    keras.layers.Dense(12, name="reconstruct"),
], name="autoencoder")
_opt = keras.optimizers.Adam(1e-3)
_opt.build(_model.trainable_variables)


@tf.function(jit_compile=True)
def inline_loss_step(x):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(x - _model(x, training=True)))
    grads = tape.gradient(loss, _model.trainable_variables)
    _opt.apply_gradients(zip(grads, _model.trainable_variables))
    return loss
