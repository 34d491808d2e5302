"""Held out (forty-first round, JAX): written at the start of a session, before any change it
made, not looked at while its fixes were made.

* ``ensemble_step``: a deep ensemble of four MLPs by Flax's ``nn.vmap`` (``variable_axes``
  ``params: 0``, ``split_rngs``), trained one step by ``optax.chain(clip_by_global_norm, adamw)``
  wrapped in ``optax.MultiSteps`` (gradient accumulation: the update is applied every second
  call, a ``lax.cond`` inside the optimizer).
* ``linear_rnn_step``: a diagonal linear recurrent layer computed by ``jax.lax.associative_scan``
  (the parallel scan of state-space models), a gated MLP after it, trained by ``optax.adam``.

Capture with ``hloviz dump benchmarks/heldout/round41_jax.py:ensemble_step -o DIR`` and
``hloviz dump benchmarks/heldout/round41_jax.py:linear_rnn_step -o DIR`` (their arguments are the
objects themselves, ``HLOVIZ_ARGS``).
"""
import flax.linen as nn
import jax
import jax.numpy as jnp
import optax


class _Member(nn.Module):
    @nn.compact
    def __call__(self, x):
        x = nn.gelu(nn.Dense(32, name="hidden")(x))
        return nn.Dense(3, name="logits")(x)


class _Ensemble(nn.Module):
    @nn.compact
    def __call__(self, x):
        members = nn.vmap(_Member, variable_axes={"params": 0}, split_rngs={"params": True},
                          in_axes=None, out_axes=0, axis_size=4)
        return members(name="members")(x)


_ensemble = _Ensemble()
_ens_params = _ensemble.init(jax.random.PRNGKey(0), jnp.ones((8, 10)))["params"]
_ens_opt = optax.MultiSteps(optax.chain(optax.clip_by_global_norm(1.0), optax.adamw(1e-3)), every_k_schedule=2)


@jax.jit
def ensemble_step(params, opt_state, x, labels):
    def loss_fn(p):
        logits = _ensemble.apply({"params": p}, x)  # [members, batch, classes]
        return optax.softmax_cross_entropy_with_integer_labels(logits, labels[None, :]).mean()

    loss, grads = jax.value_and_grad(loss_fn)(params)
    updates, opt_state = _ens_opt.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, loss


class _LinearRecurrence(nn.Module):
    width: int

    @nn.compact
    def __call__(self, x):  # x: [batch, time, features]
        u = nn.Dense(self.width, name="in_proj")(x)
        log_a = self.param("log_decay", nn.initializers.uniform(1.0), (self.width,))
        a = jnp.broadcast_to(jnp.exp(-jnp.exp(log_a)), u.shape)

        def combine(left, right):
            a_l, b_l = left
            a_r, b_r = right
            return a_l * a_r, a_r * b_l + b_r

        _, h = jax.lax.associative_scan(combine, (a, u), axis=1)
        gate = nn.sigmoid(nn.Dense(self.width, name="gate")(x))
        y = nn.Dense(x.shape[-1], name="out_proj")(h * gate)
        return nn.LayerNorm(name="norm")(x + y)


class _Recurrent(nn.Module):
    @nn.compact
    def __call__(self, x):
        for i in range(2):
            x = _LinearRecurrence(16, name=f"layer_{i}")(x)
        return nn.Dense(1, name="readout")(x[:, -1])


_rnn = _Recurrent()
_rnn_params = _rnn.init(jax.random.PRNGKey(1), jnp.ones((2, 12, 6)))["params"]
_rnn_opt = optax.adam(3e-3)


@jax.jit
def linear_rnn_step(params, opt_state, x, y):
    def loss_fn(p):
        return jnp.mean((_rnn.apply({"params": p}, x)[:, 0] - y) ** 2)

    loss, grads = jax.value_and_grad(loss_fn)(params)
    updates, opt_state = _rnn_opt.update(grads, opt_state)
    return optax.apply_updates(params, updates), opt_state, loss


HLOVIZ_ARGS = {
    "ensemble_step": [_ens_params, _ens_opt.init(_ens_params), jnp.ones((8, 10)), jnp.zeros((8,), jnp.int32)],
    "linear_rnn_step": [_rnn_params, _rnn_opt.init(_rnn_params), jnp.ones((2, 12, 6)), jnp.zeros((2,))],
}
