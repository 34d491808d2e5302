"""Held out (thirty-fifth round, TensorFlow): written after this session's first fix (a dropout's
random bits read out of a tuple), and not looked at while it was made.

* ``bf16_mobilenet``: ``keras.applications.MobileNetV3Small`` (``weights=None``) under the
  ``mixed_bfloat16`` policy, run for inference: a cast at every layer's edge.
* ``masked_attention_classify``: a text classifier of masked tokens — ``Embedding`` with
  ``mask_zero=True``, Keras' dot-product ``Attention`` over the sequence, a masked
  ``GlobalAveragePooling1D``, a sigmoid ``Dense`` — trained one step by ``Adagrad`` on a binary
  cross-entropy.

Capture with ``hloviz dump benchmarks/heldout/round35.py:bf16_mobilenet --arg "f32[2,96,96,3]" -o DIR``
and ``…:masked_attention_classify --arg "s32[4,12]" --arg "f32[4,1]" -o DIR``.
"""
import keras
import tensorflow as tf

keras.mixed_precision.set_global_policy("mixed_bfloat16")
_bf16 = keras.applications.MobileNetV3Small(weights=None, input_shape=(96, 96, 3), classes=7)
keras.mixed_precision.set_global_policy("float32")


@tf.function(jit_compile=True)
def bf16_mobilenet(images):
    return _bf16(images, training=False)


_tokens = keras.Input((12,), dtype="int32")
_e = keras.layers.Embedding(300, 16, mask_zero=True, name="embed")(_tokens)
_a = keras.layers.Attention(name="attend")([_e, _e])
_p = keras.layers.GlobalAveragePooling1D(name="pool")(_a)
_classifier = keras.Model(_tokens, keras.layers.Dense(1, activation="sigmoid", name="score")(_p), name="masked")
_adagrad = keras.optimizers.Adagrad(0.05)
_adagrad.build(_classifier.trainable_variables)
_bce = keras.losses.BinaryCrossentropy()


@tf.function(jit_compile=True)
def masked_attention_classify(tokens, labels):
    with tf.GradientTape() as tape:
        loss = _bce(labels, _classifier(tokens, training=True))
    grads = tape.gradient(loss, _classifier.trainable_variables)
    _adagrad.apply_gradients(zip(grads, _classifier.trainable_variables))
    return loss
