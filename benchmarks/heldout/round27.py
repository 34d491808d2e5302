"""Held out (twenty-seventh round, TensorFlow): written after this round's first changes (round
26's), to check them on models nobody here had captured.

* ``mobilenet_v1``: ``keras.applications.MobileNet`` (64×64 inputs, no weights) called once:
  its layers named ``conv_dw_<n>``, ``conv_pw_<n>_bn`` …, one name family for most of the model.
* ``resnet101v2``: ``keras.applications.ResNet101V2`` (64×64 inputs, no weights) called once:
  ResNet50V2's names, 23 bottlenecks in ``conv4``.
* ``adamw_tagger_step``: a functional Keras sequence tagger — ``Embedding``, ``GRU`` returning
  sequences, ``LayerNormalization``, ``TimeDistributed(Dense)`` — a per-token sparse
  cross-entropy, trained with ``AdamW``.

Capture with ``hloviz dump benchmarks/heldout/round27.py:mobilenet_v1 --arg "f32[1,64,64,3]" -o DIR``,
``…:resnet101v2``: ``--arg "f32[1,64,64,3]"``, and ``…:adamw_tagger_step``: ``--arg "s32[8,16]"
--arg "s32[8,16]"``.
"""
import keras
import tensorflow as tf

_mobilenet = keras.applications.MobileNet(weights=None, input_shape=(64, 64, 3), classes=10)
_resnet = keras.applications.ResNet101V2(weights=None, input_shape=(64, 64, 3), classes=10)


@tf.function(jit_compile=True)
def mobilenet_v1(images):
    return _mobilenet(images)


@tf.function(jit_compile=True)
def resnet101v2(images):
    return _resnet(images)


def _tagger() -> keras.Model:
    tokens = keras.Input((16,), dtype="int32")
    x = keras.layers.Embedding(200, 16, name="embed")(tokens)
    x = keras.layers.GRU(24, return_sequences=True, name="gru")(x)
    x = keras.layers.LayerNormalization(name="norm")(x)
    return keras.Model(tokens, keras.layers.TimeDistributed(keras.layers.Dense(7), name="tags")(x))


_model = _tagger()
_adamw = keras.optimizers.AdamW(1e-3, weight_decay=0.01)
_adamw.build(_model.trainable_variables)
_loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)


@tf.function(jit_compile=True)
def adamw_tagger_step(tokens, tags):
    with tf.GradientTape() as tape:
        loss = _loss(tags, _model(tokens, training=True))
    grads = tape.gradient(loss, _model.trainable_variables)
    _adamw.apply_gradients(zip(grads, _model.trainable_variables))
    return loss
