"""Held out (sixtieth round, TensorFlow): what ``model.fit`` compiles, written before any change it
might lead to and run through every command.

* ``fit_step``: a Keras functional CNN compiled with ``model.compile(optimizer="adam",
  loss=..., metrics=["accuracy"])``; the step is Keras' own ``model.train_step((x, y))`` —
  the loss, its gradient, Adam, the loss tracker's and the accuracy metric's variable updates —
  in a ``tf.function(jit_compile=True)``, as ``fit`` runs it.
* ``bf16_step``: the same kind of model under the ``mixed_bfloat16`` policy (bfloat16 compute,
  float32 weights), trained by ``SGD`` with momentum through ``train_step``.

Capture with ``hloviz dump benchmarks/heldout/round60.py:fit_step --arg "f32[8,16,16,3]" --arg
"s32[8]" -o DIR`` and ``… :bf16_step --arg "f32[8,20]" --arg "s32[8]" -o DIR``.
"""
import keras
import tensorflow as tf

_inputs = keras.Input((16, 16, 3))
_h = keras.layers.Conv2D(8, 3, activation="relu", name="conv_a")(_inputs)
_h = keras.layers.MaxPooling2D(name="pool")(_h)
_h = keras.layers.Conv2D(16, 3, activation="relu", name="conv_b")(_h)
_h = keras.layers.GlobalAveragePooling2D(name="gap")(_h)
_outputs = keras.layers.Dense(5, name="logits")(_h)
_model = keras.Model(_inputs, _outputs, name="fit_cnn")
_model.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
               metrics=["accuracy"])


@tf.function(jit_compile=True)
def fit_step(x, y):
    return _model.train_step((x, y))


keras.mixed_precision.set_global_policy("mixed_bfloat16")
_bf16 = keras.Sequential([keras.Input((20,)), keras.layers.Dense(32, activation="gelu", name="hidden"),
                          keras.layers.Dense(4, name="out", dtype="float32")], name="bf16_mlp")
keras.mixed_precision.set_global_policy("float32")
_bf16.compile(optimizer=keras.optimizers.SGD(0.01, momentum=0.9),
              loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))


@tf.function(jit_compile=True)
def bf16_step(x, y):
    return _bf16.train_step((x, y))
