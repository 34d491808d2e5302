"""Held out (fifteenth round): models written the way users write them, none captured here
before, to check the overview (issue 33) after round 14's fixes. Nothing here was looked at
while those were built.

Capture with ``hloviz dump benchmarks/heldout/round15.py:NAME --arg SPEC … -o DIR``:

* ``per_example_step`` (a Keras MLP whose loss is computed per example with ``tf.map_fn``, each
  example's prediction and loss inside the mapped function; RMSprop):
  ``--arg "f32[8,12]" --arg "f32[8,1]"``

and, in JAX, ``round15_ensemble.py`` (an ensemble of four Flax MLPs trained at once with
``jax.vmap`` over stacked parameters, optax ``chain(clip_by_global_norm, adamw)``); then
``python benchmarks/overview_bench.py --no-diffs --model DIR``.
"""
import keras
import tensorflow as tf

_net = keras.Sequential([keras.Input((12,)), keras.layers.Dense(32, activation="tanh", name="h1"),
                         keras.layers.Dense(32, activation="tanh", name="h2"), keras.layers.Dense(1, name="out")],
                        name="regressor")
_opt = keras.optimizers.RMSprop(1e-3)
_opt.build(_net.trainable_variables)


@tf.function(jit_compile=True)
def per_example_step(x, y):
    with tf.GradientTape() as tape:
        def one(pair):
            xi, yi = pair
            return tf.reduce_mean(tf.square(_net(xi[None, :], training=True)[0] - yi))

        losses = tf.map_fn(one, (x, y), fn_output_signature=tf.float32)
        loss = tf.reduce_mean(losses)
    grads = tape.gradient(loss, _net.trainable_variables)
    _opt.apply_gradients(zip(grads, _net.trainable_variables))
    return loss
