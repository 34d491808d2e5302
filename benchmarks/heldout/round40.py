"""Held out (fortieth round, TensorFlow): written after rounds 38 and 39's fixes, not looked at
while they were made.

* ``video_rnn_step``: a CNN-RNN video classifier — a ``TimeDistributed`` ``Conv2D`` +
  ``MaxPooling2D`` + ``Flatten`` over each frame, an ``LSTM`` over the frames' features, a
  ``Dense`` head — trained one step by SGD with momentum and gradient clipping by value.

Capture with ``hloviz dump benchmarks/heldout/round40.py:video_rnn_step --arg "f32[2,5,16,16,3]"
--arg "s32[2]" -o DIR``.
"""
import keras
import tensorflow as tf

_video = keras.Sequential([
    keras.Input((5, 16, 16, 3)),
    keras.layers.TimeDistributed(keras.layers.Conv2D(8, 3, activation="relu"), name="frame_conv"),
    keras.layers.TimeDistributed(keras.layers.MaxPooling2D(2), name="frame_pool"),
    keras.layers.TimeDistributed(keras.layers.Flatten(), name="frame_flat"),
    keras.layers.LSTM(16, name="temporal"),
    keras.layers.Dense(4, name="classify"),
], name="video_rnn")
_sgd = keras.optimizers.SGD(0.01, momentum=0.9, clipvalue=0.5)
_sgd.build(_video.trainable_variables)
_xent = keras.losses.SparseCategoricalCrossentropy(from_logits=True)


@tf.function(jit_compile=True)
def video_rnn_step(clips, labels):
    with tf.GradientTape() as tape:
        loss = _xent(labels, _video(clips, training=True))
    grads = tape.gradient(loss, _video.trainable_variables)
    _sgd.apply_gradients(zip(grads, _video.trainable_variables))
    return loss
