"""How ``tagger_step_pre.hlo`` and ``tagger_step_post.hlo`` were made: a Keras training step of a
small sequence tagger written the way Keras users write one — ``Embedding``, a ``Conv1D``, a
``Dense`` per position — with ``SparseCategoricalCrossentropy`` and Adagrad, in a
``tf.GradientTape`` step under ``jit_compile``:

    hloviz dump tests/data/orders/tagger.py:tagger_step --arg "s32[4,12]" --arg "s32[4,12]" -o DIR

(TensorFlow 2.21 on the CPU; the fixtures are DIR/pre.hlo and DIR/post.hlo less each op's
``source_file``/``source_line``.)
"""
import keras
import tensorflow as tf

_tagger = keras.Sequential([
    keras.Input(shape=(12,), dtype="int32"),
    keras.layers.Embedding(200, 16, name="embed"),
    keras.layers.Conv1D(24, 3, padding="same", activation="relu", name="conv"),
    keras.layers.Dense(24, activation="relu", name="hidden"),
    keras.layers.Dense(5, name="tags"),
], name="tagger")
_opt = keras.optimizers.Adagrad(0.05)
_opt.build(_tagger.trainable_variables)
_loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)


@tf.function(jit_compile=True)
def tagger_step(tokens, tags):
    with tf.GradientTape() as tape:
        loss = _loss(tags, _tagger(tokens, training=True))
    grads = tape.gradient(loss, _tagger.trainable_variables)
    _opt.apply_gradients(zip(grads, _tagger.trainable_variables))
    return loss
