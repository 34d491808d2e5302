"""Held out (twenty-second round, TensorFlow): written after this round's changes, as Keras users
write them, none captured here before.

* ``tabular_step``: a functional Keras model over tabular data — a ``Normalization`` layer, two
  ``Dense`` branches of different depths whose outputs are added with ``keras.ops.gelu`` applied
  between them as plain ops outside every layer, ``BatchNormalization``,
  ``Dropout`` — trained on ``MeanSquaredError`` with ``RMSprop(momentum=0.9)``.
* ``residual_cnn_step``: a Keras subclassed CNN (``tf.keras.Model`` with ``call``): two residual
  units (``Conv2D`` → ``BatchNormalization`` → ``tf.nn.relu``, the skip added inline),
  ``GlobalAveragePooling2D``, a ``Dense`` head; ``SparseCategoricalCrossentropy(from_logits)``
  with ``SGD(momentum=0.9)`` and ``clipvalue``.

Capture with ``hloviz dump benchmarks/heldout/round22.py:tabular_step --arg "f32[32,12]" --arg
"f32[32,1]" -o DIR`` and ``…:residual_cnn_step --arg "f32[8,24,24,3]" --arg "s32[8]" -o DIR``.
"""
import keras
import tensorflow as tf


def _tabular() -> keras.Model:
    inputs = keras.Input((12,))
    x = keras.layers.Normalization(mean=0.0, variance=1.0, name="scale")(inputs)
    deep = keras.layers.Dense(32, name="deep_1")(x)
    deep = keras.layers.Dense(16, name="deep_2")(keras.ops.gelu(deep))
    wide = keras.layers.Dense(16, name="wide")(x)
    x = keras.ops.gelu(deep + wide)
    x = keras.layers.BatchNormalization(name="norm")(x)
    x = keras.layers.Dropout(0.1, name="drop")(x)
    return keras.Model(inputs, keras.layers.Dense(1, name="out")(x))


class Residual(keras.layers.Layer):
    def __init__(self, filters: int, **kwargs):
        super().__init__(**kwargs)
        self.conv = keras.layers.Conv2D(filters, 3, padding="same")
        self.bn = keras.layers.BatchNormalization()

    def call(self, x, training=False):
        return tf.nn.relu(x + self.bn(self.conv(x), training=training))


class ResidualCnn(keras.Model):
    def __init__(self):
        super().__init__()
        self.stem = keras.layers.Conv2D(16, 3, strides=2, padding="same", name="stem")
        self.unit_1 = Residual(16, name="unit_1")
        self.unit_2 = Residual(16, name="unit_2")
        self.pool = keras.layers.GlobalAveragePooling2D(name="pool")
        self.head = keras.layers.Dense(4, name="head")

    def call(self, x, training=False):
        x = tf.nn.relu(self.stem(x))
        x = self.unit_2(self.unit_1(x, training=training), training=training)
        return self.head(self.pool(x))


def _step(model: keras.Model, loss: keras.losses.Loss, optimizer: keras.optimizers.Optimizer, shape):
    model(tf.zeros(shape))
    optimizer.build(model.trainable_variables)

    @tf.function(jit_compile=True)
    def step(inputs, targets):
        with tf.GradientTape() as tape:
            value = loss(targets, model(inputs, training=True))
        grads = tape.gradient(value, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return value

    return step


tabular_step = _step(_tabular(), keras.losses.MeanSquaredError(),
                     keras.optimizers.RMSprop(1e-3, momentum=0.9), (1, 12))
residual_cnn_step = _step(ResidualCnn(), keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                          keras.optimizers.SGD(0.01, momentum=0.9, clipvalue=1.0), (1, 24, 24, 3))
