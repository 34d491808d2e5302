"""Round 76 (held out, JAX): models written the way users write them, not looked at while building
anything.

* ``crf_tagger_step``: a BiLSTM-CRF sequence tagger in Flax ``linen`` — ``nn.Embed``,
  ``nn.Bidirectional`` of two ``nn.RNN(nn.LSTMCell)``, a ``nn.Dense`` of emission scores and a
  learned transition matrix (``self.param``); the loss is the CRF's negative log-likelihood, the
  partition function by the forward algorithm in ``lax.scan`` (``logsumexp`` each step) minus the
  gold path's score; one step of ``optax.adabelief``.
* ``viterbi_decode``: the same tagger's best path — emissions, then Viterbi by ``lax.scan``
  (``max``/``argmax`` over the previous tag) and the backtrace by a reversed ``lax.scan`` —
  inference.
* ``sinkhorn_nnx_step``: a Flax NNX encoder (``nnx.Linear`` → ``nnx.LayerNorm`` → ``nnx.Linear``)
  embedding two point clouds, the entropic optimal-transport cost between them by 20 log-domain
  Sinkhorn iterations in ``lax.fori_loop`` (differentiated through), trained one step by
  ``nnx.Optimizer`` with ``optax.chain(clip_by_global_norm(1.0), adamw(1e-3))`` under ``nnx.jit``.

Capture with ``hloviz dump benchmarks/heldout/round76_jax.py:NAME -o DIR`` (the arguments are the
objects themselves, ``HLOVIZ_ARGS``).
"""
import flax.linen as nn
import jax
import jax.numpy as jnp
import optax
from flax import nnx

TAGS = 7


class Tagger(nn.Module):
    @nn.compact
    def __call__(self, tokens):
        x = nn.Embed(300, 24, name="embed")(tokens)
        x = nn.Bidirectional(nn.RNN(nn.LSTMCell(16), name="forward"), nn.RNN(nn.LSTMCell(16), name="backward"),
                             name="bilstm")(x)
        emissions = nn.Dense(TAGS, name="emissions")(x)
        transitions = self.param("transitions", nn.initializers.normal(0.1), (TAGS, TAGS))
        return emissions, transitions


def _crf_log_partition(emissions, transitions):
    # emissions [B, T, K]
    def step(alpha, emit):
        alpha = jax.nn.logsumexp(alpha[:, :, None] + transitions[None], axis=1) + emit
        return alpha, None

    alpha, _ = jax.lax.scan(step, emissions[:, 0], jnp.swapaxes(emissions[:, 1:], 0, 1))
    return jax.nn.logsumexp(alpha, axis=-1)


def _gold_score(emissions, transitions, tags):
    emit = jnp.take_along_axis(emissions, tags[..., None], axis=-1)[..., 0].sum(-1)
    trans = transitions[tags[:, :-1], tags[:, 1:]].sum(-1)
    return emit + trans


_tagger = Tagger()
_tag_params = _tagger.init(jax.random.PRNGKey(0), jnp.zeros((4, 15), jnp.int32))
_adabelief = optax.adabelief(1e-3)


@jax.jit
def crf_tagger_step(params, opt_state, tokens, tags):
    def loss(p):
        emissions, transitions = _tagger.apply(p, tokens)
        nll = _crf_log_partition(emissions, transitions) - _gold_score(emissions, transitions, tags)
        return nll.mean()

    value, grads = jax.value_and_grad(loss)(params)
    updates, opt_state = _adabelief.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, value


@jax.jit
def viterbi_decode(params, tokens):
    emissions, transitions = _tagger.apply(params, tokens)

    def forward(score, emit):
        cand = score[:, :, None] + transitions[None]
        return cand.max(axis=1) + emit, cand.argmax(axis=1)

    score, back = jax.lax.scan(forward, emissions[:, 0], jnp.swapaxes(emissions[:, 1:], 0, 1))
    last = score.argmax(-1)

    def backtrace(tag, pointers):
        prev = jnp.take_along_axis(pointers, tag[:, None], axis=-1)[:, 0]
        return prev, tag

    first, path = jax.lax.scan(backtrace, last, back, reverse=True)
    return jnp.concatenate([first[:, None], jnp.swapaxes(path, 0, 1)], axis=1), score.max(-1)


class Encoder(nnx.Module):
    def __init__(self, rngs: nnx.Rngs):
        self.inp = nnx.Linear(3, 32, rngs=rngs)
        self.norm = nnx.LayerNorm(32, rngs=rngs)
        self.out = nnx.Linear(32, 8, rngs=rngs)

    def __call__(self, x):
        return self.out(jax.nn.gelu(self.norm(self.inp(x))))


def _sinkhorn_cost(a, b, eps=0.1, iters=20):
    cost = jnp.sum((a[:, None, :] - b[None, :, :]) ** 2, axis=-1)
    n, m = cost.shape
    log_mu = jnp.full((n,), -jnp.log(n))
    log_nu = jnp.full((m,), -jnp.log(m))

    def body(_, fg):
        f, g = fg
        f = eps * (log_mu - jax.nn.logsumexp((g[None, :] - cost) / eps, axis=1))
        g = eps * (log_nu - jax.nn.logsumexp((f[:, None] - cost) / eps, axis=0))
        return f, g

    f, g = jax.lax.fori_loop(0, iters, body, (jnp.zeros(n), jnp.zeros(m)))
    plan = jnp.exp((f[:, None] + g[None, :] - cost) / eps)
    return jnp.sum(plan * cost)


_encoder = Encoder(nnx.Rngs(1))
_nnx_opt = nnx.Optimizer(_encoder, optax.chain(optax.clip_by_global_norm(1.0), optax.adamw(1e-3)), wrt=nnx.Param)


@nnx.jit
def sinkhorn_nnx_step(model, optimizer, source, target):
    def loss_fn(m):
        return _sinkhorn_cost(m(source), m(target))

    loss, grads = nnx.value_and_grad(loss_fn)(model)
    optimizer.update(model, grads)
    return loss


HLOVIZ_ARGS = {
    "crf_tagger_step": [_tag_params, _adabelief.init(_tag_params), jnp.zeros((4, 15), jnp.int32),
                        jnp.zeros((4, 15), jnp.int32)],
    "viterbi_decode": [_tag_params, jnp.zeros((4, 15), jnp.int32)],
    "sinkhorn_nnx_step": [_encoder, _nnx_opt, jnp.zeros((24, 3)), jnp.ones((20, 3))],
}
