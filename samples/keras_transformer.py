"""A 2-layer transformer's training step in Keras: forward, backward and Adam, in one XLA program.

Token and position embeddings, two pre-norm blocks (``block_0``, ``block_1``: multi-head
self-attention and a GELU feed-forward network, each with a residual), a final layer norm and a
softmax cross-entropy loss; ``tf.GradientTape`` for the backward pass and Keras' ``Adam`` for
the update. In the HLO, the forward ops are named after the layers
(``transformer/block_0/attention/…``), the backward ops carry TensorFlow's ``gradient_tape/``
prefix and the update Adam's own scope, which is what ``hloviz stats --by scope`` reads::

    hloviz stats samples/keras_transformer.py:train_step --by scope --depth 2
"""

import tensorflow as tf

keras = tf.keras

VOCAB, LENGTH, WIDTH, HEADS, BATCH = 256, 32, 64, 4, 4

HLOVIZ_ARGS = {"train_step": [f"s32[{BATCH},{LENGTH}]", f"s32[{BATCH},{LENGTH}]"]}


class Block(keras.layers.Layer):
    """Pre-norm transformer block: x + attention(norm(x)), then x + mlp(norm(x))."""

    def __init__(self, name: str) -> None:
        super().__init__(name=name)
        self.norm_1 = keras.layers.LayerNormalization(name="norm_1")
        self.attention = keras.layers.MultiHeadAttention(HEADS, WIDTH // HEADS, name="attention")
        self.norm_2 = keras.layers.LayerNormalization(name="norm_2")
        self.mlp_in = keras.layers.Dense(4 * WIDTH, activation="gelu", name="mlp_in")
        self.mlp_out = keras.layers.Dense(WIDTH, name="mlp_out")

    def call(self, x):
        h = self.norm_1(x)
        x = x + self.attention(h, h, use_causal_mask=True)
        return x + self.mlp_out(self.mlp_in(self.norm_2(x)))


class Transformer(keras.Model):
    def __init__(self) -> None:
        super().__init__(name="transformer")
        self.tokens = keras.layers.Embedding(VOCAB, WIDTH, name="token_embedding")
        self.positions = keras.layers.Embedding(LENGTH, WIDTH, name="position_embedding")
        self.blocks = [Block("block_0"), Block("block_1")]
        self.norm = keras.layers.LayerNormalization(name="final_norm")
        self.head = keras.layers.Dense(VOCAB, name="logits")

    def call(self, tokens):
        x = self.tokens(tokens) + self.positions(tf.range(LENGTH))
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


model = Transformer()
model(tf.zeros([BATCH, LENGTH], tf.int32))  # build the variables before tracing
optimizer = keras.optimizers.Adam(1e-3)
optimizer.build(model.trainable_variables)
loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)


@tf.function(jit_compile=True)
def train_step(tokens, targets):
    """One step: the loss of predicting ``targets`` from ``tokens``, its gradients, Adam's update."""
    with tf.GradientTape() as tape:
        loss = loss_fn(targets, model(tokens, training=True))
    gradients = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(gradients, model.trainable_variables))
    return loss
