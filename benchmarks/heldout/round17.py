"""Held out (seventeenth round): models written the way users write them, none captured here
before, to check the overview (issue 33) on styles no earlier round used. Nothing here was
looked at while the overview was built.

Capture with ``hloviz dump benchmarks/heldout/round17.py:NAME --arg SPEC … -o DIR``:

* ``regularized_step`` (a Keras functional CNN whose layers carry ``kernel_regularizer=l2``: the
  loss adds ``sum(model.losses)``, one penalty per layer; dropout; SGD with Nesterov momentum
  and ``clipnorm``): ``--arg "f32[8,32,32,3]" --arg "s32[8]"``
* ``ema_step`` (a Keras MLP trained with ``AdamW(use_ema=True)``: the optimizer keeps a moving
  average of every weight beside Adam's moments): ``--arg "f32[32,40]" --arg "f32[32,1]"``
* ``seq2seq_step`` (an encoder-decoder: embedding, a GRU encoder, a GRU decoder started from the
  encoder's state, dot-product ``Attention`` over the encoder's outputs; RMSprop):
  ``--arg "s32[4,12]" --arg "s32[4,10]" --arg "s32[4,10]"``

and, in JAX, ``round17_jax.py``; then ``python benchmarks/overview_bench.py --no-diffs --model DIR``.
"""
import keras
import tensorflow as tf

_L2 = keras.regularizers.l2(1e-4)


def _cnn() -> keras.Model:
    x = inp = keras.Input((32, 32, 3), name="image")
    for i, width in enumerate((16, 32, 64)):
        x = keras.layers.Conv2D(width, 3, padding="same", kernel_regularizer=_L2, name=f"conv_{i}")(x)
        x = keras.layers.BatchNormalization(name=f"bn_{i}")(x)
        x = keras.layers.ReLU(name=f"relu_{i}")(x)
        x = keras.layers.MaxPooling2D(name=f"pool_{i}")(x)
    x = keras.layers.GlobalAveragePooling2D(name="gap")(x)
    x = keras.layers.Dropout(0.3, name="drop")(x)
    out = keras.layers.Dense(10, kernel_regularizer=_L2, name="logits")(x)
    return keras.Model(inp, out, name="reg_cnn")


_reg = _cnn()
_reg_opt = keras.optimizers.SGD(0.05, momentum=0.9, nesterov=True, clipnorm=1.0)
_reg_opt.build(_reg.trainable_variables)
_ce = keras.losses.SparseCategoricalCrossentropy(from_logits=True)


@tf.function(jit_compile=True)
def regularized_step(x, y):
    with tf.GradientTape() as tape:
        logits = _reg(x, training=True)
        loss = _ce(y, logits) + tf.add_n(_reg.losses)
    grads = tape.gradient(loss, _reg.trainable_variables)
    _reg_opt.apply_gradients(zip(grads, _reg.trainable_variables))
    return loss


_mlp = keras.Sequential([keras.Input((40,)), keras.layers.Dense(64, activation="relu", name="hidden_a"),
                         keras.layers.Dense(64, activation="relu", name="hidden_b"),
                         keras.layers.Dense(1, name="out")], name="regressor")
_ema_opt = keras.optimizers.AdamW(1e-3, weight_decay=1e-2, use_ema=True, ema_momentum=0.99)
_ema_opt.build(_mlp.trainable_variables)


@tf.function(jit_compile=True)
def ema_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(_mlp(x, training=True) - y))
    grads = tape.gradient(loss, _mlp.trainable_variables)
    _ema_opt.apply_gradients(zip(grads, _mlp.trainable_variables))
    return loss


class _Seq2Seq(keras.Model):
    def __init__(self) -> None:
        super().__init__(name="seq2seq")
        self.src_embed = keras.layers.Embedding(300, 32, name="src_embed")
        self.tgt_embed = keras.layers.Embedding(300, 32, name="tgt_embed")
        self.encoder = keras.layers.GRU(48, return_sequences=True, return_state=True, name="encoder")
        self.decoder = keras.layers.GRU(48, return_sequences=True, name="decoder")
        self.attend = keras.layers.Attention(name="attention")
        self.project = keras.layers.Dense(300, name="project")

    def call(self, src, tgt_in):
        enc, state = self.encoder(self.src_embed(src))
        dec = self.decoder(self.tgt_embed(tgt_in), initial_state=state)
        ctx = self.attend([dec, enc])
        return self.project(tf.concat([dec, ctx], axis=-1))


_s2s = _Seq2Seq()
_s2s(tf.zeros([1, 12], tf.int32), tf.zeros([1, 10], tf.int32))
_s2s_opt = keras.optimizers.RMSprop(1e-3)
_s2s_opt.build(_s2s.trainable_variables)


@tf.function(jit_compile=True)
def seq2seq_step(src, tgt_in, tgt_out):
    with tf.GradientTape() as tape:
        logits = _s2s(src, tgt_in, training=True)
        loss = _ce(tgt_out, logits)
    grads = tape.gradient(loss, _s2s.trainable_variables)
    _s2s_opt.apply_gradients(zip(grads, _s2s.trainable_variables))
    return loss
