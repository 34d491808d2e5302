"""Held out (twenty-first round): models written the way users write them, none captured here
before, checked after this round's fixes (a training step's ROOT out of its inline loss's block,
loose ops too few to crowd the top level blocked by their arrows, a forward loop's results read as
gradients element by element). Nothing here was looked at while those were built.

Capture with ``hloviz dump benchmarks/heldout/round21.py:NAME --arg SPEC … -o DIR``:

* ``two_input_step`` (a functional Keras model with an image branch and a tabular branch
  concatenated, a sigmoid output, ``BinaryCrossentropy`` plus an L2 penalty summed inline over
  the kernels, Adam on an ``ExponentialDecay`` schedule): ``--arg "f32[8,16,16,1]" --arg
  "f32[8,5]" --arg "f32[8,1]"``
* ``char_step`` (a character model: ``Embedding``, ``Conv1D``, ``GRU``, ``Dense`` over 30
  classes, ``CategoricalCrossentropy(label_smoothing=0.1)`` on one-hot labels made in the step,
  AdamW with ``clipnorm``): ``--arg "s32[8,20]" --arg "s32[8]"``

and, in JAX, ``round21_jax.py``; then ``python benchmarks/overview_bench.py --no-diffs --model DIR``.
"""
import keras
import tensorflow as tf

_image = keras.Input((16, 16, 1), name="image")
_table = keras.Input((5,), name="table")
_x = keras.layers.Conv2D(8, 3, activation="relu", name="img_conv")(_image)
_x = keras.layers.MaxPooling2D(name="img_pool")(_x)
_x = keras.layers.Flatten(name="img_flat")(_x)
_t = keras.layers.Dense(8, activation="relu", name="tab_dense")(_table)
_j = keras.layers.Concatenate(name="join")([_x, _t])
_j = keras.layers.Dense(16, activation="relu", name="fuse")(_j)
_out = keras.layers.Dense(1, activation="sigmoid", name="prob")(_j)
_two = keras.Model([_image, _table], _out, name="two_input")
_bce = keras.losses.BinaryCrossentropy()
_sched = keras.optimizers.schedules.ExponentialDecay(1e-3, decay_steps=100, decay_rate=0.9)
_two_opt = keras.optimizers.Adam(_sched)
_two_opt.build(_two.trainable_variables)


@tf.function(jit_compile=True)
def two_input_step(image, table, target):
    with tf.GradientTape() as tape:
        prob = _two([image, table], training=True)
        l2 = tf.add_n([tf.nn.l2_loss(v) for v in _two.trainable_variables if "kernel" in v.name])
        loss = _bce(target, prob) + 1e-4 * l2
    grads = tape.gradient(loss, _two.trainable_variables)
    _two_opt.apply_gradients(zip(grads, _two.trainable_variables))
    return loss


_char = keras.Sequential([
    keras.Input((20,), dtype="int32"),
    keras.layers.Embedding(30, 12, name="chars"),
    keras.layers.Conv1D(16, 3, padding="same", activation="relu", name="conv"),
    keras.layers.GRU(16, name="gru"),
    keras.layers.Dense(30, name="next_char"),
], name="char_model")
_cce = keras.losses.CategoricalCrossentropy(from_logits=True, label_smoothing=0.1)
_char_opt = keras.optimizers.AdamW(1e-3, clipnorm=1.0)
_char_opt.build(_char.trainable_variables)


@tf.function(jit_compile=True)
def char_step(chars, next_char):
    with tf.GradientTape() as tape:
        logits = _char(chars, training=True)
        loss = _cce(tf.one_hot(next_char, 30), logits)
    grads = tape.gradient(loss, _char.trainable_variables)
    _char_opt.apply_gradients(zip(grads, _char.trainable_variables))
    return loss
