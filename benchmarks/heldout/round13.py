"""Held out (thirteenth round): models written the way users write them, none captured here
before, to check the overview (issue 33) after a model's loose ops beside its layers began to be
blocked. Nothing here was looked at while that was built.

Capture each with ``hloviz dump benchmarks/heldout/round13.py:NAME --arg SPEC … -o DIR``:

* ``multitask_step`` (a Keras functional trunk of three conv blocks with two heads, a
  ten-way classifier and a box regressor, two losses weighted into one; gradients clipped by
  their global norm; SGD with Nesterov momentum): ``--arg "f32[8,32,32,3]" --arg "s32[8]" --arg "f32[8,4]"``
* ``wavenet`` (a Keras functional stack of dilated causal ``Conv1D`` residual blocks, gated
  tanh·sigmoid, with a skip connection from every block summed at the end; inference):
  ``--arg "f32[2,256,1]"``

and, in JAX, ``round13_gnn.py`` (a graph network written with ``jax.ops.segment_sum``); then
``python benchmarks/overview_bench.py --no-diffs --model DIR``.
"""
import keras
import tensorflow as tf


def _multitask() -> keras.Model:
    images = keras.Input((32, 32, 3), name="images")
    x = images
    for i, width in enumerate((16, 32, 64)):
        x = keras.layers.Conv2D(width, 3, padding="same", name=f"conv{i}")(x)
        x = keras.layers.BatchNormalization(name=f"bn{i}")(x)
        x = keras.layers.ReLU(name=f"relu{i}")(x)
        x = keras.layers.MaxPooling2D(name=f"pool{i}")(x)
    x = keras.layers.GlobalAveragePooling2D(name="gap")(x)
    shared = keras.layers.Dense(64, activation="relu", name="shared")(x)
    logits = keras.layers.Dense(10, name="class_head")(shared)
    boxes = keras.layers.Dense(4, activation="sigmoid", name="box_head")(shared)
    return keras.Model(images, {"label": logits, "box": boxes}, name="multitask")


_mt = _multitask()
_mt_opt = keras.optimizers.SGD(0.01, momentum=0.9, nesterov=True)
_mt_opt.build(_mt.trainable_variables)
_ce = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
_huber = keras.losses.Huber()


@tf.function(jit_compile=True)
def multitask_step(images, labels, boxes):
    with tf.GradientTape() as tape:
        out = _mt(images, training=True)
        loss = _ce(labels, out["label"]) + 5.0 * _huber(boxes, out["box"])
    grads = tape.gradient(loss, _mt.trainable_variables)
    grads, _ = tf.clip_by_global_norm(grads, 1.0)
    _mt_opt.apply_gradients(zip(grads, _mt.trainable_variables))
    return loss


def _wavenet(blocks: int = 8, channels: int = 32) -> keras.Model:
    audio = keras.Input((256, 1), name="audio")
    x = keras.layers.Conv1D(channels, 1, name="input_proj")(audio)
    skips = []
    for i in range(blocks):
        dilation = 2 ** (i % 4)
        f = keras.layers.Conv1D(channels, 2, dilation_rate=dilation, padding="causal", activation="tanh",
                                name=f"filter_{i}")(x)
        g = keras.layers.Conv1D(channels, 2, dilation_rate=dilation, padding="causal", activation="sigmoid",
                                name=f"gate_{i}")(x)
        z = keras.layers.Multiply(name=f"gated_{i}")([f, g])
        skips.append(keras.layers.Conv1D(channels, 1, name=f"skip_{i}")(z))
        x = keras.layers.Add(name=f"residual_{i}")([x, keras.layers.Conv1D(channels, 1, name=f"res_{i}")(z)])
    out = keras.layers.ReLU(name="skip_relu")(keras.layers.Add(name="skip_sum")(skips))
    out = keras.layers.Conv1D(256, 1, name="logits")(out)
    return keras.Model(audio, out, name="wavenet")


_wn = _wavenet()


@tf.function(jit_compile=True)
def wavenet(audio):
    return tf.nn.softmax(_wn(audio, training=False))
