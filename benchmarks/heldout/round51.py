"""Held out (fifty-first round, TensorFlow): written to check the rule that a TensorFlow update
written by hand in a scope of the user's is the optimizer's work (found on round 48's DP-SGD
step), on steps that rule was not built on.

* ``momentum_by_hand``: a Keras CNN trained one step by heavy-ball momentum written by hand in a
  ``tf.name_scope("update")`` — a velocity ``tf.Variable`` per weight, ``assign`` and
  ``assign_sub``, a gradient clip by ``tf.clip_by_norm`` first.
* ``gradient_report``: the same model's gradients, their norms computed in a
  ``tf.name_scope("grad_report")`` and returned — no variable written: no update.
* ``sgd_with_report``: both in one step — plain SGD by hand in ``tf.name_scope("update")`` and
  the gradients' norms in ``tf.name_scope("grad_report")``, returned beside the loss.

Capture with ``hloviz dump benchmarks/heldout/round51.py:momentum_by_hand --arg "f32[4,16,16,3]"
--arg "s32[4]" -o DIR`` and the same for ``:gradient_report`` and ``:sgd_with_report``.
"""
import keras
import tensorflow as tf

_cnn = keras.Sequential([keras.Input((16, 16, 3)), keras.layers.Conv2D(8, 3, activation="relu", name="conv"),
                         keras.layers.GlobalAveragePooling2D(name="pool"), keras.layers.Dense(5, name="logits")],
                        name="cnn")
_xent = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
_velocity = [tf.Variable(tf.zeros_like(w), trainable=False, name=f"velocity_{k}")
             for k, w in enumerate(_cnn.trainable_variables)]


def _gradients(images, labels):
    with tf.GradientTape() as tape:
        loss = _xent(labels, _cnn(images, training=True))
    return loss, tape.gradient(loss, _cnn.trainable_variables)


@tf.function(jit_compile=True)
def momentum_by_hand(images, labels):
    loss, grads = _gradients(images, labels)
    with tf.name_scope("update"):
        for w, v, g in zip(_cnn.trainable_variables, _velocity, grads):
            g = tf.clip_by_norm(g, 1.0)
            v.assign(0.9 * v + g)
            w.assign_sub(0.05 * v)
    return loss


@tf.function(jit_compile=True)
def gradient_report(images, labels):
    loss, grads = _gradients(images, labels)
    with tf.name_scope("grad_report"):
        norms = tf.stack([tf.norm(g) for g in grads])
    return loss, norms


@tf.function(jit_compile=True)
def sgd_with_report(images, labels):
    loss, grads = _gradients(images, labels)
    with tf.name_scope("grad_report"):
        norms = tf.stack([tf.norm(g) for g in grads])
    with tf.name_scope("update"):
        for w, g in zip(_cnn.trainable_variables, grads):
            w.assign_sub(0.05 * g)
    return loss, norms
