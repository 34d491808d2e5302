"""Held out (thirty-third round, TensorFlow): written after this session's changes to small models'
overviews (kernels kept closed where op names name the model's parts, a box saying what a fold did
in it, a layer titled by its Keras name), and not looked at while they were made.

* ``tabular_classify``: a ``keras.Sequential`` MLP for tabular data — ``Normalization`` adapted
  to data, two ``Dense`` + ``BatchNormalization`` + GELU + ``Dropout`` blocks, a softmax head —
  run for inference.
* ``text_encoder``: a functional text classifier — ``Embedding``, a ``Conv1D``,
  ``LayerNormalization``, ``GlobalAveragePooling1D``, a ``Dense`` head — run for inference.
* ``scoped_fn``: a hand-written function of ``tf.name_scope`` blocks (``encoder``, ``decoder``)
  of matrix products, ``tanh`` and a ``reduce_mean``, no Keras.

Capture with ``hloviz dump benchmarks/heldout/round33.py:tabular_classify --arg "f32[8,12]" -o DIR``,
``…:text_encoder --arg "s32[4,20]" -o DIR`` and ``…:scoped_fn --arg "f32[6,32]" -o DIR``.
"""
import keras
import numpy as np
import tensorflow as tf

_norm = keras.layers.Normalization(name="normalize")
_norm.adapt(np.random.default_rng(0).normal(size=(64, 12)).astype("float32"))


def _block(width, k):
    return [keras.layers.Dense(width, name=f"dense_{k}"), keras.layers.BatchNormalization(name=f"bn_{k}"),
            keras.layers.Activation("gelu", name=f"gelu_{k}"), keras.layers.Dropout(0.2, name=f"drop_{k}")]


_tabular = keras.Sequential([keras.Input((12,)), _norm, *_block(32, 1), *_block(16, 2),
                             keras.layers.Dense(3, activation="softmax", name="head")], name="tabular")


@tf.function(jit_compile=True)
def tabular_classify(x):
    return _tabular(x, training=False)


_tokens = keras.Input((20,), dtype="int32")
_h = keras.layers.Embedding(500, 16, name="embed")(_tokens)
_h = keras.layers.Conv1D(16, 3, padding="same", activation="relu", name="conv")(_h)
_h = keras.layers.LayerNormalization(name="norm")(_h)
_h = keras.layers.GlobalAveragePooling1D(name="pool")(_h)
_text = keras.Model(_tokens, keras.layers.Dense(2, name="logits")(_h), name="text")


@tf.function(jit_compile=True)
def text_encoder(tokens):
    return _text(tokens, training=False)


_rng = np.random.default_rng(1)
_we = tf.constant(_rng.normal(size=(32, 16)).astype("float32"))
_wd = tf.constant(_rng.normal(size=(16, 32)).astype("float32"))


@tf.function(jit_compile=True)
def scoped_fn(x):
    with tf.name_scope("encoder"):
        z = tf.tanh(tf.matmul(x, _we))
    with tf.name_scope("decoder"):
        y = tf.matmul(z, _wd)
    with tf.name_scope("loss"):
        return tf.reduce_mean(tf.square(y - x))
