"""Held out (forty-second round, TensorFlow): written after round 41's fixes, not looked at while
they were made.

* ``shared_dense_step``: a subclassed ``keras.Model`` that applies one ``Dense`` layer twice (its
  kernel shared by two uses), ``Dropout`` between, an L2 ``kernel_regularizer`` whose penalty
  (``self.losses``) joins the loss, trained one step by ``RMSprop`` with momentum.
* ``preprocess_classify``: Keras preprocessing layers inside the model — ``Rescaling``,
  ``Resizing``, ``CenterCrop``, ``Normalization`` with a fixed mean and variance — then two
  ``Conv2D``, ``GlobalMaxPooling2D`` and a softmax ``Dense`` (inference).

Capture with ``hloviz dump benchmarks/heldout/round42.py:shared_dense_step --arg "f32[8,12]"
--arg "s32[8]" -o DIR`` and ``hloviz dump benchmarks/heldout/round42.py:preprocess_classify
--arg "f32[2,40,40,3]" -o DIR``.
"""
import keras
import tensorflow as tf


class _SharedTower(keras.Model):
    def __init__(self):
        super().__init__(name="shared_tower")
        self.embed = keras.layers.Dense(16, activation="relu", name="embed",
                                        kernel_regularizer=keras.regularizers.L2(1e-3))
        self.mix = keras.layers.Dense(16, activation="tanh", name="mix")
        self.drop = keras.layers.Dropout(0.2, name="drop")
        self.out = keras.layers.Dense(5, name="out", kernel_regularizer=keras.regularizers.L2(1e-3))

    def call(self, x, training=False):
        h = self.embed(x)
        h = self.drop(self.mix(h), training=training)
        h = self.mix(h)  # the same layer again: one kernel, two uses
        return self.out(h)


_tower = _SharedTower()
_tower(tf.zeros((1, 12)))
_rms = keras.optimizers.RMSprop(1e-3, momentum=0.9)
_rms.build(_tower.trainable_variables)
_xent = keras.losses.SparseCategoricalCrossentropy(from_logits=True)


@tf.function(jit_compile=True)
def shared_dense_step(x, labels):
    with tf.GradientTape() as tape:
        loss = _xent(labels, _tower(x, training=True)) + tf.add_n(_tower.losses)
    grads = tape.gradient(loss, _tower.trainable_variables)
    _rms.apply_gradients(zip(grads, _tower.trainable_variables))
    return loss


_classify = keras.Sequential([
    keras.Input((40, 40, 3)),
    keras.layers.Rescaling(1 / 255, name="rescale"),
    keras.layers.Resizing(32, 32, name="resize"),
    keras.layers.CenterCrop(28, 28, name="crop"),
    keras.layers.Normalization(mean=[0.5, 0.4, 0.3], variance=[0.1, 0.1, 0.1], name="normalize"),
    keras.layers.Conv2D(8, 3, activation="relu", name="conv_1"),
    keras.layers.Conv2D(16, 3, strides=2, activation="relu", name="conv_2"),
    keras.layers.GlobalMaxPooling2D(name="pool"),
    keras.layers.Dense(4, activation="softmax", name="probs"),
], name="classify")


@tf.function(jit_compile=True)
def preprocess_classify(images):
    return _classify(images)
