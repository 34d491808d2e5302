"""Round 70 (held out, JAX): a Flax model's training steps in a loop, written after the change
that orders a loop body's boxes and not looked at while building it.

* ``flax_fori_steps``: ``lax.fori_loop`` of four optax AdamW steps of a Flax encoder (Dense,
  LayerNorm, Dropout, Dense), a fresh dropout key each step, the batch by ``dynamic_index_in_dim``.

Capture with ``hloviz dump benchmarks/heldout/round70_jax.py:flax_fori_steps --arg "f32[4,8,12]" --arg "s32[4,8]" -o DIR``.
"""
import flax.linen as nn
import jax
import optax


class Encoder(nn.Module):
    @nn.compact
    def __call__(self, x, train: bool):
        h = nn.relu(nn.Dense(24, name="embed")(x))
        h = nn.LayerNorm(name="norm")(h)
        h = nn.Dropout(0.1, deterministic=not train, name="dropout")(h)
        return nn.Dense(3, name="classify")(h)


_model = Encoder()
_opt = optax.adamw(1e-3)


@jax.jit
def flax_fori_steps(xs, ys):
    params = _model.init(jax.random.PRNGKey(0), xs[0], False)
    state = _opt.init(params)

    def body(i, carry):
        params, state, key = carry
        key, drop = jax.random.split(key)
        x = jax.lax.dynamic_index_in_dim(xs, i, keepdims=False)
        y = jax.lax.dynamic_index_in_dim(ys, i, keepdims=False)

        def loss(p):
            logits = _model.apply(p, x, True, rngs={"dropout": drop})
            return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()

        grads = jax.grad(loss)(params)
        updates, state = _opt.update(grads, state, params)
        return optax.apply_updates(params, updates), state, key

    params, _, _ = jax.lax.fori_loop(0, 4, body, (params, state, jax.random.PRNGKey(1)))
    return params


#: The arguments ``benchmarks/flops_vs_xla.py`` compiles each function with.
HLOVIZ_ARGS = {"flax_fori_steps": ["f32[4,8,12]", "s32[4,8]"]}
