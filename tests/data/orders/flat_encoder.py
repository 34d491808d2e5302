"""How ``flat_encoder_step.hlo`` was made: a training step of a transformer encoder written as a
Keras functional model, its layers flat siblings named by their layer's number
(``attn_<N>``, ``ln1_<N>``, ``mlp_up_<N>``, ``mlp_down_<N>``, ``ln2_<N>``: no scope per layer),
pre-norm, trained with SGD + momentum.

    hloviz dump tests/data/orders/flat_encoder.py:train_step --arg "s32[4,12]" --arg "s32[4]" -o DIR

(TensorFlow 2.21, CPU; the fixture is DIR/pre.hlo less each op's ``source_file``/``source_line``,
which name this machine's paths.) Each layer norm is a cut of the forward pass of its own, so a
layer is several blocks found by structure, and nothing in the names groups a layer's siblings.
"""

import tensorflow as tf

keras = tf.keras
LAYERS = 5


def _layer(x, n: int):
    h = keras.layers.LayerNormalization(name=f"ln1_{n}")(x)
    x = x + keras.layers.MultiHeadAttention(2, 8, name=f"attn_{n}")(h, h)
    h = keras.layers.LayerNormalization(name=f"ln2_{n}")(x)
    h = keras.layers.Dense(32, activation="relu", name=f"mlp_up_{n}")(h)
    return x + keras.layers.Dense(16, name=f"mlp_down_{n}")(h)


def _model() -> keras.Model:
    tokens = keras.Input((12,), dtype="int32")
    x = keras.layers.Embedding(100, 16, name="embed")(tokens)
    for n in range(1, LAYERS + 1):
        x = _layer(x, n)
    x = keras.layers.LayerNormalization(name="final_ln")(x)
    x = keras.layers.GlobalAveragePooling1D(name="pool")(x)
    return keras.Model(tokens, keras.layers.Dense(3, name="head")(x))


model = _model()
optimizer = keras.optimizers.SGD(0.01, momentum=0.9)
optimizer.build(model.trainable_variables)
loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)


@tf.function(jit_compile=True)
def train_step(tokens, labels):
    with tf.GradientTape() as tape:
        loss = loss_fn(labels, model(tokens, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss
