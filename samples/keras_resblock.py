"""Models a new user writes from scratch, to check hloviz's per-layer answers against.

A ResNet-style Keras block (a stem convolution with batch norm and an activation, a residual
branch ``res_conv`` → ``res_bn`` added back to the stem, global pooling, two dense layers), its
inference with ReLU and with GELU (the pair ``hloviz diff`` compares layer by layer), its
training step with Adam, and a ``tf.while_loop`` that accumulates a matrix product::

    hloviz stats samples/keras_resblock.py:classify_relu --by scope
    hloviz diff samples/captures/resblock_relu samples/captures/resblock_gelu --by scope
    hloviz stats samples/keras_resblock.py:train_step --by scope
    hloviz show samples/keras_resblock.py:loop

The captures under ``samples/captures/resblock_*`` were made from this file with ``hloviz dump``
(``samples/README.md`` lists the commands). The weights are random: XLA compiles the same program
whatever their values.
"""

import tensorflow as tf

keras = tf.keras

HLOVIZ_ARGS = {
    "classify_relu": ["f32[8,32,32,3]"],
    "classify_gelu": ["f32[8,32,32,3]"],
    "train_step": ["f32[8,32,32,3]", "s32[8]"],
    "loop": ["f32[128,128]"],
}


def resblock_model(activation: str, name: str) -> keras.Model:
    """The same block with ``activation`` (``"relu"`` or ``"gelu"``) after each batch norm."""
    inputs = keras.Input((32, 32, 3), name="images")
    x = keras.layers.Conv2D(16, 3, padding="same", use_bias=False, name="stem_conv")(inputs)
    x = keras.layers.BatchNormalization(name="stem_bn")(x)
    x = keras.layers.Activation(activation, name="stem_act")(x)
    y = keras.layers.Conv2D(16, 3, padding="same", use_bias=False, name="res_conv")(x)
    y = keras.layers.BatchNormalization(name="res_bn")(y)
    x = keras.layers.Add(name="res_add")([x, y])
    x = keras.layers.Activation(activation, name="res_act")(x)
    x = keras.layers.GlobalAveragePooling2D(name="pool")(x)
    x = keras.layers.Dense(32, activation="relu", name="fc1")(x)
    outputs = keras.layers.Dense(10, name="logits")(x)
    return keras.Model(inputs, outputs, name=name)


relu_model = resblock_model("relu", "resblock")
gelu_model = resblock_model("gelu", "resblock")
gelu_model.set_weights(relu_model.get_weights())

optimizer = keras.optimizers.Adam(1e-3)
optimizer.build(relu_model.trainable_variables)
loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)


@tf.function(jit_compile=True)
def classify_relu(images):
    """Inference with ReLU: the logits of ``images``."""
    return relu_model(images, training=False)


@tf.function(jit_compile=True)
def classify_gelu(images):
    """Inference with GELU, the same weights: the logits of ``images``."""
    return gelu_model(images, training=False)


@tf.function(jit_compile=True)
def train_step(images, labels):
    """One Adam step: forward, the gradients by ``tf.GradientTape``, the update."""
    with tf.GradientTape() as tape:
        loss = loss_fn(labels, relu_model(images, training=True))
    gradients = tape.gradient(loss, relu_model.trainable_variables)
    optimizer.apply_gradients(zip(gradients, relu_model.trainable_variables))
    return loss


@tf.function(jit_compile=True)
def loop(x):
    """Ten steps of ``acc = tanh(acc @ x)`` in a ``tf.while_loop``, from ``zeros_like(x)``."""
    acc = tf.zeros_like(x)

    def body(i, acc):
        return i + 1, tf.tanh(tf.matmul(acc, x) + 1.0)

    _, acc = tf.while_loop(lambda i, _: i < 10, body, (tf.constant(0), acc))
    return acc
