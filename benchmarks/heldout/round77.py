"""Round 77 (held out, TF): models written the way users write them, not looked at while building
anything.

* ``critic_amsgrad_step``: a small image classifier — ``GaussianNoise`` on the input, a
  ``SpectralNormalization``-wrapped ``Conv2D`` (its power iteration updates a variable each
  training call), ``Cropping2D``, two parallel ``Conv2D`` branches joined by ``Maximum``,
  ``MaxPooling2D``, ``Flatten``, a ``Dense`` head and a ``Softmax`` layer — trained one step on
  ``CategoricalCrossentropy(label_smoothing=0.1)`` of one-hot labels (``tf.one_hot``) by
  ``keras.optimizers.Adam(amsgrad=True, clipnorm=1.0)``.
* ``kmeans_retrieve``: no Keras — one k-means step and a retrieval in plain TF: points and
  centroids L2-normalised, cosine scores by ``tf.matmul``, assignments by ``tf.argmax``, the new
  centroids by ``tf.math.unsorted_segment_sum`` (sums and counts), the 5 nearest points of each
  centroid by ``tf.math.top_k``, and the points' best scores sorted by ``tf.sort``.

Capture with
``hloviz dump benchmarks/heldout/round77.py:critic_amsgrad_step --arg "f32[4,28,28,1]" --arg "s32[4]" -o DIR`` and
``hloviz dump benchmarks/heldout/round77.py:kmeans_retrieve --arg "f32[256,16]" --arg "f32[8,16]" -o DIR``.
"""
import keras
import tensorflow as tf
from keras import layers

CLASSES = 10


def _critic() -> keras.Model:
    images = keras.Input((28, 28, 1))
    x = layers.GaussianNoise(0.05, name="noise")(images)
    x = layers.SpectralNormalization(layers.Conv2D(16, 3, activation="relu"), name="sn_conv")(x)
    x = layers.Cropping2D(((1, 1), (1, 1)), name="crop")(x)
    a = layers.Conv2D(16, 3, padding="same", name="branch_a")(x)
    b = layers.Conv2D(16, 5, padding="same", name="branch_b")(x)
    x = layers.Maximum(name="maxout")([a, b])
    x = layers.MaxPooling2D(2, name="pool")(x)
    x = layers.Flatten(name="flatten")(x)
    x = layers.Dense(CLASSES, name="head")(x)
    probs = layers.Softmax(name="probs")(x)
    return keras.Model(images, probs, name="critic")


_critic_net = _critic()
_amsgrad = keras.optimizers.Adam(1e-3, amsgrad=True, clipnorm=1.0)
_amsgrad.build(_critic_net.trainable_variables)
_smoothed = keras.losses.CategoricalCrossentropy(label_smoothing=0.1)


@tf.function(jit_compile=True)
def critic_amsgrad_step(images, labels):
    with tf.GradientTape() as tape:
        probs = _critic_net(images, training=True)
        loss = _smoothed(tf.one_hot(labels, CLASSES), probs)
    grads = tape.gradient(loss, _critic_net.trainable_variables)
    _amsgrad.apply_gradients(zip(grads, _critic_net.trainable_variables))
    return loss


@tf.function(jit_compile=True)
def kmeans_retrieve(points, centroids):
    points = tf.math.l2_normalize(points, axis=-1)
    centroids = tf.math.l2_normalize(centroids, axis=-1)
    scores = tf.matmul(points, centroids, transpose_b=True)          # [N, K]
    assign = tf.argmax(scores, axis=-1, output_type=tf.int32)        # [N]
    k = tf.shape(centroids)[0]
    sums = tf.math.unsorted_segment_sum(points, assign, k)
    counts = tf.math.unsorted_segment_sum(tf.ones_like(assign, tf.float32), assign, k)
    new_centroids = sums / tf.maximum(counts, 1.0)[:, None]
    top_scores, top_index = tf.math.top_k(tf.transpose(scores), k=5)  # [K, 5]
    best = tf.sort(tf.reduce_max(scores, axis=-1), direction="DESCENDING")
    return new_centroids, top_scores, top_index, best
