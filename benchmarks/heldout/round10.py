"""Held out (tenth round): models written the way users write them, none captured here before,
to check the overview's goals (issue 33: boxes, size, cover, crossings, program order, grouping by
structure, legible text) and its time on inputs nothing was tuned on.

Capture each with ``hloviz dump benchmarks/heldout/round10.py:NAME --arg SPEC … -o DIR``:

* ``encoder_step`` (four Keras ``MultiHeadAttention`` encoder blocks over token embeddings,
  AdamW with ``clipnorm``): ``--arg "s32[8,32]" --arg "s32[8]"``
* ``unet_step`` (a small U-Net: two levels down, ``Conv2DTranspose`` up, skip concatenations;
  Adam, per-pixel loss): ``--arg "f32[2,64,64,3]" --arg "s32[2,64,64]"``
* ``mixed_step`` (a residual CNN under the ``mixed_float16`` policy, SGD inside a
  ``LossScaleOptimizer``): ``--arg "f32[8,32,32,3]" --arg "s32[8]"``
* ``effnet_v2`` (EfficientNetV2B0, inference): ``--arg "f32[1,96,96,3]"``

and, written and captured after the overview learnt the layers of ``encoder_step`` (not looked
at while that was built):

* ``gpt_step`` (six post-norm decoder layers with a causal mask and dropout, flat layer names,
  RMSprop): ``--arg "s32[4,16]" --arg "s32[4]"``
* ``mixer_step`` (an MLP-Mixer: token-mixing and channel-mixing MLPs, flat names, Adam):
  ``--arg "f32[4,8,8,3]" --arg "s32[4]"``
* ``flat_resnet_step`` (residual conv blocks, layers named ``conv_N``/``bn_N`` with no block
  names, SGD): ``--arg "f32[4,32,32,3]" --arg "s32[4]"``

then ``python benchmarks/overview_bench.py --no-diffs --model DIR`` and ``python
benchmarks/commands_bench.py --captures DIR``. Figures: benchmarks/results/overview_bench.txt.
"""
import keras
import tensorflow as tf

_loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)


def _step(model: keras.Model, optimizer: keras.optimizers.Optimizer, *, scaled: bool = False):
    optimizer.build(model.trainable_variables)

    @tf.function(jit_compile=True)
    def step(inputs, labels):
        with tf.GradientTape() as tape:
            loss = _loss(labels, tf.cast(model(inputs, training=True), tf.float32))
            if scaled:
                loss = optimizer.scale_loss(loss)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    return step


def _encoder_block(x, i: int):
    attended = keras.layers.MultiHeadAttention(4, 16, name=f"attention_{i}")(x, x)
    x = keras.layers.LayerNormalization(name=f"norm_a_{i}")(x + attended)
    hidden = keras.layers.Dense(128, activation="gelu", name=f"ffn_in_{i}")(x)
    return keras.layers.LayerNormalization(name=f"norm_b_{i}")(x + keras.layers.Dense(64, name=f"ffn_out_{i}")(hidden))


def _encoder() -> keras.Model:
    tokens = keras.Input((32,), dtype="int32")
    x = keras.layers.Embedding(500, 64, name="tokens")(tokens)
    for i in range(4):
        x = _encoder_block(x, i)
    x = keras.layers.GlobalAveragePooling1D()(x)
    return keras.Model(tokens, keras.layers.Dense(3, name="classifier")(x), name="encoder")


encoder_step = _step(_encoder(), keras.optimizers.AdamW(1e-3, clipnorm=1.0))


def _unet() -> keras.Model:
    image = keras.Input((64, 64, 3))
    skips, x = [], image
    for width in (16, 32):
        x = keras.layers.Conv2D(width, 3, padding="same", activation="relu")(x)
        x = keras.layers.Conv2D(width, 3, padding="same", activation="relu")(x)
        skips.append(x)
        x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.Conv2D(64, 3, padding="same", activation="relu")(x)
    for width, skip in zip((32, 16), reversed(skips)):
        x = keras.layers.Conv2DTranspose(width, 2, strides=2)(x)
        x = keras.layers.Concatenate()([x, skip])
        x = keras.layers.Conv2D(width, 3, padding="same", activation="relu")(x)
    return keras.Model(image, keras.layers.Conv2D(4, 1)(x), name="unet")


unet_step = _step(_unet(), keras.optimizers.Adam(1e-3))


def _residual_cnn() -> keras.Model:
    keras.mixed_precision.set_global_policy("mixed_float16")
    try:
        image = keras.Input((32, 32, 3))
        x = keras.layers.Conv2D(32, 3, padding="same", activation="relu")(image)
        for i in range(3):
            y = keras.layers.Conv2D(32, 3, padding="same", activation="relu", name=f"res_{i}_a")(x)
            y = keras.layers.Conv2D(32, 3, padding="same", name=f"res_{i}_b")(y)
            x = keras.layers.Activation("relu")(keras.layers.Add()([x, y]))
        x = keras.layers.GlobalAveragePooling2D()(x)
        return keras.Model(image, keras.layers.Dense(10, dtype="float32")(x), name="mixed_cnn")
    finally:
        keras.mixed_precision.set_global_policy("float32")


mixed_step = _step(_residual_cnn(), keras.optimizers.LossScaleOptimizer(keras.optimizers.SGD(0.01)), scaled=True)

_effnet_v2 = keras.applications.EfficientNetV2B0(weights=None, input_shape=(96, 96, 3), classes=10)


@tf.function(jit_compile=True)
def effnet_v2(images):
    return _effnet_v2(images, training=False)


def _gpt() -> keras.Model:
    tokens = keras.Input((16,), dtype="int32")
    x = keras.layers.Embedding(200, 32, name="wte")(tokens)
    for i in range(6):
        attended = keras.layers.MultiHeadAttention(4, 8, dropout=0.1, name=f"h{i}_attn")(x, x, use_causal_mask=True)
        x = keras.layers.LayerNormalization(name=f"h{i}_ln1")(x + keras.layers.Dropout(0.1)(attended))
        h = keras.layers.Dense(64, activation="gelu", name=f"h{i}_fc")(x)
        h = keras.layers.Dropout(0.1)(keras.layers.Dense(32, name=f"h{i}_proj")(h))
        x = keras.layers.LayerNormalization(name=f"h{i}_ln2")(x + h)
    x = keras.layers.Lambda(lambda t: t[:, -1], name="last_token")(x)
    return keras.Model(tokens, keras.layers.Dense(5, name="lm_head")(x), name="gpt")


gpt_step = _step(_gpt(), keras.optimizers.RMSprop(1e-3))


def _mixer() -> keras.Model:
    image = keras.Input((8, 8, 3))
    x = keras.layers.Reshape((16, 12))(image)  # 16 patches of 2x2x3
    x = keras.layers.Dense(32, name="stem")(x)
    for i in range(4):
        y = keras.layers.LayerNormalization(name=f"norm_tok_{i}")(x)
        y = keras.layers.Permute((2, 1))(y)
        y = keras.layers.Dense(32, activation="gelu", name=f"tok_mlp1_{i}")(y)
        y = keras.layers.Permute((2, 1))(keras.layers.Dense(16, name=f"tok_mlp2_{i}")(y))
        x = keras.layers.Add()([x, y])
        y = keras.layers.LayerNormalization(name=f"norm_ch_{i}")(x)
        y = keras.layers.Dense(64, activation="gelu", name=f"ch_mlp1_{i}")(y)
        x = keras.layers.Add()([x, keras.layers.Dense(32, name=f"ch_mlp2_{i}")(y)])
    x = keras.layers.GlobalAveragePooling1D()(keras.layers.LayerNormalization(name="pre_head_norm")(x))
    return keras.Model(image, keras.layers.Dense(10, name="head")(x), name="mixer")


mixer_step = _step(_mixer(), keras.optimizers.Adam(1e-3))


def _flat_resnet() -> keras.Model:
    image = keras.Input((32, 32, 3))
    x = keras.layers.Conv2D(16, 3, padding="same", name="conv_0")(image)
    n = 1
    for _ in range(5):
        y = keras.layers.Conv2D(16, 3, padding="same", name=f"conv_{n}")(x)
        y = keras.layers.ReLU(name=f"relu_{n}")(keras.layers.BatchNormalization(name=f"bn_{n}")(y))
        y = keras.layers.Conv2D(16, 3, padding="same", name=f"conv_{n + 1}")(y)
        y = keras.layers.BatchNormalization(name=f"bn_{n + 1}")(y)
        x = keras.layers.ReLU(name=f"relu_{n + 1}")(keras.layers.Add(name=f"add_{n}")([x, y]))
        n += 2
    x = keras.layers.GlobalAveragePooling2D(name="pool")(x)
    return keras.Model(image, keras.layers.Dense(10, name="fc")(x), name="flat_resnet")


flat_resnet_step = _step(_flat_resnet(), keras.optimizers.SGD(0.05))
