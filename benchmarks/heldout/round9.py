"""Held out (ninth round): training steps nobody here had captured, written as Keras users write
them, to check the overview's rows of loose boxes (``render/cut/ranks.py``) and the speed of
``render`` on inputs the round did not look at while it was built.

Capture each with ``hloviz dump benchmarks/heldout/round9.py:NAME --arg SPEC … -o DIR``:

* ``xception_step`` (Xception + SGD with Nesterov momentum): ``--arg "f32[4,71,71,3]" --arg "s32[4]"``
* ``densenet_step`` (DenseNet121 + Adamax): ``--arg "f32[4,32,32,3]" --arg "s32[4]"``
* ``text_step`` (embedding, two 1-D convolutions, a max pool + Nadam): ``--arg "s32[16,64]" --arg "s32[16]"``

then ``python benchmarks/overview_bench.py --no-diffs --model DIR`` and ``python
benchmarks/commands_bench.py --captures DIR``. Figures: benchmarks/results/overview_bench.txt.
"""
import keras
import tensorflow as tf

_loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)


def _step(model: keras.Model, optimizer: keras.optimizers.Optimizer):
    optimizer.build(model.trainable_variables)

    @tf.function(jit_compile=True)
    def step(inputs, labels):
        with tf.GradientTape() as tape:
            loss = _loss(labels, model(inputs, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    return step


xception_step = _step(keras.applications.Xception(weights=None, input_shape=(71, 71, 3), classes=5,
                                                  classifier_activation=None),
                      keras.optimizers.SGD(0.01, momentum=0.9, nesterov=True))

densenet_step = _step(keras.applications.DenseNet121(weights=None, input_shape=(32, 32, 3), classes=5,
                                                     classifier_activation=None),
                      keras.optimizers.Adamax(1e-3))


def _text_model() -> keras.Model:
    tokens = keras.Input((64,), dtype="int32")
    x = keras.layers.Embedding(1000, 32)(tokens)
    x = keras.layers.Conv1D(64, 5, activation="relu")(x)
    x = keras.layers.Conv1D(64, 3, activation="relu", padding="same")(x)
    x = keras.layers.GlobalMaxPooling1D()(x)
    x = keras.layers.Dropout(0.3)(x)
    return keras.Model(tokens, keras.layers.Dense(4)(x), name="text_cnn")


text_step = _step(_text_model(), keras.optimizers.Nadam(1e-3))
