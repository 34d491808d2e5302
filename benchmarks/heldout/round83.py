"""Round 83 (held out, TF): models written the way users write them, not looked at while building
anything.

* ``multitask_churn_step``: a two-input, two-output functional ``keras.Model`` (multi-task): a
  customer's event sequence (token ids) goes through ``layers.Embedding(mask_zero=True)`` into a
  ``layers.SimpleRNN`` (the mask reaches the recurrence: masked steps carry the state), the
  customer's numeric features through a ``Dense`` with ``kernel_constraint=MaxNorm(2.0)`` and an
  ``L2`` ``kernel_regularizer``, then ``layers.ActivityRegularization(l1=...)``; the two branches
  are concatenated into a shared ``Dense`` trunk with two heads, ``churn`` (sigmoid) and ``spend``
  (linear). The inputs and outputs are dicts. The loss is written by hand with the task weights a
  Keras user would give ``loss_weights``: ``1.0 *`` binary cross-entropy of ``churn`` plus
  ``0.25 *`` the Huber loss of ``spend``, plus ``tf.add_n(model.losses)`` (the L2 and activity
  penalties). One step of ``keras.optimizers.RMSprop(centered=True, momentum=0.9)`` under
  ``keras.optimizers.schedules.PiecewiseConstantDecay``; Keras applies the ``MaxNorm`` constraint
  after the update.
* ``wgan_gp_step``: one whole WGAN-GP iteration on 16×16 grey images with two models and two
  optimizers: a ``keras.Sequential`` generator (``Dense`` → ``Reshape`` → two ``Conv2DTranspose``
  stride 2 with ``LeakyReLU`` / ``tanh``) and a ``keras.Sequential`` critic (two strided
  ``Conv2D``, ``LayerNormalization``, ``LeakyReLU``, ``Flatten``, ``Dense(1)``). The critic's loss
  has the gradient penalty: a nested ``tf.GradientTape`` (``watch`` on the interpolates of real and
  fake images mixed by ``tf.random.uniform``) gives the critic's gradient at the interpolates, and
  ``10 * (||grad|| - 1)^2`` enters the outer tape — a gradient of a gradient. Then the generator's
  own step on fresh noise. Both optimizers are ``keras.optimizers.Adam(1e-4, beta_1=0.0,
  beta_2=0.9)``, as in the paper.

Capture with
``hloviz dump benchmarks/heldout/round83.py:multitask_churn_step --arg "s32[16,12]" --arg "f32[16,6]" --arg "f32[16]" --arg "f32[16]" -o DIR`` and
``hloviz dump benchmarks/heldout/round83.py:wgan_gp_step --arg "f32[8,16,16,1]" --arg "f32[8,16]" --arg "f32[8,16]" -o DIR``.
"""
import keras
import tensorflow as tf
from keras import layers

# --- multi-task churn model: two inputs, two outputs, masked SimpleRNN, MaxNorm, RMSprop(centered) --

VOCAB = 50
SEQ = 12
NUMERIC = 6


def _customer_model() -> keras.Model:
    tokens = keras.Input((SEQ,), dtype="int32", name="events")
    numeric = keras.Input((NUMERIC,), name="numeric")
    e = layers.Embedding(VOCAB, 16, mask_zero=True, name="event_embed")(tokens)
    h = layers.SimpleRNN(32, name="event_rnn")(e)
    n = layers.Dense(24, activation="relu", name="numeric_fc",
                     kernel_constraint=keras.constraints.MaxNorm(2.0),
                     kernel_regularizer=keras.regularizers.L2(1e-4))(numeric)
    n = layers.ActivityRegularization(l1=1e-5, name="numeric_act_reg")(n)
    z = layers.Concatenate(name="fuse")([h, n])
    z = layers.Dense(32, activation="relu", name="shared_fc")(z)
    churn = layers.Dense(1, activation="sigmoid", name="churn")(z)
    spend = layers.Dense(1, name="spend")(z)
    return keras.Model({"events": tokens, "numeric": numeric}, {"churn": churn, "spend": spend},
                       name="customer_model")


_customer = _customer_model()
_rmsprop = keras.optimizers.RMSprop(
    learning_rate=keras.optimizers.schedules.PiecewiseConstantDecay([100, 1000], [1e-3, 5e-4, 1e-4]),
    centered=True, momentum=0.9)
_rmsprop.build(_customer.trainable_variables)
_bce = keras.losses.BinaryCrossentropy()
_huber = keras.losses.Huber(delta=1.0)
LOSS_WEIGHTS = {"churn": 1.0, "spend": 0.25}


@tf.function(jit_compile=True)
def multitask_churn_step(events, numeric, churned, spend):
    with tf.GradientTape() as tape:
        out = _customer({"events": events, "numeric": numeric}, training=True)
        churn_loss = _bce(churned[:, None], out["churn"])
        spend_loss = _huber(spend[:, None], out["spend"])
        loss = LOSS_WEIGHTS["churn"] * churn_loss + LOSS_WEIGHTS["spend"] * spend_loss
        loss += tf.add_n(_customer.losses)
    grads = tape.gradient(loss, _customer.trainable_variables)
    _rmsprop.apply_gradients(zip(grads, _customer.trainable_variables))
    return loss, churn_loss, spend_loss


# --- WGAN-GP: generator + critic, gradient penalty by a nested tape, two Adam optimizers -----------

LATENT = 16
GP_WEIGHT = 10.0

_generator = keras.Sequential([
    keras.Input((LATENT,)),
    layers.Dense(4 * 4 * 32, name="g_fc"),
    layers.LeakyReLU(0.2, name="g_fc_act"),
    layers.Reshape((4, 4, 32), name="g_reshape"),
    layers.Conv2DTranspose(16, 4, strides=2, padding="same", name="g_up1"),
    layers.LeakyReLU(0.2, name="g_up1_act"),
    layers.Conv2DTranspose(1, 4, strides=2, padding="same", activation="tanh", name="g_up2"),
], name="generator")

_critic = keras.Sequential([
    keras.Input((16, 16, 1)),
    layers.Conv2D(16, 4, strides=2, padding="same", name="c_conv1"),
    layers.LeakyReLU(0.2, name="c_conv1_act"),
    layers.Conv2D(32, 4, strides=2, padding="same", name="c_conv2"),
    layers.LayerNormalization(name="c_norm"),
    layers.LeakyReLU(0.2, name="c_conv2_act"),
    layers.Flatten(name="c_flatten"),
    layers.Dense(1, name="c_score"),
], name="critic")

_g_opt = keras.optimizers.Adam(1e-4, beta_1=0.0, beta_2=0.9, name="g_adam")
_c_opt = keras.optimizers.Adam(1e-4, beta_1=0.0, beta_2=0.9, name="c_adam")
_g_opt.build(_generator.trainable_variables)
_c_opt.build(_critic.trainable_variables)


@tf.function(jit_compile=True)
def wgan_gp_step(real, noise, gen_noise):
    batch = tf.shape(real)[0]
    with tf.GradientTape() as c_tape:
        fake = _generator(noise, training=True)
        real_score = _critic(real, training=True)
        fake_score = _critic(fake, training=True)
        eps = tf.random.uniform([batch, 1, 1, 1])
        mixed = eps * real + (1.0 - eps) * fake
        with tf.GradientTape() as gp_tape:
            gp_tape.watch(mixed)
            mixed_score = _critic(mixed, training=True)
        grad = gp_tape.gradient(mixed_score, mixed)
        grad_norm = tf.sqrt(tf.reduce_sum(tf.square(grad), axis=[1, 2, 3]) + 1e-12)
        gradient_penalty = tf.reduce_mean(tf.square(grad_norm - 1.0))
        c_loss = tf.reduce_mean(fake_score) - tf.reduce_mean(real_score) + GP_WEIGHT * gradient_penalty
    c_grads = c_tape.gradient(c_loss, _critic.trainable_variables)
    _c_opt.apply_gradients(zip(c_grads, _critic.trainable_variables))

    with tf.GradientTape() as g_tape:
        g_loss = -tf.reduce_mean(_critic(_generator(gen_noise, training=True), training=True))
    g_grads = g_tape.gradient(g_loss, _generator.trainable_variables)
    _g_opt.apply_gradients(zip(g_grads, _generator.trainable_variables))
    return c_loss, g_loss
