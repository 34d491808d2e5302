"""Held out (thirteenth round, JAX): a graph network as a user writes one without a graph
library — node and edge MLPs in Flax linen, messages gathered by edge index and summed onto
their receivers with ``jax.ops.segment_sum``, three rounds of message passing, a graph-level
readout — trained with optax AdamW on a fixed random graph.

    hloviz dump benchmarks/heldout/round13_gnn.py:train_step -o DIR

(the arguments are the objects themselves, ``HLOVIZ_ARGS``), then ``python
benchmarks/overview_bench.py --no-diffs --model DIR``. Figures: benchmarks/results/overview_bench.txt.
"""
import jax
import jax.numpy as jnp
import optax
from flax import linen as nn

NODES, EDGES, FEATURES = 64, 256, 16


class MessagePassing(nn.Module):
    width: int = 32

    @nn.compact
    def __call__(self, h, senders, receivers):
        messages = nn.Dense(self.width, name="edge_mlp")(jnp.concatenate([h[senders], h[receivers]], axis=-1))
        summed = jax.ops.segment_sum(jax.nn.relu(messages), receivers, num_segments=NODES)
        return h + nn.Dense(h.shape[-1], name="node_mlp")(jnp.concatenate([h, summed], axis=-1))


class GraphNet(nn.Module):
    @nn.compact
    def __call__(self, x, senders, receivers):
        h = nn.Dense(32, name="encode")(x)
        for i in range(3):
            h = nn.LayerNorm(name=f"norm_{i}")(MessagePassing(name=f"round_{i}")(h, senders, receivers))
        return nn.Dense(1, name="readout")(jnp.mean(h, axis=0))


_model = GraphNet()
_key = jax.random.PRNGKey(0)
_x = jax.random.normal(_key, (NODES, FEATURES))
_senders = jax.random.randint(jax.random.PRNGKey(1), (EDGES,), 0, NODES)
_receivers = jax.random.randint(jax.random.PRNGKey(2), (EDGES,), 0, NODES)
params = _model.init(_key, _x, _senders, _receivers)["params"]
_tx = optax.adamw(1e-3)
opt_state = _tx.init(params)


@jax.jit
def train_step(params, opt_state, x, senders, receivers, target):
    def loss_fn(p):
        return jnp.mean((_model.apply({"params": p}, x, senders, receivers) - target) ** 2)

    loss, grads = jax.value_and_grad(loss_fn)(params)
    updates, opt_state = _tx.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, loss


HLOVIZ_ARGS = {"train_step": [params, opt_state, _x, _senders, _receivers, jnp.ones((1,))]}
