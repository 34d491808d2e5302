"""Round 76 (held out, TF): models written the way users write them, not looked at while building
anything.

* ``mobile_lamb_step``: a small mobile-style CNN (``ZeroPadding2D``, a strided ``Conv2D`` stem,
  ``DepthwiseConv2D`` → ``BatchNormalization`` → ``PReLU``, two ``SeparableConv2D`` blocks with a
  residual ``Add``, ``GlobalAveragePooling2D``, a ``Dense`` head) trained one step with a
  ``tf.GradientTape`` by ``keras.optimizers.Lamb``.
* ``ctc_step``: a speech recogniser — ``Conv1D`` over 13 features per frame, a ``Bidirectional``
  ``GRU`` returning sequences, ``TimeDistributed(Dense)`` over 12 symbols plus a blank, trained by
  ``tf.nn.ctc_loss`` (dense labels, fixed lengths) with ``keras.optimizers.Adafactor``.
* ``match_two_heads_step``: a functional Keras model with two inputs (query and document tokens
  through one shared ``Embedding``) and two outputs — a match logit from ``AdditiveAttention``,
  ``EinsumDense`` and ``UnitNormalization`` towers compared by ``Dot``, and a topic head on the
  document — trained on the sum of two weighted losses by ``keras.optimizers.Ftrl``.

Capture with
``hloviz dump benchmarks/heldout/round76.py:mobile_lamb_step --arg "f32[4,32,32,3]" --arg "s32[4]" -o DIR``,
``hloviz dump benchmarks/heldout/round76.py:ctc_step --arg "f32[2,40,13]" --arg "s32[2,8]" -o DIR`` and
``hloviz dump benchmarks/heldout/round76.py:match_two_heads_step --arg "s32[8,10]" --arg "s32[8,12]" --arg "f32[8]" --arg "s32[8]" -o DIR``.
"""
import keras
import tensorflow as tf
from keras import layers

# --- mobile CNN + Lamb ------------------------------------------------------------------------

def _mobile() -> keras.Model:
    images = keras.Input((32, 32, 3))
    x = layers.ZeroPadding2D(1, name="pad")(images)
    x = layers.Conv2D(16, 3, strides=2, use_bias=False, name="stem")(x)
    x = layers.BatchNormalization(name="stem_bn")(x)
    x = layers.ReLU(6.0, name="stem_relu")(x)
    x = layers.DepthwiseConv2D(3, padding="same", use_bias=False, name="dw")(x)
    x = layers.BatchNormalization(name="dw_bn")(x)
    x = layers.PReLU(shared_axes=[1, 2], name="dw_prelu")(x)
    for k in range(2):
        h = layers.SeparableConv2D(16, 3, padding="same", activation="relu", name=f"sep{k}_a")(x)
        h = layers.SeparableConv2D(16, 3, padding="same", name=f"sep{k}_b")(h)
        x = layers.Add(name=f"res{k}")([x, h])
    x = layers.GlobalAveragePooling2D(name="gap")(x)
    return keras.Model(images, layers.Dense(10, name="classifier")(x), name="mobile")


_mobile_net = _mobile()
_lamb = keras.optimizers.Lamb(1e-3)
_lamb.build(_mobile_net.trainable_variables)
_sxent = keras.losses.SparseCategoricalCrossentropy(from_logits=True)


@tf.function(jit_compile=True)
def mobile_lamb_step(images, labels):
    with tf.GradientTape() as tape:
        loss = _sxent(labels, _mobile_net(images, training=True))
    grads = tape.gradient(loss, _mobile_net.trainable_variables)
    _lamb.apply_gradients(zip(grads, _mobile_net.trainable_variables))
    return loss


# --- CTC speech model + Adafactor -------------------------------------------------------------

def _speech() -> keras.Model:
    feats = keras.Input((40, 13))
    x = layers.Conv1D(32, 5, padding="same", activation="relu", name="frontend")(feats)
    x = layers.Bidirectional(layers.GRU(24, return_sequences=True), name="bigru")(x)
    logits = layers.TimeDistributed(layers.Dense(13), name="symbols")(x)
    return keras.Model(feats, logits, name="speech")


_speech_net = _speech()
_adafactor = keras.optimizers.Adafactor(1e-3)
_adafactor.build(_speech_net.trainable_variables)


@tf.function(jit_compile=True)
def ctc_step(feats, labels):
    batch = tf.shape(feats)[0]
    with tf.GradientTape() as tape:
        logits = _speech_net(feats, training=True)
        per_example = tf.nn.ctc_loss(
            labels=labels,
            logits=logits,
            label_length=tf.fill([batch], 8),
            logit_length=tf.fill([batch], 40),
            logits_time_major=False,
            blank_index=12,
        )
        loss = tf.reduce_mean(per_example)
    grads = tape.gradient(loss, _speech_net.trainable_variables)
    _adafactor.apply_gradients(zip(grads, _speech_net.trainable_variables))
    return loss


# --- two inputs, two outputs + Ftrl -----------------------------------------------------------

def _matcher() -> keras.Model:
    query = keras.Input((10,), dtype="int32", name="query")
    doc = keras.Input((12,), dtype="int32", name="doc")
    embed = layers.Embedding(500, 24, name="shared_embed")
    q = embed(query)
    d = embed(doc)
    attended = layers.AdditiveAttention(name="cross_attention")([q, d])
    q_vec = layers.GlobalAveragePooling1D(name="query_pool")(attended)
    d_vec = layers.GlobalAveragePooling1D(name="doc_pool")(d)
    q_vec = layers.EinsumDense("bi,ij->bj", output_shape=16, bias_axes="j", name="query_tower")(q_vec)
    d_vec = layers.EinsumDense("bi,ij->bj", output_shape=16, bias_axes="j", name="doc_tower")(d_vec)
    q_vec = layers.UnitNormalization(name="query_norm")(q_vec)
    d_vec = layers.UnitNormalization(name="doc_norm")(d_vec)
    match = layers.Dot(axes=1, name="match")([q_vec, d_vec])
    topic = layers.Dense(6, name="topic")(layers.Dense(32, activation="relu", name="topic_hidden")(d_vec))
    return keras.Model([query, doc], [match, topic], name="matcher")


_matcher_net = _matcher()
_ftrl = keras.optimizers.Ftrl(0.05)
_ftrl.build(_matcher_net.trainable_variables)
_bce = keras.losses.BinaryCrossentropy(from_logits=True)


@tf.function(jit_compile=True)
def match_two_heads_step(query, doc, relevant, topic):
    with tf.GradientTape() as tape:
        match, topic_logits = _matcher_net([query, doc], training=True)
        loss = _bce(relevant[:, None], match * 5.0) + 0.3 * _sxent(topic, topic_logits)
    grads = tape.gradient(loss, _matcher_net.trainable_variables)
    _ftrl.apply_gradients(zip(grads, _matcher_net.trainable_variables))
    return loss
