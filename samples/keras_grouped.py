"""A small Keras CNN with a grouped convolution (``Conv2D(groups=16)``, as ConvNeXt's depthwise
convolutions are written), trained with SGD.

TensorFlow takes the gradient of a grouped convolution through a function it calls, and names
those ops by the call, not by the layer: ``PartitionedCall_3/gradients/convolution_grad/
Conv2DBackpropFilter``. ``hloviz dump samples/keras_grouped.py:grouped_train_step -o DIR`` (the
argument shapes come from ``HLOVIZ_ARGS``).
"""
import keras
import tensorflow as tf

HLOVIZ_ARGS = {"grouped_train_step": ["f32[4,16,16,3]", "s32[4]"]}

grouped = keras.Sequential([
    keras.Input((16, 16, 3)),
    keras.layers.Conv2D(16, 3, padding="same", activation="relu", name="stem"),
    keras.layers.Conv2D(16, 3, padding="same", groups=16, name="grouped"),
    keras.layers.Conv2D(32, 1, activation="relu", name="pointwise"),
    keras.layers.GlobalAveragePooling2D(name="pool"),
    keras.layers.Dense(5, name="head"),
], name="grouped_cnn")
loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
optimizer = keras.optimizers.SGD(0.05)


@tf.function(jit_compile=True)
def grouped_train_step(images, labels):
    with tf.GradientTape() as tape:
        loss = loss_fn(labels, grouped(images, training=True))
    grads = tape.gradient(loss, grouped.trainable_variables)
    optimizer.apply_gradients(zip(grads, grouped.trainable_variables))
    return loss
