"""How ``many_blocks_adam_step.hlo`` was made: an Adam step of a small Keras model of 24 residual
blocks named ``blk<N>_…`` (one to three Dense layers, activations taking turns, and an Add each:
neighbours differ, so none fold into a repeat), more blocks than the overview's 24 boxes, its
optimizer a big part of the step.

    hloviz dump tests/data/orders/many_blocks_adam.py:train_step --arg "f32[4,16]" --arg "s32[4]" -o DIR

(TensorFlow 2.21, CPU; the fixture is DIR/pre.hlo less each op's ``source_file``/``source_line``.)
"""

import tensorflow as tf

keras = tf.keras
BLOCKS = 24


def _model() -> keras.Model:
    inp = keras.Input((16,))
    x = keras.layers.Dense(16, name="stem")(inp)
    for n in range(1, BLOCKS + 1):
        y = x
        for k in range(1, n % 3 + 2):
            y = keras.layers.Dense(32, activation=("relu", "tanh", "sigmoid", "elu")[(n + k) % 4], name=f"blk{n}_fc{k}")(y)
        y = keras.layers.Dense(16, name=f"blk{n}_out")(y)
        x = keras.layers.Add(name=f"blk{n}_add")([x, y])
    return keras.Model(inp, keras.layers.Dense(10, name="head")(x))


_m = _model()
_opt = keras.optimizers.Adam(1e-3)
_loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)


@tf.function(jit_compile=True)
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = _loss(y, _m(x, training=True))
    grads = tape.gradient(loss, _m.trainable_variables)
    _opt.apply_gradients(zip(grads, _m.trainable_variables))
    return loss
