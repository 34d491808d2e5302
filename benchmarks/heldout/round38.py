"""Held out (thirty-eighth round, TensorFlow): written at the start of a session, before any
change, and not looked at while anything was built; every command run on each.

* ``resnext_step``: a small ResNeXt written as users write one — bottleneck blocks whose middle
  ``Conv2D`` has ``groups=4`` (a grouped convolution: XLA's ``feature_group_count``), a projection
  shortcut where the width changes, ``GlobalAveragePooling2D`` and a ``Dense`` head — trained one
  step by SGD with momentum under a cosine-decay schedule, labels smoothed.
* ``dann_step``: domain-adversarial training — a shared ``Dense`` feature extractor, a label head,
  and a domain head behind a gradient reversal layer written with ``tf.custom_gradient``; one
  ``Adam`` step on the sum of both losses.

Capture with ``hloviz dump benchmarks/heldout/round38.py:resnext_step --arg "f32[4,32,32,3]"
--arg "s32[4]" -o DIR`` and ``…:dann_step --arg "f32[8,20]" --arg "s32[8]" --arg "f32[8]" -o DIR``.
"""
import keras
import tensorflow as tf


def _bottleneck(x, width, name):
    shortcut = x
    if x.shape[-1] != 2 * width:
        shortcut = keras.layers.Conv2D(2 * width, 1, use_bias=False, name=f"{name}_proj")(x)
    h = keras.layers.Conv2D(width, 1, use_bias=False, name=f"{name}_reduce")(x)
    h = keras.layers.BatchNormalization(name=f"{name}_bn1")(h)
    h = keras.layers.ReLU(name=f"{name}_relu1")(h)
    h = keras.layers.Conv2D(width, 3, padding="same", groups=4, use_bias=False, name=f"{name}_grouped")(h)
    h = keras.layers.BatchNormalization(name=f"{name}_bn2")(h)
    h = keras.layers.ReLU(name=f"{name}_relu2")(h)
    h = keras.layers.Conv2D(2 * width, 1, use_bias=False, name=f"{name}_expand")(h)
    h = keras.layers.BatchNormalization(name=f"{name}_bn3")(h)
    return keras.layers.ReLU(name=f"{name}_out")(keras.layers.Add(name=f"{name}_add")([h, shortcut]))


_pixels = keras.Input((32, 32, 3))
_x = keras.layers.Conv2D(16, 3, padding="same", name="stem")(_pixels)
for _k, _w in enumerate((16, 16, 32)):
    _x = _bottleneck(_x, _w, f"block{_k}")
_resnext = keras.Model(_pixels, keras.layers.Dense(10, name="logits")(keras.layers.GlobalAveragePooling2D(name="gap")(_x)),
                       name="resnext")
_sgd = keras.optimizers.SGD(keras.optimizers.schedules.CosineDecay(0.1, 1000), momentum=0.9)
_sgd.build(_resnext.trainable_variables)
_smooth = keras.losses.CategoricalCrossentropy(from_logits=True, label_smoothing=0.1)


@tf.function(jit_compile=True)
def resnext_step(images, labels):
    with tf.GradientTape() as tape:
        loss = _smooth(tf.one_hot(labels, 10), _resnext(images, training=True))
    grads = tape.gradient(loss, _resnext.trainable_variables)
    _sgd.apply_gradients(zip(grads, _resnext.trainable_variables))
    return loss


@tf.custom_gradient
def _reverse_gradient(x):
    def grad(dy):
        return -0.5 * dy
    return tf.identity(x), grad


_features = keras.Sequential([keras.layers.Dense(32, activation="relu", name="f1"),
                              keras.layers.Dense(16, activation="relu", name="f2")], name="features")
_label_head = keras.layers.Dense(3, name="label_head")
_domain_head = keras.Sequential([keras.layers.Dense(8, activation="relu", name="d1"),
                                 keras.layers.Dense(1, name="d2")], name="domain_head")
_features.build((None, 20))
_label_head.build((None, 16))
_domain_head.build((None, 16))
_dann_vars = _features.trainable_variables + _label_head.trainable_variables + _domain_head.trainable_variables
_adam = keras.optimizers.Adam(1e-3)
_adam.build(_dann_vars)


@tf.function(jit_compile=True)
def dann_step(x, labels, domains):
    with tf.GradientTape() as tape:
        h = _features(x)
        label_loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels, _label_head(h)))
        domain_logits = tf.squeeze(_domain_head(_reverse_gradient(h)), -1)
        domain_loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(domains, domain_logits))
        loss = label_loss + domain_loss
    grads = tape.gradient(loss, _dann_vars)
    _adam.apply_gradients(zip(grads, _dann_vars))
    return label_loss, domain_loss
