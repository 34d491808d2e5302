"""Held out (fortieth round, JAX): written after rounds 38 and 39's fixes, not looked at while
they were made.

* ``gan_step``: a GAN trained in one jitted step — a Flax ``linen`` generator (``nn.Dense``,
  ``nn.BatchNorm`` in training mode, ``nn.tanh``) and discriminator (``nn.Dense``,
  ``nn.leaky_relu``), each with an ``optax.adam`` of its own; the discriminator's loss on real and
  generated samples, then the generator's through the updated discriminator.

Capture with ``hloviz dump benchmarks/heldout/round40_jax.py:gan_step -o DIR`` (its arguments are
the objects themselves, ``HLOVIZ_ARGS``).
"""
import flax.linen as nn
import jax
import jax.numpy as jnp
import optax


class _Generator(nn.Module):
    @nn.compact
    def __call__(self, z, train: bool = True):
        h = nn.relu(nn.BatchNorm(use_running_average=not train, name="norm")(nn.Dense(32, name="expand")(z)))
        return nn.tanh(nn.Dense(8, name="emit")(h))


class _Discriminator(nn.Module):
    @nn.compact
    def __call__(self, x):
        return nn.Dense(1, name="judge")(nn.leaky_relu(nn.Dense(16, name="feature")(x), 0.2))


_gen, _disc = _Generator(), _Discriminator()
_gen_vars = _gen.init(jax.random.PRNGKey(0), jnp.zeros((4, 6)))
_disc_params = _disc.init(jax.random.PRNGKey(1), jnp.zeros((4, 8)))
_g_opt, _d_opt = optax.adam(2e-4, b1=0.5), optax.adam(2e-4, b1=0.5)


def gan_step(gen_vars, disc_params, g_state, d_state, real, z):
    fake, mutated = _gen.apply(gen_vars, z, mutable=["batch_stats"])

    def disc_loss(dp):
        real_logits, fake_logits = _disc.apply(dp, real), _disc.apply(dp, jax.lax.stop_gradient(fake))
        return (optax.sigmoid_binary_cross_entropy(real_logits, jnp.ones_like(real_logits)).mean()
                + optax.sigmoid_binary_cross_entropy(fake_logits, jnp.zeros_like(fake_logits)).mean())

    d_loss, d_grads = jax.value_and_grad(disc_loss)(disc_params)
    d_updates, d_state = _d_opt.update(d_grads, d_state)
    disc_params = optax.apply_updates(disc_params, d_updates)

    def gen_loss(gp):
        generated, _ = _gen.apply({"params": gp, "batch_stats": gen_vars["batch_stats"]}, z, mutable=["batch_stats"])
        logits = _disc.apply(disc_params, generated)
        return optax.sigmoid_binary_cross_entropy(logits, jnp.ones_like(logits)).mean()

    g_loss, g_grads = jax.value_and_grad(gen_loss)(gen_vars["params"])
    g_updates, g_state = _g_opt.update(g_grads, g_state)
    gen_vars = {"params": optax.apply_updates(gen_vars["params"], g_updates), "batch_stats": mutated["batch_stats"]}
    return gen_vars, disc_params, g_state, d_state, d_loss, g_loss


HLOVIZ_ARGS = {
    "gan_step": [_gen_vars, _disc_params, _g_opt.init(_gen_vars["params"]), _d_opt.init(_disc_params),
                 jnp.ones((4, 8)), jnp.ones((4, 6))],
}
