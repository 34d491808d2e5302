"""How ``two_term_loss_step.hlo`` was made: a small Keras CNN classifier's training step whose
loss is written inline from two Keras losses — a cross entropy of its logits and the mean
squared distance of their softmax to soft targets — weighted and summed; trained with plain SGD:

    hloviz dump tests/data/orders/two_term_loss.py:two_term_step --arg "f32[16,8,8,1]" \
        --arg "s32[16]" --arg "f32[16,5]" -o DIR

(TensorFlow 2.21 on the CPU; the fixture is DIR/pre.hlo less each op's ``source_file``/``source_line``.)
"""
import keras
import tensorflow as tf

_model = keras.Sequential([
    keras.Input(shape=(8, 8, 1)),
    keras.layers.Conv2D(4, 3, activation="relu", name="conv"),
    keras.layers.Flatten(name="flat"),
    keras.layers.Dense(5, name="logits"),
], name="net")
_opt = keras.optimizers.SGD(0.01)
_ce = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
_mse = keras.losses.MeanSquaredError()
_opt.build(_model.trainable_variables)


@tf.function(jit_compile=True)
def two_term_step(x, y, soft):
    with tf.GradientTape() as tape:
        logits = _model(x, training=True)
        loss = 0.7 * _ce(y, logits) + 0.3 * _mse(soft, tf.nn.softmax(logits))
    grads = tape.gradient(loss, _model.trainable_variables)
    _opt.apply_gradients(zip(grads, _model.trainable_variables))
    return loss
