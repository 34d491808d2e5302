"""Held out (third round): training steps of Keras applications whose layers are named by block
(``block2a_*``, ``conv3_block1_*``), not looked at while issue 33's third round of rules (a
training step's layers grouped in its forward pass's order) was built. Capture each with, e.g.,
``hloviz dump benchmarks/heldout/apps_round3.py:b0_adam_step --arg "f32[2,64,64,3]" --arg "s32[2]" -o DIR``
(the same arguments for every step), then ``python benchmarks/overview_bench.py --no-diffs --model DIR``.
Figures: benchmarks/results/overview_bench.txt.
"""
import keras
import tensorflow as tf

_loss = keras.losses.SparseCategoricalCrossentropy()


def _step(model, opt):
    @tf.function(jit_compile=True)
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = _loss(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss
    return step


b0_adam_step = _step(keras.applications.EfficientNetB0(weights=None, input_shape=(64, 64, 3), classes=5),
                     keras.optimizers.Adam(1e-3))
resnet50v2_rmsprop_step = _step(keras.applications.ResNet50V2(weights=None, input_shape=(64, 64, 3), classes=5),
                                keras.optimizers.RMSprop(1e-3))
mnv3l_sgd_step = _step(keras.applications.MobileNetV3Large(weights=None, input_shape=(64, 64, 3), classes=5),
                       keras.optimizers.SGD(0.01))
