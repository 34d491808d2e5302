"""Round 80 (held out, TF): models written the way users write them, not looked at while building
anything.

* ``gqa_muon_step``: a tiny decoder-only language model — ``Embedding`` of tokens plus a learned
  position table (a custom ``keras.layers.Layer`` with ``add_weight``), two pre-norm decoder blocks
  of ``layers.RMSNormalization`` → ``layers.GroupQueryAttention`` (4 query heads sharing 2
  key/value heads, ``use_causal_mask=True``) → ``Add`` and ``RMSNormalization`` → ``Dense(gelu)``
  → ``Dense`` → ``Add``, a final ``RMSNormalization`` and a ``Dense`` vocabulary head. Next-token
  ``SparseCategoricalCrossentropy(from_logits=True)``; one step of ``keras.optimizers.Muon``
  (Newton–Schulz orthogonalisation of the 2-D kernels' momentum, i.e. matrix multiplications in the
  optimizer; the embeddings and 1-D weights go through its AdamW path).
* ``augment_two_heads_accum_step``: an image classifier with augmentation inside the model —
  ``RandomFlip("horizontal")``, ``RandomContrast``, ``Rescaling``, then ``Conv2D`` →
  ``GroupNormalization`` → ``swish`` twice with ``MaxPooling2D`` between; two outputs: an
  auxiliary (deep-supervision) head from the first block's pooled features and the main head after
  ``GlobalAveragePooling2D`` and ``Dropout``. The loss is ``CategoricalFocalCrossentropy`` of the
  main head on one-hot labels plus ``0.3 ×`` a ``SparseCategoricalCrossentropy`` of the auxiliary
  head; the step is a custom ``tf.function(jit_compile=True)`` with
  ``keras.optimizers.AdamW(CosineDecay with warm-up, weight_decay=0.05, clipnorm=1.0,
  gradient_accumulation_steps=4)`` — the optimizer accumulates and applies every fourth call (a
  ``cond`` inside ``apply_gradients``).

Capture with
``hloviz dump benchmarks/heldout/round80.py:gqa_muon_step --arg "s32[4,16]" --arg "s32[4,16]" -o DIR`` and
``hloviz dump benchmarks/heldout/round80.py:augment_two_heads_accum_step --arg "f32[8,24,24,3]" --arg "s32[8]" -o DIR``.
"""
import keras
import tensorflow as tf
from keras import layers

# --- decoder-only LM with grouped-query attention, Muon ----------------------------------------

VOCAB = 64
SEQ = 16
DIM = 32
HEADS = 4
KV_HEADS = 2


class TokenAndPosition(layers.Layer):
    def __init__(self, vocab, length, dim, **kw):
        super().__init__(**kw)
        self.tokens = layers.Embedding(vocab, dim, name="token_embedding")
        self.length, self.dim = length, dim

    def build(self, input_shape):
        self.positions = self.add_weight(shape=(self.length, self.dim), initializer="random_normal",
                                         name="position_embedding")
        self.tokens.build(input_shape)

    def call(self, ids):
        return self.tokens(ids) + self.positions[None, : tf.shape(ids)[1]]


def _decoder_block(x, i):
    h = layers.RMSNormalization(name=f"block{i}_norm1")(x)
    h = layers.GroupQueryAttention(head_dim=DIM // HEADS, num_query_heads=HEADS, num_key_value_heads=KV_HEADS,
                                   name=f"block{i}_gqa")(h, h, use_causal_mask=True)
    x = layers.Add(name=f"block{i}_res1")([x, h])
    h = layers.RMSNormalization(name=f"block{i}_norm2")(x)
    h = layers.Dense(2 * DIM, activation="gelu", name=f"block{i}_mlp_up")(h)
    h = layers.Dense(DIM, name=f"block{i}_mlp_down")(h)
    return layers.Add(name=f"block{i}_res2")([x, h])


def _lm() -> keras.Model:
    ids = keras.Input((SEQ,), dtype="int32")
    x = TokenAndPosition(VOCAB, SEQ, DIM, name="embed")(ids)
    for i in range(2):
        x = _decoder_block(x, i)
    x = layers.RMSNormalization(name="final_norm")(x)
    logits = layers.Dense(VOCAB, name="lm_head")(x)
    return keras.Model(ids, logits, name="tiny_lm")


_lm_net = _lm()
_muon = keras.optimizers.Muon(learning_rate=0.02)
_muon.build(_lm_net.trainable_variables)
_lm_xent = keras.losses.SparseCategoricalCrossentropy(from_logits=True)


@tf.function(jit_compile=True)
def gqa_muon_step(tokens, targets):
    with tf.GradientTape() as tape:
        logits = _lm_net(tokens, training=True)
        loss = _lm_xent(targets, logits)
    grads = tape.gradient(loss, _lm_net.trainable_variables)
    _muon.apply_gradients(zip(grads, _lm_net.trainable_variables))
    return loss


# --- augmenting CNN with two heads, AdamW with gradient accumulation ---------------------------

CLASSES = 5


def _two_head_cnn() -> keras.Model:
    images = keras.Input((24, 24, 3))
    x = layers.RandomFlip("horizontal", seed=1, name="flip")(images)
    x = layers.RandomContrast(0.2, seed=2, name="contrast")(x)
    x = layers.Rescaling(1.0 / 255, name="rescale")(x)
    x = layers.Conv2D(16, 3, padding="same", name="conv1")(x)
    x = layers.GroupNormalization(groups=4, name="gn1")(x)
    x = layers.Activation("swish", name="act1")(x)
    x = layers.MaxPooling2D(name="pool1")(x)
    aux = layers.GlobalAveragePooling2D(name="aux_pool")(x)
    aux_logits = layers.Dense(CLASSES, name="aux_head")(aux)
    x = layers.Conv2D(32, 3, padding="same", name="conv2")(x)
    x = layers.GroupNormalization(groups=8, name="gn2")(x)
    x = layers.Activation("swish", name="act2")(x)
    x = layers.GlobalAveragePooling2D(name="pool2")(x)
    x = layers.Dropout(0.2, name="dropout")(x)
    logits = layers.Dense(CLASSES, name="main_head")(x)
    return keras.Model(images, [logits, aux_logits], name="two_head_cnn")


_cnn = _two_head_cnn()
_schedule = keras.optimizers.schedules.CosineDecay(1e-4, decay_steps=1000, warmup_target=1e-3, warmup_steps=100)
_adamw = keras.optimizers.AdamW(_schedule, weight_decay=0.05, clipnorm=1.0, gradient_accumulation_steps=4)
_adamw.build(_cnn.trainable_variables)
_focal = keras.losses.CategoricalFocalCrossentropy(from_logits=True)
_aux_xent = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
AUX_WEIGHT = 0.3


@tf.function(jit_compile=True)
def augment_two_heads_accum_step(images, labels):
    with tf.GradientTape() as tape:
        logits, aux_logits = _cnn(images, training=True)
        main_loss = _focal(tf.one_hot(labels, CLASSES), logits)
        aux_loss = _aux_xent(labels, aux_logits)
        loss = main_loss + AUX_WEIGHT * aux_loss
    grads = tape.gradient(loss, _cnn.trainable_variables)
    _adamw.apply_gradients(zip(grads, _cnn.trainable_variables))
    return loss, main_loss, aux_loss
