"""How ``dropout_blocks_step.hlo`` was made: a training step of a small Keras model built the way
EfficientNetV2 builds its blocks (expand, depthwise, project, dropout, residual add; layers named
``blk<N>_…``), trained with SGD + momentum.

    hloviz dump tests/data/orders/dropout_blocks.py:train_step --arg "f32[2,16,16,8]" --arg "s32[2]" -o DIR

(TensorFlow 2.21, CPU; the fixture is DIR/pre.hlo less each op's ``source_file``/``source_line``,
which name this machine's paths.) TensorFlow writes every dropout layer's random
bits (drawn from its seed generator's state, a variable) at the top of the module, before the
first layer's work.
"""

import tensorflow as tf

keras = tf.keras
BLOCKS = 6


def _block(x, n: int):
    name = f"blk{n}"
    y = keras.layers.Conv2D(16, 1, use_bias=False, name=f"{name}_expand")(x)
    y = keras.layers.BatchNormalization(name=f"{name}_expand_bn")(y)
    y = keras.layers.Activation("swish", name=f"{name}_expand_act")(y)
    y = keras.layers.DepthwiseConv2D(3, padding="same", use_bias=False, name=f"{name}_dw")(y)
    y = keras.layers.BatchNormalization(name=f"{name}_dw_bn")(y)
    y = keras.layers.Conv2D(8, 1, use_bias=False, name=f"{name}_project")(y)
    y = keras.layers.BatchNormalization(name=f"{name}_project_bn")(y)
    y = keras.layers.Dropout(0.2, name=f"{name}_drop")(y)
    return keras.layers.Add(name=f"{name}_add")([x, y])


def _model() -> keras.Model:
    inp = keras.Input((16, 16, 8))
    x = keras.layers.Conv2D(8, 3, padding="same", name="stem_conv")(inp)
    for n in range(1, BLOCKS + 1):
        x = _block(x, n)
    x = keras.layers.GlobalAveragePooling2D(name="pool")(x)
    out = keras.layers.Dense(10, name="head")(x)
    return keras.Model(inp, out)


_m = _model()
_opt = keras.optimizers.SGD(0.01, momentum=0.9)
_loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)


@tf.function(jit_compile=True)
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = _loss(y, _m(x, training=True))
    grads = tape.gradient(loss, _m.trainable_variables)
    _opt.apply_gradients(zip(grads, _m.trainable_variables))
    return loss
