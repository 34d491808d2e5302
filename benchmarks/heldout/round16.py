"""Held out (sixteenth round): models written the way users write them, none captured here
before, to check the overview (issue 33) and the phases after the tape-sum fix. Nothing here
was looked at while that was built.

Capture with ``hloviz dump benchmarks/heldout/round16.py:NAME --arg SPEC … -o DIR``:

* ``module_sgd_step`` (a ``tf.Module`` MLP, no Keras: ``tf.name_scope`` per block, variables
  made by hand, plain SGD with weight decay written as ``assign_sub``):
  ``--arg "f32[16,20]" --arg "s32[16]"``
* ``tied_lm_step`` (a Keras language model whose output projection is its input embedding,
  transposed: the weight is read twice and its gradient summed; a layer with a
  ``tf.custom_gradient`` that clips the gradient through it; Adam):
  ``--arg "s32[4,16]" --arg "s32[4,16]"``
* ``audio_cnn`` (inference: ``tf.signal.stft`` → log magnitude → a small Keras CNN):
  ``--arg "f32[2,4000]"``

and, in JAX, ``round16_jax.py`` (blocks scanned with ``jax.lax.scan`` over stacked parameters,
optax ``adafactor``); then ``python benchmarks/overview_bench.py --no-diffs --model DIR``.
"""
import keras
import tensorflow as tf


class _Block(tf.Module):
    def __init__(self, n_in: int, n_out: int, name: str) -> None:
        super().__init__(name=name)
        with self.name_scope:
            self.w = tf.Variable(tf.random.normal([n_in, n_out], stddev=0.1), name="w")
            self.b = tf.Variable(tf.zeros([n_out]), name="b")

    def __call__(self, x):
        with tf.name_scope(self.name):
            return tf.nn.gelu(tf.matmul(x, self.w) + self.b)


class _Mlp(tf.Module):
    def __init__(self) -> None:
        super().__init__(name="mlp")
        self.blocks = [_Block(20, 64, "block_0"), _Block(64, 64, "block_1"), _Block(64, 64, "block_2")]
        self.head = tf.Variable(tf.random.normal([64, 5], stddev=0.1), name="head")

    def __call__(self, x):
        for b in self.blocks:
            x = b(x)
        with tf.name_scope("head"):
            return tf.matmul(x, self.head)


_mlp = _Mlp()


@tf.function(jit_compile=True)
def module_sgd_step(x, y):
    with tf.GradientTape() as tape:
        logits = _mlp(x)
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
    grads = tape.gradient(loss, _mlp.trainable_variables)
    with tf.name_scope("sgd"):
        for v, g in zip(_mlp.trainable_variables, grads):
            v.assign_sub(0.05 * (g + 1e-4 * v))
    return loss


@tf.custom_gradient
def _clip_through(x):
    def grad(dy):
        return tf.clip_by_value(dy, -0.1, 0.1)
    return tf.identity(x), grad


class _Clip(keras.layers.Layer):
    def call(self, x):
        return _clip_through(x)


class _TiedLm(keras.Model):
    def __init__(self) -> None:
        super().__init__(name="tied_lm")
        self.embed = keras.layers.Embedding(200, 32, name="embed")
        self.rnn = keras.layers.GRU(32, return_sequences=True, name="rnn")
        self.clip = _Clip(name="clip")
        self.norm = keras.layers.LayerNormalization(name="norm")

    def call(self, ids):
        h = self.norm(self.clip(self.rnn(self.embed(ids))))
        return tf.matmul(h, self.embed.embeddings, transpose_b=True)


_lm = _TiedLm()
_lm(tf.zeros([1, 16], tf.int32))
_lm_opt = keras.optimizers.Adam(1e-3)
_lm_opt.build(_lm.trainable_variables)


@tf.function(jit_compile=True)
def tied_lm_step(ids, targets):
    with tf.GradientTape() as tape:
        logits = _lm(ids, training=True)
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=targets, logits=logits))
    grads = tape.gradient(loss, _lm.trainable_variables)
    _lm_opt.apply_gradients(zip(grads, _lm.trainable_variables))
    return loss


_cnn = keras.Sequential([
    keras.Input((None, 129, 1)),
    keras.layers.Conv2D(16, 3, padding="same", activation="relu", name="conv_a"),
    keras.layers.MaxPooling2D(2, name="pool_a"),
    keras.layers.Conv2D(32, 3, padding="same", activation="relu", name="conv_b"),
    keras.layers.GlobalAveragePooling2D(name="gap"),
    keras.layers.Dense(10, name="classes"),
], name="audio_net")


@tf.function(jit_compile=True)
def audio_cnn(wave):
    spec = tf.signal.stft(wave, frame_length=256, frame_step=128, fft_length=256)
    logmag = tf.math.log(tf.abs(spec) + 1e-6)
    return tf.nn.softmax(_cnn(logmag[..., None]))
