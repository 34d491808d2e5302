"""Held out: a Keras MLP step under mixed precision with a LossScaleOptimizer, and one with
``Adam(global_clipnorm=1.0)`` — the same way as ``opt_steps.py`` (``--arg "f32[8,32]" --arg "s32[8]"``).
"""
import keras
import tensorflow as tf


def _model(name):
    inp = keras.Input((32,))
    x = keras.layers.Dense(64, activation="gelu", name="fc1")(inp)
    x = keras.layers.LayerNormalization(name="ln")(x)
    x = keras.layers.Dropout(0.1, name="drop")(x)
    out = keras.layers.Dense(10, name="out", dtype="float32")(x)
    return keras.Model(inp, out, name=name)

def _step(model, opt):
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    @tf.function(jit_compile=True)
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
            scaled = opt.scale_loss(loss) if hasattr(opt, "scale_loss") else loss
        grads = tape.gradient(scaled, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss
    return step

keras.mixed_precision.set_global_policy("mixed_float16")
mixed_step = _step(_model("mixed"), keras.optimizers.LossScaleOptimizer(keras.optimizers.Adam(1e-3)))
keras.mixed_precision.set_global_policy("float32")
clip_step = _step(_model("clipped"), keras.optimizers.Adam(1e-3, global_clipnorm=1.0))
