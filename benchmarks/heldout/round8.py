"""Held out (eighth round): captures written the way users write them, to check this round's
capture changes — the entry's parameter shapes read from its header line, the buffer assignment
sent as text and read by hloviz, the result taken before the child has exited — on inputs the
round did not look at while it was built.

Capture each with ``hloviz dump benchmarks/heldout/round8.py:NAME [--arg SPEC …] -o DIR``:

* ``two_tower_step``: ``--arg "{'user': 'f32[16,24]', 'item': 'f32[16,40]'}" --arg "f32[16]"``
  (a two-input Keras model trained with Lion, its inputs a dict);
* ``many_args`` (its ``input_signature``: nine arguments, and a captured variable: ten entry
  parameters named from one header line);
* ``chatty_step``: ``--arg "f32[64,32]"`` (prints while tracing and from a thread that goes on
  printing after the capture).

and compare ``capture.json`` and ``memory.json`` with the same dumps made by the round's base
commit (the oracle: the whole-module parse that named the parameters before, and the record read
in the child). Measured (2026-12-05, base 95fc282): all three equal but for ``target``; the
thread's lines printed after the result are not forwarded (nor were they before: the child
ends with ``os._exit`` once the result is sent).
"""
import threading
import time

import keras
import tensorflow as tf


def _two_tower() -> keras.Model:
    user = keras.Input((24,), name="user")
    item = keras.Input((40,), name="item")
    u = keras.layers.Dense(32, activation="relu", name="user_tower")(user)
    i = keras.layers.Dense(32, activation="relu", name="item_tower")(item)
    score = keras.layers.Dot(axes=1, name="match")([u, i])
    return keras.Model({"user": user, "item": item}, score, name="two_tower")


_tower = _two_tower()
_lion = keras.optimizers.Lion(1e-4)
_lion.build(_tower.trainable_variables)


@tf.function(jit_compile=True)
def two_tower_step(features, clicked):
    with tf.GradientTape() as tape:
        score = tf.squeeze(_tower(features, training=True), -1)
        loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=clicked, logits=score))
    grads = tape.gradient(loss, _tower.trainable_variables)
    _lion.apply_gradients(zip(grads, _tower.trainable_variables))
    return loss


_w = tf.Variable(tf.random.normal((6, 6)), name="mixing")


@tf.function(jit_compile=True, input_signature=[tf.TensorSpec((6,), tf.float32)] * 8 + [tf.TensorSpec((), tf.int32)])
def many_args(a, b, c, d, e, f, g, h, steps):
    x = tf.stack([a, b, c, d, e, f, g, h])
    return tf.reduce_sum(tf.tanh(x @ _w)) * tf.cast(steps, tf.float32)


def _talk_on() -> None:
    for n in range(50):
        print(f"background thread line {n}", flush=True)
        time.sleep(0.01)


@tf.function(jit_compile=True)
def chatty_step(x):
    print("tracing chatty_step")  # runs once, while tracing
    threading.Thread(target=_talk_on, daemon=True).start()
    return tf.nn.softmax(x @ tf.transpose(x))
