"""Held out (fifty-second round, JAX): programs partitioned over several devices, which no round
before ran. XLA's SPMD partitioner rewrites the module for one device's share: the optimized
HLO holds ``all-reduce``, ``all-gather``, ``reduce-scatter``, ``collective-permute``, and the
pre-optimization HLO ``sharding={…}`` attributes and ``custom-call(Sharding)`` ops.

* ``sharded_step``: an MLP's SGD step under ``jax.jit`` with ``NamedSharding``s on a 2 × 2 mesh
  (batch over ``data``, the hidden layer's weights over ``model``): data- and tensor-parallel.
* ``ring_sum``: ``shard_map`` over four devices: ``psum``, ``all_gather``, a ring by ``ppermute``
  and a ``psum_scatter``.
* ``pmapped_step``: the same MLP's step by ``jax.pmap`` with a ``pmean`` of the gradients.

Run with ``XLA_FLAGS=--xla_force_host_platform_device_count=4`` (four CPU devices), e.g.
``XLA_FLAGS=--xla_force_host_platform_device_count=4 hloviz dump
benchmarks/heldout/round52_jax.py:sharded_step -o DIR``.
"""
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

_mesh = Mesh(np.array(jax.devices()[:4]).reshape(2, 2), ("data", "model"))
_ring = Mesh(np.array(jax.devices()[:4]), ("i",))


def _loss(params, x, y):
    h = jax.nn.relu(x @ params["w1"] + params["b1"])
    return jnp.mean((h @ params["w2"] - y) ** 2)


_param_shardings = {"w1": NamedSharding(_mesh, P(None, "model")), "b1": NamedSharding(_mesh, P("model")),
                    "w2": NamedSharding(_mesh, P("model", None))}
_batch = NamedSharding(_mesh, P("data", None))


@partial(jax.jit, in_shardings=(_param_shardings, _batch, _batch), out_shardings=(_param_shardings, None))
def sharded_step(params, x, y):
    loss, grads = jax.value_and_grad(_loss)(params, x, y)
    return jax.tree.map(lambda p, g: p - 0.1 * g, params, grads), loss


@jax.jit
@partial(jax.shard_map, mesh=_ring, in_specs=P("i"), out_specs=(P(), P("i"), P("i"), P("i")))
def ring_sum(x):
    total = jax.lax.psum(x.sum(), "i")
    gathered = jax.lax.all_gather(x, "i", tiled=True)
    shifted = jax.lax.ppermute(x, "i", [(k, (k + 1) % 4) for k in range(4)])
    scattered = jax.lax.psum_scatter(gathered * 2.0, "i", tiled=True)
    return total, gathered[: x.shape[0]] * 0 + x, shifted, scattered


@partial(jax.pmap, axis_name="batch")
def pmapped_step(params, x, y):
    loss, grads = jax.value_and_grad(_loss)(params, x, y)
    grads = jax.lax.pmean(grads, "batch")
    return jax.tree.map(lambda p, g: p - 0.1 * g, params, grads), jax.lax.pmean(loss, "batch")


_params = {"w1": jnp.ones((16, 32)) * 0.01, "b1": jnp.zeros((32,)), "w2": jnp.ones((32, 8)) * 0.01}
HLOVIZ_ARGS = {
    "sharded_step": [_params, jnp.ones((8, 16)), jnp.ones((8, 8))],
    "ring_sum": [jnp.arange(16.0)],
    "pmapped_step": [jax.tree.map(lambda a: jnp.stack([a] * 4), _params), jnp.ones((4, 2, 16)), jnp.ones((4, 2, 8))],
}
