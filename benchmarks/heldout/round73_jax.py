"""Round 73 (held out, JAX): a Flax model trained by a scan of steps, written after this
session's changes to loops of steps and not looked at while building them.

* ``clipped_scan_steps``: ``lax.scan`` over a stack of batches of steps of a Flax MLP built with
  ``nn.Sequential`` inside a module (Dense, gelu, Dense, LayerNorm, Dense), optimised by
  ``optax.chain(clip_by_global_norm, adamw)``, the parameters and optimizer state passed in and
  returned with the losses.

Capture with ``hloviz dump benchmarks/heldout/round73_jax.py:clipped_scan_steps -o DIR`` (``HLOVIZ_ARGS``).
"""
import flax.linen as nn
import jax
import jax.numpy as jnp
import optax


class Tower(nn.Module):
    @nn.compact
    def __call__(self, x):
        x = nn.Sequential([nn.Dense(32, name="fc1"), nn.gelu, nn.Dense(32, name="fc2")], name="trunk")(x)
        return nn.Dense(5, name="logits")(nn.LayerNorm(name="norm")(x))


_model = Tower()
_opt = optax.chain(optax.clip_by_global_norm(1.0), optax.adamw(3e-4))


@jax.jit
def clipped_scan_steps(params, opt_state, xs, ys):
    def step(carry, batch):
        params, opt_state = carry
        x, y = batch

        def loss(p):
            return optax.softmax_cross_entropy_with_integer_labels(_model.apply(p, x), y).mean()

        value, grads = jax.value_and_grad(loss)(params)
        updates, opt_state = _opt.update(grads, opt_state, params)
        return (optax.apply_updates(params, updates), opt_state), value

    (params, opt_state), losses = jax.lax.scan(step, (params, opt_state), (xs, ys))
    return params, opt_state, losses


_params = _model.init(jax.random.PRNGKey(0), jnp.zeros((1, 12)))

#: The arguments ``benchmarks/flops_vs_xla.py`` compiles each function with.
HLOVIZ_ARGS = {"clipped_scan_steps": [_params, _opt.init(_params), jnp.zeros((3, 8, 12)), jnp.zeros((3, 8), jnp.int32)]}
