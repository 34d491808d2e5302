"""How ``critic_penalty_step.hlo`` was made: a WGAN-GP critic step written by hand — the norm of
the critic's gradient at an interpolated input (an inner ``tf.GradientTape``) added to the loss
as a penalty, the outer tape's gradients clipped by their global norm, a momentum update.

    hloviz dump tests/data/orders/critic_penalty.py:critic_step --arg "f32[4,8]" --arg "f32[4,8]" --arg "f32[4,1]" -o DIR

(TensorFlow 2.21, CPU; the fixture is DIR/pre.hlo less each op's ``source_file``/``source_line``.)
"""

import tensorflow as tf

critic = tf.Variable(tf.random.normal([8, 1]), name="critic_w")
momentum = tf.Variable(tf.zeros([8, 1]), name="momentum")


@tf.function(jit_compile=True)
def critic_step(real, fake, alpha):
    with tf.GradientTape() as outer:
        with tf.name_scope("interpolate"):
            mixed = alpha * real + (1.0 - alpha) * fake
        with tf.GradientTape() as inner:
            inner.watch(mixed)
            score = tf.matmul(mixed, critic)
        grad = inner.gradient(score, mixed)
        with tf.name_scope("penalty"):
            penalty = tf.reduce_mean(tf.square(tf.norm(grad, axis=1) - 1.0))
        with tf.name_scope("critic_loss"):
            loss = tf.reduce_mean(tf.matmul(fake, critic)) - tf.reduce_mean(tf.matmul(real, critic)) + 10.0 * penalty
    grads = outer.gradient(loss, [critic])
    grads, _ = tf.clip_by_global_norm(grads, 1.0)
    with tf.name_scope("sgd"):
        momentum.assign(0.9 * momentum + grads[0])
        critic.assign_sub(0.01 * momentum)
    return loss
