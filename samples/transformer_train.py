"""The third two-version sample: one training step of a small decoder-only transformer.

Two layers, width 64, 4 heads, sequence 16, batch 2, vocabulary 256: embedding, pre-LN blocks
(attention with a causal mask, GELU MLP), tied LM head, cross entropy, the backward pass and an
Adam update of ``tf.Variable``s — in raw TensorFlow (no Keras), so that between two TensorFlow
releases only TensorFlow and XLA differ. Small enough that ``post.hlo`` stays a few MB, deep
enough to have structure (282 kernels under TF 2.17 and 2.21 on CPU).

    hloviz stats samples/transformer_train.py:transformer_train
    hloviz versions samples/transformer_train.py:transformer_train --tf 2.17 --tf 2.21

No tensor of the argument shapes is allocated; the variables (about 0.2 M floats) are.
"""

import tensorflow as tf

LAYERS, WIDTH, HEADS, SEQ, BATCH, VOCAB = 2, 64, 4, 16, 2, 256

HLOVIZ_ARGS = {"transformer_train": [f"s32[{BATCH},{SEQ}]", f"s32[{BATCH},{SEQ}]"]}

_D, _F, _HD, _N = WIDTH, 4 * WIDTH, WIDTH // HEADS, BATCH * SEQ


def _var(name, shape, scale=0.02):
    """Deterministic initial values (only the shapes matter to XLA)."""
    return tf.Variable(tf.random.stateless_normal(shape, seed=[len(name), sum(map(ord, name))]) * scale, name=name)


params = {"embed": _var("embed", [VOCAB, _D]), "pos": _var("pos", [SEQ, _D]),
          "lnf_g": tf.Variable(tf.ones([_D]), name="lnf_g"), "lnf_b": tf.Variable(tf.zeros([_D]), name="lnf_b")}
for _i in range(LAYERS):
    for _w, _shape in (("wqkv", [_D, 3 * _D]), ("wo", [_D, _D]), ("w1", [_D, _F]), ("w2", [_F, _D])):
        params[f"l{_i}_{_w}"] = _var(f"l{_i}_{_w}", _shape)
    for _b, _size in (("bqkv", 3 * _D), ("bo", _D), ("b1", _F), ("b2", _D), ("ln1_b", _D), ("ln2_b", _D)):
        params[f"l{_i}_{_b}"] = tf.Variable(tf.zeros([_size]), name=f"l{_i}_{_b}")
    for _g in ("ln1_g", "ln2_g"):
        params[f"l{_i}_{_g}"] = tf.Variable(tf.ones([_D]), name=f"l{_i}_{_g}")
_names = list(params)
_slots_m = {k: tf.Variable(tf.zeros_like(v), name=f"m_{k}") for k, v in params.items()}
_slots_v = {k: tf.Variable(tf.zeros_like(v), name=f"v_{k}") for k, v in params.items()}
_step = tf.Variable(0.0, name="step")


def _layer_norm(x, g, b):
    mean, var = tf.nn.moments(x, axes=[-1], keepdims=True)
    return (x - mean) * tf.math.rsqrt(var + 1e-5) * g + b


def _heads(t):
    return tf.transpose(tf.reshape(t, [BATCH, SEQ, HEADS, _HD]), [0, 2, 1, 3])


def _block(i, x):
    p = params
    h = _layer_norm(x, p[f"l{i}_ln1_g"], p[f"l{i}_ln1_b"])
    qkv = tf.matmul(h, p[f"l{i}_wqkv"]) + p[f"l{i}_bqkv"]
    q, k, v = tf.split(qkv, 3, axis=-1)
    scores = tf.matmul(_heads(q), _heads(k), transpose_b=True) / _HD ** 0.5
    causal = tf.linalg.band_part(tf.ones([SEQ, SEQ]), -1, 0)
    attn = tf.nn.softmax(scores + (1.0 - causal) * -1e9, axis=-1)
    o = tf.reshape(tf.transpose(tf.matmul(attn, _heads(v)), [0, 2, 1, 3]), [_N, _D])
    x = x + tf.matmul(o, p[f"l{i}_wo"]) + p[f"l{i}_bo"]
    h = _layer_norm(x, p[f"l{i}_ln2_g"], p[f"l{i}_ln2_b"])
    h = tf.nn.gelu(tf.matmul(h, p[f"l{i}_w1"]) + p[f"l{i}_b1"])
    return x + tf.matmul(h, p[f"l{i}_w2"]) + p[f"l{i}_b2"]


@tf.function(jit_compile=True)
def transformer_train(tokens, targets):
    """Forward, backward and one Adam step; returns the loss."""
    with tf.GradientTape() as tape:
        x = tf.gather(params["embed"], tf.reshape(tokens, [_N])) + tf.tile(params["pos"], [BATCH, 1])
        for i in range(LAYERS):
            x = _block(i, x)
        x = _layer_norm(x, params["lnf_g"], params["lnf_b"])
        logits = tf.matmul(x, params["embed"], transpose_b=True)
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(tf.reshape(targets, [_N]), logits))
    grads = tape.gradient(loss, [params[k] for k in _names])
    _step.assign_add(1.0)
    b1, b2, lr = 0.9, 0.999, 1e-3
    c1, c2 = 1.0 - tf.pow(b1, _step), 1.0 - tf.pow(b2, _step)
    for k, g in zip(_names, grads):
        m = _slots_m[k].assign(b1 * _slots_m[k] + (1.0 - b1) * g)
        v = _slots_v[k].assign(b2 * _slots_v[k] + (1.0 - b2) * tf.square(g))
        params[k].assign_sub(lr * (m / c1) / (tf.sqrt(v / c2) + 1e-8))
    return loss
