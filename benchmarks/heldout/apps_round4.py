"""Held out (fourth round): training steps written as users write them, with layers and
optimizers no earlier round used, not looked at while the overview's rules were built: a
ConvNeXt (LayerNorm, GELU, layer scale) with AdamW, an LSTM text classifier (a while loop) with
Adam, MobileNet (v1: depthwise convolutions, no residuals) with SGD and momentum, and a subclassed Keras model
(residual blocks made in a Python loop) with Adagrad. Capture each with ``hloviz dump
benchmarks/heldout/apps_round4.py:NAME --arg ... -o DIR``:

* ``convnext_adamw_step``, ``mobilenet_sgd_step``: ``--arg "f32[2,32,32,3]" --arg "s32[2]"``
* ``lstm_adam_step``: ``--arg "s32[4,20]" --arg "s32[4]"``
* ``subclassed_adagrad_step``: ``--arg "f32[8,24]" --arg "s32[8]"``

then ``python benchmarks/overview_bench.py --no-diffs --model DIR`` and
``python benchmarks/commands_bench.py --captures DIR``. Figures: benchmarks/results/overview_bench.txt.
"""
import keras
import tensorflow as tf

_loss = keras.losses.SparseCategoricalCrossentropy()


def _step(model, opt):
    @tf.function(jit_compile=True)
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = _loss(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss
    return step


convnext_adamw_step = _step(keras.applications.ConvNeXtTiny(weights=None, input_shape=(32, 32, 3), classes=5),
                            keras.optimizers.AdamW(1e-3))
mobilenet_sgd_step = _step(keras.applications.MobileNet(weights=None, input_shape=(32, 32, 3), classes=5),
                           keras.optimizers.SGD(0.01, momentum=0.9))

_text = keras.Sequential([keras.Input((20,), dtype="int32"), keras.layers.Embedding(50, 16),
                          keras.layers.LSTM(32), keras.layers.Dense(5, activation="softmax")])
lstm_adam_step = _step(_text, keras.optimizers.Adam(1e-3))


class Residual(keras.layers.Layer):
    def __init__(self, width, **kwargs):
        super().__init__(**kwargs)
        self.norm = keras.layers.LayerNormalization()
        self.inner = keras.layers.Dense(width * 2, activation="relu")
        self.outer = keras.layers.Dense(width)

    def call(self, x):
        return x + self.outer(self.inner(self.norm(x)))


class Tabular(keras.Model):
    def __init__(self):
        super().__init__()
        self.embed = keras.layers.Dense(32)
        self.blocks = [Residual(32, name=f"residual_{i}") for i in range(6)]
        self.head = keras.layers.Dense(5, activation="softmax")

    def call(self, x):
        h = self.embed(x)
        for block in self.blocks:
            h = block(h)
        return self.head(h)


_tabular = Tabular()
_tabular(tf.zeros((8, 24)))
subclassed_adagrad_step = _step(_tabular, keras.optimizers.Adagrad(0.05))
