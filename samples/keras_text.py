"""A Keras text classifier (Embedding → LSTM → Dense) trained with Adam, as users write one.

Its LSTM layer holds the loop's setup and its outputs' gathering as well as the loop, so the
middle of the layer's instructions in the text stands after the ``dense`` layer that reads its
output: the overview places ``dense`` below ``lstm`` by what it reads. ``hloviz dump
samples/keras_text.py:text_train_step -o DIR`` (the argument shapes come from ``HLOVIZ_ARGS``).
"""
import keras
import tensorflow as tf

HLOVIZ_ARGS = {"text_train_step": ["s32[4,20]", "s32[4]"]}

text = keras.Sequential([keras.Input((20,), dtype="int32"), keras.layers.Embedding(50, 16),
                         keras.layers.LSTM(32), keras.layers.Dense(5, activation="softmax")])
loss_fn = keras.losses.SparseCategoricalCrossentropy()
optimizer = keras.optimizers.Adam(1e-3)


@tf.function(jit_compile=True)
def text_train_step(tokens, labels):
    with tf.GradientTape() as tape:
        loss = loss_fn(labels, text(tokens, training=True))
    grads = tape.gradient(loss, text.trainable_variables)
    optimizer.apply_gradients(zip(grads, text.trainable_variables))
    return loss
