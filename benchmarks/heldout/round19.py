"""Held out (nineteenth round): models written the way users write them, none captured here
before, checked after the round-18 fixes (an entry that only calls a jitted step, closed-over
weights folded, an optimizer's scalar bookkeeping closed). Nothing here was looked at while
those were built.

Capture with ``hloviz dump benchmarks/heldout/round19.py:NAME --arg SPEC … -o DIR``:

* ``masked_lstm_step`` (a Keras tagger: ``Embedding(mask_zero=True)``, a masked ``LSTM`` returning
  sequences, ``TimeDistributed(Dense)``, Adagrad; the mask makes every loop step select between
  the new and the old state): ``--arg "s32[4,12]" --arg "s32[4,12]"``
* ``video_step`` (a Keras ``Conv3D`` video classifier with ``MaxPooling3D``, ``BatchNormalization``
  and ``SpatialDropout3D``, Adadelta): ``--arg "f32[2,8,16,16,3]" --arg "s32[2]"``
* ``pinn_step`` (a physics-informed MLP: the loss holds the network's first and second derivatives
  with respect to its input, taken with nested ``tf.GradientTape``s, trained with Adam — the
  backward pass differentiates a backward pass): ``--arg "f32[64,1]"``

and, in JAX, ``round19_jax.py``; then ``python benchmarks/overview_bench.py --no-diffs --model DIR``.
"""
import keras
import tensorflow as tf

_tagger = keras.Sequential([
    keras.Input(shape=(12,), dtype="int32"),
    keras.layers.Embedding(500, 32, mask_zero=True, name="embed"),
    keras.layers.LSTM(48, return_sequences=True, name="lstm"),
    keras.layers.TimeDistributed(keras.layers.Dense(9), name="tags"),
], name="tagger")
_adagrad = keras.optimizers.Adagrad(0.05)
_adagrad.build(_tagger.trainable_variables)
_tag_loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)


@tf.function(jit_compile=True)
def masked_lstm_step(tokens, tags):
    with tf.GradientTape() as tape:
        loss = _tag_loss(tags, _tagger(tokens, training=True))
    grads = tape.gradient(loss, _tagger.trainable_variables)
    _adagrad.apply_gradients(zip(grads, _tagger.trainable_variables))
    return loss


_video = keras.Sequential([
    keras.Input(shape=(8, 16, 16, 3)),
    keras.layers.Conv3D(16, 3, padding="same", activation="relu", name="conv3d_1"),
    keras.layers.BatchNormalization(name="bn_1"),
    keras.layers.MaxPooling3D(2, name="pool_1"),
    keras.layers.Conv3D(32, 3, padding="same", activation="relu", name="conv3d_2"),
    keras.layers.BatchNormalization(name="bn_2"),
    keras.layers.SpatialDropout3D(0.2, name="drop"),
    keras.layers.GlobalAveragePooling3D(name="pool_2"),
    keras.layers.Dense(5, name="classes"),
], name="video_net")
_adadelta = keras.optimizers.Adadelta(1.0)
_adadelta.build(_video.trainable_variables)
_video_loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)


@tf.function(jit_compile=True)
def video_step(clips, labels):
    with tf.GradientTape() as tape:
        loss = _video_loss(labels, _video(clips, training=True))
    grads = tape.gradient(loss, _video.trainable_variables)
    _adadelta.apply_gradients(zip(grads, _video.trainable_variables))
    return loss


_pinn = keras.Sequential([
    keras.Input(shape=(1,)),
    keras.layers.Dense(32, activation="tanh", name="hidden_1"),
    keras.layers.Dense(32, activation="tanh", name="hidden_2"),
    keras.layers.Dense(1, name="u"),
], name="pinn")
_pinn_opt = keras.optimizers.Adam(1e-3)
_pinn_opt.build(_pinn.trainable_variables)


@tf.function(jit_compile=True)
def pinn_step(x):
    with tf.GradientTape() as outer:
        with tf.GradientTape() as t2:
            t2.watch(x)
            with tf.GradientTape() as t1:
                t1.watch(x)
                u = _pinn(x, training=True)
            du = t1.gradient(u, x)
        d2u = t2.gradient(du, x)
        residual = d2u + tf.sin(3.0 * x)  # u'' = -sin(3x)
        boundary = _pinn(tf.constant([[0.0], [1.0]]), training=True)
        loss = tf.reduce_mean(tf.square(residual)) + tf.reduce_mean(tf.square(boundary))
    grads = outer.gradient(loss, _pinn.trainable_variables)
    _pinn_opt.apply_gradients(zip(grads, _pinn.trainable_variables))
    return loss
