"""Held out (thirty-seventh round, TensorFlow): written after this session's fixes (a dropout's bits
read out of a tuple, a repeat's copies in forward order, captured tensors' names, a loop handed
its gradient's empty buffers, weight copies read by a loss's penalty), and not looked at while
they were made.

* ``convlstm_step``: a ``ConvLSTM2D`` over a short sequence of frames, a ``BatchNormalization`` and
  a ``Conv2D`` head, trained one step by ``Adam`` on a mean-squared error.
* ``groupnorm_cnn_step``: a CNN of ``Conv2D`` + ``GroupNormalization`` + ``SpatialDropout2D``
  blocks and a ``GlobalMaxPooling2D`` head, trained one step by SGD with Nesterov momentum.

Capture with ``hloviz dump benchmarks/heldout/round37.py:convlstm_step --arg "f32[2,4,8,8,1]"
--arg "f32[2,8,8,1]" -o DIR`` and ``…:groupnorm_cnn_step --arg "f32[4,16,16,3]" --arg "s32[4]" -o DIR``.
"""
import keras
import tensorflow as tf

_convlstm = keras.Sequential([
    keras.Input((4, 8, 8, 1)),
    keras.layers.ConvLSTM2D(6, 3, padding="same", name="recurrent"),
    keras.layers.BatchNormalization(name="norm"),
    keras.layers.Conv2D(1, 1, name="predict"),
], name="nowcast")
_adam = keras.optimizers.Adam(1e-3)
_adam.build(_convlstm.trainable_variables)


@tf.function(jit_compile=True)
def convlstm_step(frames, target):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(_convlstm(frames, training=True) - target))
    grads = tape.gradient(loss, _convlstm.trainable_variables)
    _adam.apply_gradients(zip(grads, _convlstm.trainable_variables))
    return loss


def _block(x, width, k):
    x = keras.layers.Conv2D(width, 3, padding="same", name=f"conv{k}")(x)
    x = keras.layers.GroupNormalization(groups=4, name=f"gn{k}")(x)
    x = keras.layers.Activation("swish", name=f"act{k}")(x)
    return keras.layers.SpatialDropout2D(0.1, name=f"drop{k}")(x)


_images = keras.Input((16, 16, 3))
_h = _block(_images, 8, 1)
_h = _block(_h, 16, 2)
_gn_cnn = keras.Model(_images, keras.layers.Dense(5, name="classify")(keras.layers.GlobalMaxPooling2D(name="pool")(_h)),
                      name="gn_cnn")
_nesterov = keras.optimizers.SGD(0.05, momentum=0.9, nesterov=True)
_nesterov.build(_gn_cnn.trainable_variables)
_xent = keras.losses.SparseCategoricalCrossentropy(from_logits=True)


@tf.function(jit_compile=True)
def groupnorm_cnn_step(images, labels):
    with tf.GradientTape() as tape:
        loss = _xent(labels, _gn_cnn(images, training=True))
    grads = tape.gradient(loss, _gn_cnn.trainable_variables)
    _nesterov.apply_gradients(zip(grads, _gn_cnn.trainable_variables))
    return loss
