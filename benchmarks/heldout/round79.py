"""Round 79 (held out, TF): models written the way users write them, not looked at while building
anything.

* ``tcn_accum_adadelta_step``: a temporal convolutional network on multichannel series — three
  residual blocks of causal dilated ``Conv1D`` (dilations 1, 2, 4), ``LayerNormalization`` and
  ``SpatialDropout1D``, a 1×1 ``Conv1D`` to match widths, ``GlobalAveragePooling1D`` and a
  ``Dense`` head. The custom training step accumulates gradients over four micro-batches in a
  ``for`` over ``tf.range`` (AutoGraph makes it a ``tf.while_loop``), averages them, and only when
  the global norm is finite (a tensor ``if``, i.e. ``tf.cond``) applies them with
  ``keras.optimizers.Adadelta``; the other branch counts a skipped step in a ``tf.Variable``.
* ``seq2seq_attention_step``: a GRU encoder–decoder with attention — ``Embedding`` +
  ``GRU(return_sequences=True, return_state=True)`` encoder, an ``Embedding`` + ``GRU`` decoder
  started from the encoder state, ``layers.AdditiveAttention`` (Bahdanau) over the encoder
  outputs, ``Concatenate`` and a ``Dense`` vocabulary projection; teacher forcing, a masked
  ``SparseCategoricalCrossentropy``. Inside the step the source tokens are augmented by token
  dropout drawn with ``tf.random.stateless_uniform`` (seeded from the argument and the
  optimizer's step count) and the step is taken by ``keras.optimizers.Adamax``.

Capture with
``hloviz dump benchmarks/heldout/round79.py:tcn_accum_adadelta_step --arg "f32[16,32,4]" --arg "s32[16]" -o DIR`` and
``hloviz dump benchmarks/heldout/round79.py:seq2seq_attention_step --arg "s32[8,12]" --arg "s32[8,10]" --arg "s32[8,10]" --arg "s32[2]" -o DIR``.
"""
import keras
import tensorflow as tf
from keras import layers

# --- TCN with gradient accumulation over micro-batches, Adadelta ------------------------------

STEPS = 32
CHANNELS = 4
TCN_CLASSES = 3
MICRO = 4


def _residual_block(x, filters, dilation, name):
    shortcut = x
    y = layers.Conv1D(filters, 3, padding="causal", dilation_rate=dilation, name=f"{name}_conv1")(x)
    y = layers.LayerNormalization(name=f"{name}_norm1")(y)
    y = layers.Activation("relu", name=f"{name}_relu1")(y)
    y = layers.SpatialDropout1D(0.1, name=f"{name}_drop1")(y)
    y = layers.Conv1D(filters, 3, padding="causal", dilation_rate=dilation, name=f"{name}_conv2")(y)
    y = layers.LayerNormalization(name=f"{name}_norm2")(y)
    y = layers.Activation("relu", name=f"{name}_relu2")(y)
    if shortcut.shape[-1] != filters:
        shortcut = layers.Conv1D(filters, 1, name=f"{name}_match")(shortcut)
    return layers.Add(name=f"{name}_add")([shortcut, y])


def _tcn() -> keras.Model:
    series = keras.Input((STEPS, CHANNELS))
    x = series
    for i, dilation in enumerate((1, 2, 4)):
        x = _residual_block(x, 16, dilation, name=f"block{i}")
    x = layers.GlobalAveragePooling1D(name="pool")(x)
    logits = layers.Dense(TCN_CLASSES, name="head")(x)
    return keras.Model(series, logits, name="tcn")


_tcn_net = _tcn()
_adadelta = keras.optimizers.Adadelta(learning_rate=1.0, rho=0.95)
_adadelta.build(_tcn_net.trainable_variables)
_tcn_xent = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
_skipped = tf.Variable(0, dtype=tf.int32, trainable=False, name="skipped_steps")


@tf.function(jit_compile=True)
def tcn_accum_adadelta_step(series, labels):
    micro = tf.shape(series)[0] // MICRO
    variables = _tcn_net.trainable_variables
    accumulated = [tf.zeros_like(v) for v in variables]
    total_loss = tf.constant(0.0)
    for i in tf.range(MICRO):
        x = series[i * micro:(i + 1) * micro]
        y = labels[i * micro:(i + 1) * micro]
        with tf.GradientTape() as tape:
            loss = _tcn_xent(y, _tcn_net(x, training=True))
        grads = tape.gradient(loss, variables)
        accumulated = [a + g for a, g in zip(accumulated, grads)]
        total_loss += loss
    accumulated = [a / MICRO for a in accumulated]
    norm = tf.linalg.global_norm(accumulated)
    if tf.math.is_finite(norm):
        _adadelta.apply_gradients(zip(accumulated, variables))
    else:
        _skipped.assign_add(1)
    return total_loss / MICRO, norm


# --- GRU seq2seq with additive attention, token dropout, Adamax -------------------------------

SRC_VOCAB = 50
TGT_VOCAB = 40
EMBED = 16
UNITS = 32
TOKEN_DROP = 0.1


def _seq2seq() -> keras.Model:
    src = keras.Input((None,), dtype="int32", name="source")
    tgt = keras.Input((None,), dtype="int32", name="target_in")
    enc_emb = layers.Embedding(SRC_VOCAB, EMBED, name="src_embedding")(src)
    enc_out, enc_state = layers.GRU(UNITS, return_sequences=True, return_state=True, name="encoder")(enc_emb)
    dec_emb = layers.Embedding(TGT_VOCAB, EMBED, name="tgt_embedding")(tgt)
    dec_out = layers.GRU(UNITS, return_sequences=True, name="decoder")(dec_emb, initial_state=enc_state)
    context = layers.AdditiveAttention(name="attention")([dec_out, enc_out])
    x = layers.Concatenate(name="combine")([dec_out, context])
    x = layers.Dense(UNITS, activation="tanh", name="attn_proj")(x)
    logits = layers.Dense(TGT_VOCAB, name="vocab")(x)
    return keras.Model([src, tgt], logits, name="seq2seq")


_s2s_net = _seq2seq()
_adamax = keras.optimizers.Adamax(2e-3)
_adamax.build(_s2s_net.trainable_variables)
_s2s_xent = keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction=None)


@tf.function(jit_compile=True)
def seq2seq_attention_step(source, target_in, target_out, seed):
    step_seed = seed + tf.stack([tf.cast(_adamax.iterations, tf.int32), 0])
    keep = tf.random.stateless_uniform(tf.shape(source), seed=step_seed) >= TOKEN_DROP
    noisy_source = tf.where(keep, source, tf.ones_like(source))  # 1 = <unk>
    mask = tf.cast(target_out != 0, tf.float32)
    with tf.GradientTape() as tape:
        logits = _s2s_net([noisy_source, target_in], training=True)
        per_token = _s2s_xent(target_out, logits)
        loss = tf.reduce_sum(per_token * mask) / tf.maximum(tf.reduce_sum(mask), 1.0)
    grads = tape.gradient(loss, _s2s_net.trainable_variables)
    _adamax.apply_gradients(zip(grads, _s2s_net.trainable_variables))
    accuracy = tf.reduce_sum(
        tf.cast(tf.argmax(logits, -1, output_type=tf.int32) == target_out, tf.float32) * mask
    ) / tf.maximum(tf.reduce_sum(mask), 1.0)
    return loss, accuracy
