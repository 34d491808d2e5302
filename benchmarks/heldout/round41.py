"""Held out (forty-first round, TensorFlow): written at the start of a session, before any change
it made, not looked at while its fixes were made.

* ``two_head_step``: a Keras functional model with two inputs (an image, a row of tabular
  features) and two outputs (a class and a regression target), trained one step by ``AdamW`` on a
  weighted sum of the two losses, gradients clipped by their global norm, two ``keras.metrics``
  (``SparseCategoricalAccuracy``, ``Mean``) updated inside the step.
* ``log_mel_classifier``: an audio classifier on raw waveforms — ``tf.signal.stft``, magnitude,
  ``tf.signal.linear_to_mel_weight_matrix``, ``log``, then ``Conv1D`` ×2, global average pooling, a
  ``Dense`` head (inference).

Capture with ``hloviz dump benchmarks/heldout/round41.py:two_head_step --arg "f32[4,16,16,3]"
--arg "f32[4,5]" --arg "s32[4]" --arg "f32[4]" -o DIR`` and ``hloviz dump
benchmarks/heldout/round41.py:log_mel_classifier --arg "f32[2,4000]" -o DIR``.
"""
import keras
import tensorflow as tf

_image = keras.Input((16, 16, 3), name="image")
_table = keras.Input((5,), name="table")
_x = keras.layers.Conv2D(8, 3, activation="relu", name="conv")(_image)
_x = keras.layers.GlobalAveragePooling2D(name="pool")(_x)
_t = keras.layers.Dense(8, activation="relu", name="table_dense")(_table)
_h = keras.layers.Concatenate(name="join")([_x, _t])
_h = keras.layers.Dense(16, activation="relu", name="shared")(_h)
_two_head = keras.Model([_image, _table], [keras.layers.Dense(3, name="klass")(_h),
                                          keras.layers.Dense(1, name="value")(_h)], name="two_head")
_adamw = keras.optimizers.AdamW(1e-3, weight_decay=1e-4)
_adamw.build(_two_head.trainable_variables)
_xent = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
_accuracy = keras.metrics.SparseCategoricalAccuracy(name="accuracy")
_mean_loss = keras.metrics.Mean(name="loss")


@tf.function(jit_compile=True)
def two_head_step(images, table, labels, targets):
    with tf.GradientTape() as tape:
        logits, value = _two_head([images, table], training=True)
        loss = _xent(labels, logits) + 0.5 * tf.reduce_mean(tf.square(tf.squeeze(value, -1) - targets))
    grads = tape.gradient(loss, _two_head.trainable_variables)
    grads, _ = tf.clip_by_global_norm(grads, 1.0)
    _adamw.apply_gradients(zip(grads, _two_head.trainable_variables))
    _accuracy.update_state(labels, logits)
    _mean_loss.update_state(loss)
    return loss


_mel = tf.signal.linear_to_mel_weight_matrix(num_mel_bins=16, num_spectrogram_bins=129, sample_rate=8000)
_audio = keras.Sequential([
    keras.Input((None, 16)),
    keras.layers.Conv1D(16, 3, activation="relu", name="conv_a"),
    keras.layers.Conv1D(16, 3, activation="relu", name="conv_b"),
    keras.layers.GlobalAveragePooling1D(name="pool"),
    keras.layers.Dense(5, name="label"),
], name="audio")


@tf.function(jit_compile=True)
def log_mel_classifier(waveform):
    spectrum = tf.abs(tf.signal.stft(waveform, frame_length=256, frame_step=128))
    log_mel = tf.math.log(tf.tensordot(spectrum, _mel, 1) + 1e-6)
    return _audio(log_mel)
