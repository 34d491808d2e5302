"""Held out (forty-fourth round, TensorFlow): written at the start of the session, before any change,
and not looked at while changes were made.

* ``retrieval_step``: a two-tower retrieval model written in raw TensorFlow — ``tf.Variable``
  embedding tables read by ``tf.nn.embedding_lookup``, an in-batch softmax over the towers' dot
  products, ``tf.math.cumsum`` and ``tf.argsort`` for a recall metric — updated by hand
  (``var.assign_sub(lr * grad)``), no Keras optimizer.
* ``unet_step``: a small U-Net (``Conv2D``, ``MaxPooling2D``, ``UpSampling2D``, ``Concatenate``
  skip connections) trained one step on a soft Dice loss by Keras ``SGD`` with Nesterov momentum,
  an ``ExponentialDecay`` schedule and ``use_ema=True`` (the optimizer keeps an average of every
  weight).

Capture with ``hloviz dump benchmarks/heldout/round44.py:retrieval_step --arg "s32[16]" --arg
"s32[16]" -o DIR`` and ``hloviz dump benchmarks/heldout/round44.py:unet_step --arg
"f32[2,32,32,3]" --arg "f32[2,32,32,1]" -o DIR``.
"""
import keras
import tensorflow as tf

_users = tf.Variable(tf.random.normal([100, 24], stddev=0.1), name="user_table")
_items = tf.Variable(tf.random.normal([300, 24], stddev=0.1), name="item_table")
_proj = tf.Variable(tf.random.normal([24, 24], stddev=0.1), name="item_proj")
_LR = 0.05


@tf.function(jit_compile=True)
def retrieval_step(user_ids, item_ids):
    with tf.GradientTape() as tape:
        with tf.name_scope("user_tower"):
            u = tf.math.l2_normalize(tf.nn.embedding_lookup(_users, user_ids), axis=-1)
        with tf.name_scope("item_tower"):
            v = tf.nn.embedding_lookup(_items, item_ids)
            v = tf.math.l2_normalize(tf.nn.relu(v @ _proj), axis=-1)
        with tf.name_scope("in_batch_softmax"):
            logits = tf.matmul(u, v, transpose_b=True) / 0.1
            labels = tf.range(tf.shape(logits)[0])
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels, logits))
    with tf.name_scope("recall"):
        order = tf.argsort(logits, axis=-1, direction="DESCENDING")
        hit = tf.cast(tf.equal(order, labels[:, None]), tf.float32)
        recall_at_5 = tf.reduce_mean(tf.cast(tf.reduce_sum(tf.math.cumsum(hit, axis=-1)[:, :5], axis=-1) > 0, tf.float32))
    grads = tape.gradient(loss, [_users, _items, _proj])
    with tf.name_scope("sgd"):
        for var, g in zip([_users, _items, _proj], grads):
            var.assign_sub(_LR * tf.convert_to_tensor(g))
    return loss, recall_at_5


def _unet() -> keras.Model:
    inp = keras.Input((32, 32, 3), name="image")
    c1 = keras.layers.Conv2D(8, 3, padding="same", activation="relu", name="down1_conv")(inp)
    p1 = keras.layers.MaxPooling2D(name="down1_pool")(c1)
    c2 = keras.layers.Conv2D(16, 3, padding="same", activation="relu", name="down2_conv")(p1)
    p2 = keras.layers.MaxPooling2D(name="down2_pool")(c2)
    b = keras.layers.Conv2D(32, 3, padding="same", activation="relu", name="bottleneck")(p2)
    u2 = keras.layers.UpSampling2D(name="up2_upsample")(b)
    u2 = keras.layers.Concatenate(name="up2_skip")([u2, c2])
    u2 = keras.layers.Conv2D(16, 3, padding="same", activation="relu", name="up2_conv")(u2)
    u1 = keras.layers.UpSampling2D(name="up1_upsample")(u2)
    u1 = keras.layers.Concatenate(name="up1_skip")([u1, c1])
    u1 = keras.layers.Conv2D(8, 3, padding="same", activation="relu", name="up1_conv")(u1)
    out = keras.layers.Conv2D(1, 1, activation="sigmoid", name="mask")(u1)
    return keras.Model(inp, out, name="unet")


_net = _unet()
_sgd = keras.optimizers.SGD(keras.optimizers.schedules.ExponentialDecay(0.1, 100, 0.9), momentum=0.9,
                            nesterov=True, use_ema=True)
_sgd.build(_net.trainable_variables)


def _dice_loss(target, pred):
    inter = tf.reduce_sum(target * pred, axis=[1, 2, 3])
    total = tf.reduce_sum(target + pred, axis=[1, 2, 3])
    return 1.0 - tf.reduce_mean((2.0 * inter + 1.0) / (total + 1.0))


@tf.function(jit_compile=True)
def unet_step(images, masks):
    with tf.GradientTape() as tape:
        loss = _dice_loss(masks, _net(images, training=True))
    grads = tape.gradient(loss, _net.trainable_variables)
    _sgd.apply_gradients(zip(grads, _net.trainable_variables))
    return loss
