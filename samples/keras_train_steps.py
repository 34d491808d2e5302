"""A Keras application's whole training step, as a user would hand it to hloviz: MobileNetV3Small
(random weights, 32×32×3 images, the smallest it accepts: the program has the same kernels at
any image size, only their shapes change) with sparse categorical cross-entropy and Adam, inside
``tf.function(jit_compile=True)``. About 2,000 kernels after XLA's optimizations: the size the
speed goals of issue 32 are stated for.

The saved capture ``samples/captures/mobilenet_v3_adam`` was made from this file with
TensorFlow 2.21::

    hloviz dump samples/keras_train_steps.py:mobilenet_v3_adam -o samples/captures/mobilenet_v3_adam
"""

import keras
import tensorflow as tf

HLOVIZ_ARGS = {"mobilenet_v3_adam": ["f32[8,32,32,3]", "s32[8]"]}

keras.utils.set_random_seed(0)

# Built when the file is imported, eagerly: a traced function must not create variables.
# Keras documents weights=None (random weights) though its stub types the argument as str.
model = keras.applications.MobileNetV3Small(weights=None, input_shape=(32, 32, 3), classes=10)  # pyright: ignore[reportArgumentType]
loss_fn = keras.losses.SparseCategoricalCrossentropy()
optimizer = keras.optimizers.Adam(learning_rate=1e-3)
optimizer.build(model.trainable_variables)


@tf.function(jit_compile=True)
def mobilenet_v3_adam(images, labels):
    """Forward, loss, gradients and one Adam update of every trainable variable; returns the loss."""
    with tf.GradientTape() as tape:
        loss = loss_fn(labels, model(images, training=True))
    grads = tape.gradient(loss, model.trainable_variables)  # pyright: ignore[reportCallIssue, reportArgumentType]
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss
