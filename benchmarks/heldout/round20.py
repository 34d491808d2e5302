"""Held out (twentieth round): models written the way users write them, none captured here before,
checked after round 19's fixes (a training step's split layers, its Keras loss and its optimized
optimizer closed once the cut is fitted; its folded ops outside every layer one box). Nothing here
was looked at while those were built.

Capture with ``hloviz dump benchmarks/heldout/round20.py:NAME --arg SPEC … -o DIR``:

* ``huber_step`` (a Keras regressor: a ``Normalization`` layer adapted to data, three ``Dense``
  layers with dropout, ``Huber`` loss, Lion): ``--arg "f32[16,8]" --arg "f32[16,1]"``
* ``distill_step`` (knowledge distillation: a frozen teacher CNN and a smaller student, the
  student trained on ``KLDivergence`` to the teacher's softened outputs plus cross entropy on the
  labels, SGD with momentum — the teacher runs forward only): ``--arg "f32[8,16,16,3]" --arg "s32[8]"``

and, in JAX, ``round20_jax.py``; then ``python benchmarks/overview_bench.py --no-diffs --model DIR``.
"""
import keras
import numpy as np
import tensorflow as tf

_norm = keras.layers.Normalization(name="norm")
_norm.adapt(np.random.default_rng(0).normal(size=(64, 8)).astype("float32"))
_regressor = keras.Sequential([
    keras.Input(shape=(8,)),
    _norm,
    keras.layers.Dense(32, activation="relu", name="dense_a"),
    keras.layers.Dropout(0.1, name="drop"),
    keras.layers.Dense(32, activation="relu", name="dense_b"),
    keras.layers.Dense(1, name="out"),
], name="regressor")
_lion = keras.optimizers.Lion(1e-4)
_lion.build(_regressor.trainable_variables)
_huber = keras.losses.Huber()


@tf.function(jit_compile=True)
def huber_step(x, y):
    with tf.GradientTape() as tape:
        loss = _huber(y, _regressor(x, training=True))
    grads = tape.gradient(loss, _regressor.trainable_variables)
    _lion.apply_gradients(zip(grads, _regressor.trainable_variables))
    return loss


def _cnn(width: int, name: str) -> keras.Model:
    return keras.Sequential([
        keras.Input(shape=(16, 16, 3)),
        keras.layers.Conv2D(width, 3, padding="same", activation="relu", name="conv_1"),
        keras.layers.MaxPooling2D(name="pool"),
        keras.layers.Conv2D(width * 2, 3, padding="same", activation="relu", name="conv_2"),
        keras.layers.GlobalAveragePooling2D(name="gap"),
        keras.layers.Dense(10, name="logits"),
    ], name=name)


_teacher = _cnn(32, "teacher")
_student = _cnn(8, "student")
_sgd = keras.optimizers.SGD(0.01, momentum=0.9)
_sgd.build(_student.trainable_variables)
_kl = keras.losses.KLDivergence()
_ce = keras.losses.SparseCategoricalCrossentropy(from_logits=True)


@tf.function(jit_compile=True)
def distill_step(images, labels):
    soft = tf.nn.softmax(_teacher(images, training=False) / 4.0)
    with tf.GradientTape() as tape:
        logits = _student(images, training=True)
        loss = 0.5 * _kl(soft, tf.nn.softmax(logits / 4.0)) + 0.5 * _ce(labels, logits)
    grads = tape.gradient(loss, _student.trainable_variables)
    _sgd.apply_gradients(zip(grads, _student.trainable_variables))
    return loss
