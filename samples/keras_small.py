"""A small Keras model with a few named layers: what ``hloviz`` shows of a model's own structure.

A functional model (``stem`` convolution, ``features`` convolution, pooling, ``classifier``),
its inference and a training step with SGD. Every op XLA sees is named after its layer
(``small_cnn_1/stem_1/convolution``), so the kernels can be read per layer::

    hloviz stats samples/keras_small.py:classify --by scope
    hloviz stats samples/keras_small.py:train_step --by scope --depth 2
"""

import tensorflow as tf

keras = tf.keras

HLOVIZ_ARGS = {
    "classify": ["f32[2,32,32,3]"],
    "train_step": ["f32[2,32,32,3]", "s32[2]"],
}

inputs = keras.Input((32, 32, 3), name="images")
x = keras.layers.Conv2D(8, 3, padding="same", activation="relu", name="stem")(inputs)
x = keras.layers.MaxPooling2D(name="pool")(x)
x = keras.layers.Conv2D(16, 3, padding="same", name="features")(x)
x = keras.layers.BatchNormalization(name="features_bn")(x)
x = keras.layers.ReLU(name="features_relu")(x)
x = keras.layers.GlobalAveragePooling2D(name="gap")(x)
outputs = keras.layers.Dense(10, name="classifier")(x)
model = keras.Model(inputs, outputs, name="small_cnn")

optimizer = keras.optimizers.SGD(0.1, momentum=0.9)
optimizer.build(model.trainable_variables)
loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)


@tf.function(jit_compile=True)
def classify(images):
    """Inference: the class probabilities of ``images``."""
    return tf.nn.softmax(model(images, training=False))


@tf.function(jit_compile=True)
def train_step(images, labels):
    """One SGD step: forward, the gradients by ``tf.GradientTape``, the update."""
    with tf.GradientTape() as tape:
        loss = loss_fn(labels, model(images, training=True))
    gradients = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(gradients, model.trainable_variables))
    return loss
