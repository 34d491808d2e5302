"""Held out: a small Keras CNN's training step with optimizers the samples do not use.

Written for issue 33's check on unseen models (not tuned on): capture each with
``hloviz dump benchmarks/heldout/opt_steps.py:rmsprop_step --arg "f32[4,16,16,3]" --arg "s32[4]" -o DIR``
(``adamw_step``, ``adagrad_step``, ``momentum_step`` the same), then
``python benchmarks/overview_bench.py --no-diffs --model DIR``. Figures:
benchmarks/results/overview_bench.txt.
"""
import keras
import tensorflow as tf


def _model():
    inp = keras.Input((16, 16, 3))
    x = keras.layers.Conv2D(8, 3, activation="relu", name="c1")(inp)
    x = keras.layers.BatchNormalization(name="bn1")(x)
    x = keras.layers.GlobalAveragePooling2D(name="gap")(x)
    out = keras.layers.Dense(5, name="head")(x)
    return keras.Model(inp, out, name="tiny")

def _step(opt):
    model = _model()
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    @tf.function(jit_compile=True)
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss
    return step

rmsprop_step = _step(keras.optimizers.RMSprop(1e-3))
adamw_step = _step(keras.optimizers.AdamW(1e-3, weight_decay=0.01))
adagrad_step = _step(keras.optimizers.Adagrad(1e-2))
momentum_step = _step(keras.optimizers.SGD(1e-2, momentum=0.9, nesterov=True))
