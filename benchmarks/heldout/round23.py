"""Held out (twenty-third round, TensorFlow): written at the start of a session, before any change,
as users write them, none captured here before.

* ``unet_step``: a small functional Keras U-Net — two ``Conv2D``/``MaxPooling2D`` levels down,
  ``Conv2DTranspose`` up with the skip joined by ``Concatenate`` — trained on a per-pixel
  ``BinaryCrossentropy(from_logits)`` with ``Adam(amsgrad=True)``.
* ``two_head_step``: a functional Keras text model with two outputs — an ``Embedding``, a
  ``Conv1D``, ``GlobalMaxPooling1D``, ``Dropout``, then a class head and a score head — its two
  losses added with weights by hand, ``Adagrad``.
* ``module_step``: no Keras: a ``tf.Module`` MLP holding its own ``tf.Variable``s, each layer under
  ``tf.name_scope``, trained by hand with ``GradientTape`` and ``assign_sub``.

Capture with ``hloviz dump benchmarks/heldout/round23.py:unet_step --arg "f32[4,32,32,3]" --arg
"f32[4,32,32,1]" -o DIR``, ``…:two_head_step --arg "s32[16,40]" --arg "s32[16]" --arg "f32[16]"
-o DIR`` and ``…:module_step --arg "f32[32,10]" --arg "s32[32]" -o DIR``.
"""
import keras
import tensorflow as tf


def _unet() -> keras.Model:
    inputs = keras.Input((32, 32, 3))
    d1 = keras.layers.Conv2D(16, 3, padding="same", activation="relu", name="down_1")(inputs)
    p1 = keras.layers.MaxPooling2D(name="pool_1")(d1)
    d2 = keras.layers.Conv2D(32, 3, padding="same", activation="relu", name="down_2")(p1)
    p2 = keras.layers.MaxPooling2D(name="pool_2")(d2)
    mid = keras.layers.Conv2D(64, 3, padding="same", activation="relu", name="bottleneck")(p2)
    u2 = keras.layers.Conv2DTranspose(32, 2, strides=2, name="up_2")(mid)
    u2 = keras.layers.Conv2D(32, 3, padding="same", activation="relu", name="up_conv_2")(
        keras.layers.Concatenate(name="skip_2")([u2, d2]))
    u1 = keras.layers.Conv2DTranspose(16, 2, strides=2, name="up_1")(u2)
    u1 = keras.layers.Conv2D(16, 3, padding="same", activation="relu", name="up_conv_1")(
        keras.layers.Concatenate(name="skip_1")([u1, d1]))
    return keras.Model(inputs, keras.layers.Conv2D(1, 1, name="mask")(u1), name="unet")


_unet_model = _unet()
_unet_loss = keras.losses.BinaryCrossentropy(from_logits=True)
_unet_opt = keras.optimizers.Adam(1e-3, amsgrad=True)
_unet_opt.build(_unet_model.trainable_variables)


@tf.function(jit_compile=True)
def unet_step(images, masks):
    with tf.GradientTape() as tape:
        loss = _unet_loss(masks, _unet_model(images, training=True))
    grads = tape.gradient(loss, _unet_model.trainable_variables)
    _unet_opt.apply_gradients(zip(grads, _unet_model.trainable_variables))
    return loss


def _two_head() -> keras.Model:
    tokens = keras.Input((40,), dtype="int32")
    x = keras.layers.Embedding(500, 32, name="embed")(tokens)
    x = keras.layers.Conv1D(48, 5, activation="relu", name="conv")(x)
    x = keras.layers.GlobalMaxPooling1D(name="pool")(x)
    x = keras.layers.Dropout(0.3, name="drop")(x)
    classes = keras.layers.Dense(4, name="class_head")(x)
    score = keras.layers.Dense(1, name="score_head")(x)
    return keras.Model(tokens, [classes, score], name="two_head")


_two_head_model = _two_head()
_class_loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
_score_loss = keras.losses.Huber()
_adagrad = keras.optimizers.Adagrad(0.05)
_adagrad.build(_two_head_model.trainable_variables)


@tf.function(jit_compile=True)
def two_head_step(tokens, labels, scores):
    with tf.GradientTape() as tape:
        classes, score = _two_head_model(tokens, training=True)
        loss = _class_loss(labels, classes) + 0.5 * _score_loss(scores, tf.squeeze(score, -1))
    grads = tape.gradient(loss, _two_head_model.trainable_variables)
    _adagrad.apply_gradients(zip(grads, _two_head_model.trainable_variables))
    return loss


class _Dense(tf.Module):
    def __init__(self, n_in: int, n_out: int, name: str):
        super().__init__(name=name)
        self.w = tf.Variable(tf.random.normal((n_in, n_out), stddev=0.1, seed=1), name="w")
        self.b = tf.Variable(tf.zeros((n_out,)), name="b")

    def __call__(self, x):
        with tf.name_scope(self.name):
            return x @ self.w + self.b


class _Mlp(tf.Module):
    def __init__(self):
        super().__init__(name="mlp")
        self.hidden = _Dense(10, 64, "hidden")
        self.out = _Dense(64, 3, "out")

    def __call__(self, x):
        return self.out(tf.nn.tanh(self.hidden(x)))


_mlp = _Mlp()


@tf.function(jit_compile=True)
def module_step(x, y):
    with tf.GradientTape() as tape:
        logits = _mlp(x)
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
    grads = tape.gradient(loss, _mlp.trainable_variables)
    for v, g in zip(_mlp.trainable_variables, grads):
        v.assign_sub(0.1 * g)
    return loss
