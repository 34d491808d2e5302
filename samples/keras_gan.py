"""A GAN's training step as Keras users write one: a generator and a discriminator, two Adam
optimizers, two gradient tapes, the discriminator called on real and on generated samples.

The discriminator's weights are read by both of its calls (``discriminator_1/d_hidden``,
``discriminator_3/d_hidden``), by its gradient and by its optimizer; XLA copies each kernel
once for all of them. hloviz draws such a copy, and the weight, in the layer whose forward
work reads it. ``hloviz dump samples/keras_gan.py:gan_step -o DIR`` (arguments from
``HLOVIZ_ARGS``).
"""
import keras
import tensorflow as tf

_generator = keras.Sequential([keras.Input((16,)), keras.layers.Dense(32, activation="relu", name="g_hidden"),
                               keras.layers.Dense(2, name="g_out")], name="generator")
_discriminator = keras.Sequential([keras.Input((2,)), keras.layers.Dense(32, activation="relu", name="d_hidden"),
                                   keras.layers.Dense(1, name="d_out")], name="discriminator")
_g_opt, _d_opt = keras.optimizers.Adam(2e-4), keras.optimizers.Adam(2e-4)
_bce = keras.losses.BinaryCrossentropy(from_logits=True)


@tf.function(jit_compile=True)
def gan_step(noise, real):
    with tf.GradientTape() as g_tape, tf.GradientTape() as d_tape:
        fake = _generator(noise, training=True)
        real_logits = _discriminator(real, training=True)
        fake_logits = _discriminator(fake, training=True)
        d_loss = _bce(tf.ones_like(real_logits), real_logits) + _bce(tf.zeros_like(fake_logits), fake_logits)
        g_loss = _bce(tf.ones_like(fake_logits), fake_logits)
    _g_opt.apply_gradients(zip(g_tape.gradient(g_loss, _generator.trainable_variables),
                               _generator.trainable_variables))
    _d_opt.apply_gradients(zip(d_tape.gradient(d_loss, _discriminator.trainable_variables),
                               _discriminator.trainable_variables))
    return d_loss, g_loss



HLOVIZ_ARGS = {"gan_step": ["f32[8,16]", "f32[8,2]"]}
