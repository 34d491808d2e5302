"""Round 80 (held out, JAX): models written the way users write them, not looked at while building
anything.

* ``nnx_scan_remat_muon_step``: a Flax NNX decoder with the layers stacked and scanned — an
  ``nnx.Embed``, three ``Block`` modules created at once by ``nnx.vmap`` over split ``nnx.Rngs``
  (``nnx.split_rngs``), each ``nnx.RMSNorm`` → causal self-attention with rotary position
  embeddings written by hand (``jnp.einsum``) → ``nnx.RMSNorm`` → a SwiGLU MLP of ``nnx.Linear``;
  the forward pass is ``nnx.scan`` over the stacked blocks of an ``nnx.remat``-ed body (the block
  recomputed in the backward pass), a tied output projection (``embed.attend``). Next-token
  cross-entropy by ``optax.softmax_cross_entropy_with_integer_labels``; one step of
  ``nnx.Optimizer`` with ``optax.contrib.muon`` (a warm-up–cosine schedule, the stacked
  ``[layer, in, out]`` kernels orthogonalised per layer by ``MuonDimensionNumbers``, the rest by
  its Adam path) under ``nnx.jit``.
* ``pinn_lbfgs_step``: a physics-informed network for the viscous Burgers equation
  ``u_t + u u_x = ν u_xx`` — a Flax ``linen`` MLP (``nn.Dense`` ×3 hidden) whose activation is a
  ``jax.custom_jvp`` function (a softplus-gated "swish" with a hand-written derivative); the
  residual's ``u_t``, ``u_x`` and ``u_xx`` by nested ``jax.jvp`` per collocation point under
  ``jax.vmap``; the loss is the residual MSE plus initial-condition and boundary MSEs. One step of
  ``optax.lbfgs()`` — its zoom line search (a ``while_loop`` inside the optimizer) evaluates the
  loss and its gradient again through ``optax.value_and_grad_from_state``.

Capture with ``hloviz dump benchmarks/heldout/round80_jax.py:NAME -o DIR`` (the arguments are the
objects themselves, ``HLOVIZ_ARGS``).
"""
import flax.linen as nn
import jax
import jax.numpy as jnp
import optax
from flax import nnx

# --- NNX scanned decoder with rematerialisation, RoPE, Muon -----------------------------------

VOCAB = 48
SEQ = 16
DIM = 32
HEADS = 4
LAYERS = 3


def _rope(x):
    # x: [batch, seq, heads, head_dim]
    half = x.shape[-1] // 2
    freqs = 1.0 / (10000.0 ** (jnp.arange(half) / half))
    angles = jnp.arange(x.shape[1])[:, None] * freqs[None, :]
    cos, sin = jnp.cos(angles)[None, :, None, :], jnp.sin(angles)[None, :, None, :]
    x1, x2 = x[..., :half], x[..., half:]
    return jnp.concatenate([x1 * cos - x2 * sin, x1 * sin + x2 * cos], axis=-1)


class Block(nnx.Module):
    def __init__(self, rngs: nnx.Rngs):
        self.norm1 = nnx.RMSNorm(DIM, rngs=rngs)
        self.qkv = nnx.Linear(DIM, 3 * DIM, use_bias=False, rngs=rngs)
        self.proj = nnx.Linear(DIM, DIM, use_bias=False, rngs=rngs)
        self.norm2 = nnx.RMSNorm(DIM, rngs=rngs)
        self.gate = nnx.Linear(DIM, 2 * DIM, use_bias=False, rngs=rngs)
        self.up = nnx.Linear(DIM, 2 * DIM, use_bias=False, rngs=rngs)
        self.down = nnx.Linear(2 * DIM, DIM, use_bias=False, rngs=rngs)

    def __call__(self, x):
        b, t, _ = x.shape
        q, k, v = jnp.split(self.qkv(self.norm1(x)).reshape(b, t, 3 * HEADS, DIM // HEADS), 3, axis=2)
        q, k = _rope(q), _rope(k)
        scores = jnp.einsum("bqhd,bkhd->bhqk", q, k) / jnp.sqrt(DIM // HEADS)
        causal = jnp.tril(jnp.ones((t, t), bool))
        weights = jax.nn.softmax(jnp.where(causal, scores, -1e9), axis=-1)
        attn = jnp.einsum("bhqk,bkhd->bqhd", weights, v).reshape(b, t, DIM)
        x = x + self.proj(attn)
        h = self.norm2(x)
        return x + self.down(jax.nn.silu(self.gate(h)) * self.up(h))


class Decoder(nnx.Module):
    def __init__(self, rngs: nnx.Rngs):
        self.embed = nnx.Embed(VOCAB, DIM, rngs=rngs)

        @nnx.split_rngs(splits=LAYERS)
        @nnx.vmap(in_axes=(0,), out_axes=0)
        def make_blocks(rngs):
            return Block(rngs)

        self.blocks = make_blocks(rngs)
        self.norm = nnx.RMSNorm(DIM, rngs=rngs)

    def __call__(self, ids):
        x = self.embed(ids)

        @nnx.scan(in_axes=(nnx.Carry, 0), out_axes=nnx.Carry)
        @nnx.remat
        def run(x, block):
            return block(x)

        x = run(x, self.blocks)
        return self.embed.attend(self.norm(x))


def _muon_dims(params):
    def dims(path, p):
        if p.ndim == 3:  # stacked [layer, in, out] kernels
            return optax.contrib.MuonDimensionNumbers(reduction_axis=1, output_axis=2)
        return None

    return jax.tree_util.tree_map_with_path(dims, params)


_decoder = Decoder(nnx.Rngs(0))
_lm_schedule = optax.warmup_cosine_decay_schedule(0.0, 0.02, warmup_steps=10, decay_steps=200)
_muon = nnx.Optimizer(_decoder, optax.contrib.muon(_lm_schedule, muon_weight_dimension_numbers=_muon_dims),
                      wrt=nnx.Param)


@nnx.jit
def nnx_scan_remat_muon_step(model, optimizer, tokens):
    def loss_fn(m):
        logits = m(tokens[:, :-1])
        return optax.softmax_cross_entropy_with_integer_labels(logits, tokens[:, 1:]).mean()

    loss, grads = nnx.value_and_grad(loss_fn)(model)
    optimizer.update(model, grads)
    return loss


# --- PINN for Burgers' equation, custom_jvp activation, L-BFGS --------------------------------

NU = 0.01 / jnp.pi
N_COLLOC = 128
N_EDGE = 32


@jax.custom_jvp
def swish(x):
    return x * jax.nn.sigmoid(x)


@swish.defjvp
def _swish_jvp(primals, tangents):
    (x,), (dx,) = primals, tangents
    s = jax.nn.sigmoid(x)
    return x * s, (s + x * s * (1.0 - s)) * dx


class PINN(nn.Module):
    @nn.compact
    def __call__(self, t, x):
        h = jnp.stack([t, x], axis=-1)
        for i in range(3):
            h = swish(nn.Dense(32, name=f"hidden{i}")(h))
        return nn.Dense(1, name="u")(h)[..., 0]


_pinn = PINN()
_pinn_params = _pinn.init(jax.random.PRNGKey(0), jnp.zeros(()), jnp.zeros(()))
_lbfgs = optax.lbfgs()


def _pinn_loss(params, colloc, initial, boundary):
    def u(t, x):
        return _pinn.apply(params, t, x)

    def residual(tx):
        t, x = tx[0], tx[1]
        u_val, u_t = jax.jvp(lambda s: u(s, x), (t,), (1.0,))
        def u_x_fn(y):
            return jax.jvp(lambda z: u(t, z), (y,), (1.0,))[1]

        u_x, u_xx = jax.jvp(u_x_fn, (x,), (1.0,))
        return u_t + u_val * u_x - NU * u_xx

    r = jax.vmap(residual)(colloc)
    u0 = jax.vmap(lambda x: u(0.0, x))(initial)
    ub = jax.vmap(lambda tx: u(tx[0], tx[1]))(boundary)
    return jnp.mean(r ** 2) + jnp.mean((u0 + jnp.sin(jnp.pi * initial)) ** 2) + jnp.mean(ub ** 2)


@jax.jit
def pinn_lbfgs_step(params, opt_state, colloc, initial, boundary):
    def loss_fn(p):
        return _pinn_loss(p, colloc, initial, boundary)

    value_and_grad = optax.value_and_grad_from_state(loss_fn)
    loss, grads = value_and_grad(params, state=opt_state)
    updates, opt_state = _lbfgs.update(grads, opt_state, params, value=loss, grad=grads, value_fn=loss_fn)
    params = optax.apply_updates(params, updates)
    return params, opt_state, loss


_colloc = jnp.stack([jax.random.uniform(jax.random.PRNGKey(1), (N_COLLOC,)),
                     jax.random.uniform(jax.random.PRNGKey(2), (N_COLLOC,), minval=-1.0, maxval=1.0)], axis=-1)
_initial = jnp.linspace(-1.0, 1.0, N_EDGE)
_boundary = jnp.stack([jnp.linspace(0.0, 1.0, N_EDGE), jnp.where(jnp.arange(N_EDGE) % 2 == 0, -1.0, 1.0)], axis=-1)

HLOVIZ_ARGS = {
    "nnx_scan_remat_muon_step": [_decoder, _muon, jax.random.randint(jax.random.PRNGKey(3), (4, SEQ + 1), 0, VOCAB)],
    "pinn_lbfgs_step": [_pinn_params, _lbfgs.init(_pinn_params), _colloc, _initial, _boundary],
}
