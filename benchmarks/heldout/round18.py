"""Held out (eighteenth round): models written the way users write them, none captured here
before, checked after the round-17 fixes (a chain of layers in its order, loose ops crowding out
the model, closed-over weights, unread values in a scope). Nothing here was looked at while
those were built.

Capture with ``hloviz dump benchmarks/heldout/round18.py:NAME --arg SPEC … -o DIR``:

* ``vgg`` (inference: ``keras.applications.VGG16`` without its top, average pooling, ``weights=None``:
  thirteen convolutions and five poolings in one chain): ``--arg "f32[1,64,64,3]"``
* ``cosine_step`` (a subclassed Keras residual CNN with ``GroupNormalization`` and ``Add``
  shortcuts, Adam on a ``CosineDecay`` schedule with warmup: the learning rate computed from
  the step count inside the optimizer): ``--arg "f32[4,32,32,3]" --arg "s32[4]"``
* ``einsum_mixer`` (inference: a token-mixing MLP written with ``tf.einsum`` in a Keras
  layer's ``call``, layer norms, GELU): ``--arg "f32[2,16,24]"``

and, in JAX, ``round18_jax.py``; then ``python benchmarks/overview_bench.py --no-diffs --model DIR``.
"""
import keras
import tensorflow as tf

_vgg = keras.applications.VGG16(weights=None, include_top=False, input_shape=(64, 64, 3), pooling="avg")


@tf.function(jit_compile=True)
def vgg(x):
    return _vgg(x, training=False)


class _Residual(keras.layers.Layer):
    def __init__(self, width: int, **kw) -> None:
        super().__init__(**kw)
        self.conv_a = keras.layers.Conv2D(width, 3, padding="same", name="conv_a")
        self.norm_a = keras.layers.GroupNormalization(groups=4, name="norm_a")
        self.conv_b = keras.layers.Conv2D(width, 3, padding="same", name="conv_b")
        self.norm_b = keras.layers.GroupNormalization(groups=4, name="norm_b")
        self.add = keras.layers.Add(name="add")

    def call(self, x):
        h = tf.nn.silu(self.norm_a(self.conv_a(x)))
        h = self.norm_b(self.conv_b(h))
        return tf.nn.silu(self.add([x, h]))


class _ResNet(keras.Model):
    def __init__(self) -> None:
        super().__init__(name="small_resnet")
        self.stem = keras.layers.Conv2D(16, 3, padding="same", name="stem")
        self.blocks = [_Residual(16, name=f"res_{i}") for i in range(3)]
        self.pool = keras.layers.GlobalAveragePooling2D(name="pool")
        self.head = keras.layers.Dense(10, name="head")

    def call(self, x):
        x = self.stem(x)
        for b in self.blocks:
            x = b(x)
        return self.head(self.pool(x))


_net = _ResNet()
_net(tf.zeros([1, 32, 32, 3]))
_schedule = keras.optimizers.schedules.CosineDecay(1e-4, decay_steps=1000, warmup_target=1e-3, warmup_steps=100)
_opt = keras.optimizers.Adam(_schedule)
_opt.build(_net.trainable_variables)
_ce = keras.losses.SparseCategoricalCrossentropy(from_logits=True)


@tf.function(jit_compile=True)
def cosine_step(x, y):
    with tf.GradientTape() as tape:
        loss = _ce(y, _net(x, training=True))
    grads = tape.gradient(loss, _net.trainable_variables)
    _opt.apply_gradients(zip(grads, _net.trainable_variables))
    return loss


class _TokenMix(keras.layers.Layer):
    def __init__(self, tokens: int, hidden: int, **kw) -> None:
        super().__init__(**kw)
        self.norm = keras.layers.LayerNormalization(name="norm")
        self.w1 = self.add_weight(shape=(tokens, hidden), name="w1")
        self.w2 = self.add_weight(shape=(hidden, tokens), name="w2")

    def call(self, x):
        h = tf.einsum("bnc,nh->bhc", self.norm(x), self.w1)
        return x + tf.einsum("bhc,hn->bnc", tf.nn.gelu(h), self.w2)


_mixer = keras.Sequential([keras.Input((16, 24))] + [_TokenMix(16, 32, name=f"mix_{i}") for i in range(4)]
                          + [keras.layers.GlobalAveragePooling1D(name="pool"), keras.layers.Dense(3, name="out")],
                          name="mixer")


@tf.function(jit_compile=True)
def einsum_mixer(x):
    return _mixer(x, training=False)
