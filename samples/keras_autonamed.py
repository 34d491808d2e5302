"""A Keras model written the way users often write one: no layer names, so Keras numbers them.

Three small Inception-ResNet-style blocks (two branches of ``Conv2D`` → ``BatchNormalization``
→ ``Activation``, concatenated, projected and added back), built from unnamed layers: the op
names say ``conv2d``, ``conv2d_1`` … ``batch_normalization_7`` … ``activation_11``, and the only
structure is the data flow. Layers that share a name prefix here (every ``conv2d_*``) are not
a block of the model: a picture must not group them so (issue 33, InceptionResNetV2 drew
``batch_* (3 scopes)``, ``conv2d_* (8 scopes)``)::

    hloviz render samples/keras_autonamed.py:classify --stage both -o autonamed.svg
"""

import tensorflow as tf

keras = tf.keras

HLOVIZ_ARGS = {"classify": ["f32[2,16,16,8]"]}


def _conv_bn(x, filters, kernel):
    x = keras.layers.Conv2D(filters, kernel, padding="same", use_bias=False)(x)
    x = keras.layers.BatchNormalization()(x)
    return keras.layers.Activation("relu")(x)


def _block(x):
    a = _conv_bn(x, 8, 1)
    b = _conv_bn(_conv_bn(x, 8, 1), 8, 3)
    mixed = keras.layers.Concatenate()([a, b])
    up = keras.layers.Conv2D(8, 1, padding="same")(mixed)
    return keras.layers.Activation("relu")(keras.layers.Add()([x, up]))


inputs = keras.Input((16, 16, 8))
x = _conv_bn(inputs, 8, 3)
for _ in range(3):
    x = _block(x)
x = keras.layers.GlobalAveragePooling2D()(x)
outputs = keras.layers.Dense(10)(x)
model = keras.Model(inputs, outputs)


@tf.function(jit_compile=True)
def classify(images):
    """Inference of the auto-named model."""
    return model(images, training=False)
