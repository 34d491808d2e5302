"""Held out (forty-eighth round, TensorFlow): written after round 47's fixes, not looked at while
they were made.

* ``per_example_grads``: per-example gradient norms of a small Keras MLP by
  ``tf.vectorized_map`` over a ``GradientTape`` (TensorFlow's pfor: batched ops where the loop
  was), then a clipped, noised (DP-SGD style) update applied by hand.
* ``augment_classify``: augmentation inside the jitted function — ``tf.image.flip_left_right``,
  ``adjust_brightness``, ``adjust_contrast``, a bilinear ``resize``, ``extract_patches`` — then a
  patch-embedding ``Dense`` and a mean-pooled classifier (inference).
* ``scratch_attention``: a transformer block written from ``tf.Variable``s and ``tf.einsum``,
  stateless dropout (``tf.random.stateless_uniform``) on the attention weights, one SGD step.

Capture with ``hloviz dump benchmarks/heldout/round48.py:per_example_grads --arg "f32[8,10]"
--arg "s32[8]" -o DIR``, ``… :augment_classify --arg "f32[2,28,28,3]" -o DIR`` and
``… :scratch_attention --arg "f32[2,12,16]" -o DIR``.
"""
import keras
import tensorflow as tf

_mlp = keras.Sequential([keras.Input((10,)), keras.layers.Dense(16, activation="relu", name="hidden"),
                         keras.layers.Dense(3, name="out")], name="mlp")
_xent = keras.losses.SparseCategoricalCrossentropy(from_logits=True)


@tf.function(jit_compile=True)
def per_example_grads(x, y):
    def one(args):
        xi, yi = args
        with tf.GradientTape() as tape:
            loss = _xent(yi[None], _mlp(xi[None]))
        grads = tape.gradient(loss, _mlp.trainable_variables)
        return tf.linalg.global_norm(grads), grads
    norms, grads = tf.vectorized_map(one, (x, y))
    with tf.name_scope("dp_sgd"):
        scale = tf.minimum(1.0, 1.0 / (norms + 1e-6))
        for var, g in zip(_mlp.trainable_variables, grads):
            clipped = tf.reduce_mean(g * tf.reshape(scale, [-1] + [1] * (len(g.shape) - 1)), axis=0)
            noise = tf.random.stateless_normal(clipped.shape, seed=[1, 2], stddev=0.01)
            var.assign_sub(0.1 * (clipped + noise))
    return norms


_embed = keras.layers.Dense(24, name="patch_embed")
_head = keras.layers.Dense(5, name="head")
_embed.build((None, 7 * 7 * 3))
_head.build((None, 24))


@tf.function(jit_compile=True)
def augment_classify(images):
    with tf.name_scope("augment"):
        x = tf.image.flip_left_right(images)
        x = tf.image.adjust_brightness(x, 0.1)
        x = tf.image.adjust_contrast(x, 1.2)
        x = tf.image.resize(x, (21, 21), method="bilinear")
    with tf.name_scope("patches"):
        p = tf.image.extract_patches(x, sizes=[1, 7, 7, 1], strides=[1, 7, 7, 1], rates=[1, 1, 1, 1], padding="VALID")
        p = tf.reshape(p, [tf.shape(p)[0], -1, 7 * 7 * 3])
    return tf.nn.softmax(_head(tf.reduce_mean(tf.nn.gelu(_embed(p)), axis=1)))


_W = {name: tf.Variable(tf.random.normal(shape, stddev=0.1, seed=i), name=name)
      for i, (name, shape) in enumerate([("wq", [16, 16]), ("wk", [16, 16]), ("wv", [16, 16]),
                                         ("wo", [16, 16]), ("w1", [16, 32]), ("w2", [32, 16])])}


@tf.function(jit_compile=True)
def scratch_attention(x):
    with tf.GradientTape() as tape:
        with tf.name_scope("attention"):
            q = tf.einsum("btd,de->bte", x, _W["wq"])
            k = tf.einsum("btd,de->bte", x, _W["wk"])
            v = tf.einsum("btd,de->bte", x, _W["wv"])
            att = tf.nn.softmax(tf.einsum("bqe,bke->bqk", q, k) / 4.0)
            keep = tf.random.stateless_uniform(tf.shape(att), seed=[3, 4]) > 0.1
            att = tf.where(keep, att / 0.9, 0.0)
            h = x + tf.einsum("bqk,bke,ed->bqd", att, v, _W["wo"])
        with tf.name_scope("mlp"):
            out = h + tf.einsum("btf,fd->btd", tf.nn.relu(tf.einsum("btd,df->btf", h, _W["w1"])), _W["w2"])
        loss = tf.reduce_mean(tf.square(out))
    grads = tape.gradient(loss, list(_W.values()))
    with tf.name_scope("sgd"):
        for var, g in zip(_W.values(), grads):
            var.assign_sub(0.05 * g)
    return loss
