"""Three small Keras models, as a new user would hand them to hloviz.

* ``cnn_train_step(images, labels)``: one training step of a small CNN (two ``Conv2D``, a
  ``MaxPooling2D``, two ``Dense``) with sparse categorical cross-entropy and Adam, written the
  usual way — ``tf.GradientTape`` inside ``tf.function(jit_compile=True)``;
* ``lstm_forward(sequence)``: an ``LSTM`` layer over a batch of sequences (a ``while`` loop);
* ``mha_block(tokens)``: a ``MultiHeadAttention`` block with its residual and ``LayerNormalization``.

The saved captures in ``samples/captures/keras_*`` were made from this file with TensorFlow 2.21::

    hloviz dump samples/keras_models.py:cnn_train_step -o samples/captures/keras_cnn_train
    hloviz dump samples/keras_models.py:lstm_forward -o samples/captures/keras_lstm
    hloviz dump samples/keras_models.py:mha_block -o samples/captures/keras_mha

The models and the optimizer are built when the file is imported, so that tracing creates no
variables; the argument shapes come from ``HLOVIZ_ARGS`` (nothing is allocated to trace them).
"""

import keras
import tensorflow as tf

HLOVIZ_ARGS = {
    "cnn_train_step": ["f32[32,28,28,1]", "s32[32]"],
    "lstm_forward": ["f32[8,20,16]"],
    "mha_block": ["f32[4,16,64]"],
}

keras.utils.set_random_seed(0)

cnn = keras.Sequential([
    keras.Input((28, 28, 1)),
    keras.layers.Conv2D(8, 3, activation="relu", name="conv1"),
    keras.layers.Conv2D(16, 3, activation="relu", name="conv2"),
    keras.layers.MaxPooling2D(2, name="pool"),
    keras.layers.Flatten(name="flatten"),
    keras.layers.Dense(32, activation="relu", name="dense1"),
    keras.layers.Dense(10, name="logits"),
], name="cnn")
loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
optimizer = keras.optimizers.Adam(learning_rate=1e-3)
optimizer.build(cnn.trainable_variables)


@tf.function(jit_compile=True)
def cnn_train_step(images, labels):
    """Forward, loss, gradients and one Adam update; returns the loss."""
    with tf.GradientTape() as tape:
        loss = loss_fn(labels, cnn(images, training=True))
    grads = tape.gradient(loss, cnn.trainable_variables)
    optimizer.apply_gradients(zip(grads, cnn.trainable_variables))
    return loss


lstm = keras.layers.LSTM(32, name="lstm")
lstm.build((None, 20, 16))


@tf.function(jit_compile=True)
def lstm_forward(sequence):
    """The LSTM's last hidden state for each sequence of the batch."""
    return lstm(sequence)


attention = keras.layers.MultiHeadAttention(num_heads=4, key_dim=16, name="mha")
norm = keras.layers.LayerNormalization(name="norm")
attention.build((None, 16, 64), (None, 16, 64))
norm.build((None, 16, 64))


@tf.function(jit_compile=True)
def mha_block(tokens):
    """Self-attention, a residual connection and layer normalization."""
    return norm(tokens + attention(tokens, tokens))
