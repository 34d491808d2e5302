"""hloviz's FLOPs are XLA's own: convolutions and reductions counted as XLA's cost analysis counts them.

The oracle is XLA itself: JAX compiles each function and reports XLA's cost analysis of the
optimized module (``compiled.cost_analysis()``: ``flops`` plus ``transcendentals``); hloviz
parses the same optimized text (``compiled.as_text()``) and sums its kernels' FLOPs. Counting
every convolution's full window, hloviz was 15-227 % over XLA on padded, strided and dilated
convolutions, and an unseen Flax CNN's training step 10.6 % over (weight-gradient convolutions
are windows the size of the activation, padded by one); counting a reducer once per value
reduced rather than once per value combined (n - 1), the Flax CNN samples were 7-8 % over; counting
a sort as no work, an unseen quantizer's ``argsort`` left it 2.8 % under; summing a conditional's
branches (XLA counts the largest: one runs), a ``lax.switch`` in a scan came out 5 % over;
counting an all-reduce as no work, a sharded training step's optimized module was 4.8 % under
(XLA counts one combination per element; a reduce-scatter and an all-gather none); counting
an FFT as no work, a Fourier layer's step was 97 % under, random bits 8 %; a scatter that sets
counted one per element, 90 FLOPs over. The
functions are written here, one convolution or reduction each (and the gradients of one). XLA's
figures for them, before and after optimization, are also recorded (``scripts/record_xla_costs.py`` →
``tests/data/costs/xla_costs.json``), so the fast tests check them without JAX.
"""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

import pytest

from hloviz.analysis.kernels import kernels
from hloviz.parser import parse

RECORDED = Path(__file__).resolve().parent / "data" / "costs" / "xla_costs.json"
NHWC = ("NHWC", "HWIO", "NHWC")
PADDINGS = [((1, 1), (1, 1)), ((0, 0), (0, 0)), ((2, 1), (0, 3))]
STRIDES = [(1, 1), (2, 3)]
DILATIONS = [(1, 1), (2, 1)]  # of the input (a transposed convolution's) and of the kernel


def cases() -> dict:
    """name → (function, *arguments): one convolution each, or the gradient of one."""
    import jax
    import jax.numpy as jnp
    from jax import lax

    x, w, grouped = jnp.ones((2, 9, 11, 6)), jnp.ones((3, 3, 6, 8)), jnp.ones((3, 3, 2, 6))
    out: dict = {}
    for pad, stride, lhs_dil, rhs_dil in itertools.product(PADDINGS, STRIDES, DILATIONS, DILATIONS):
        out[f"pad={pad} stride={stride} lhs_dilation={lhs_dil} rhs_dilation={rhs_dil}"] = (
            lambda x, w, p=pad, s=stride, ld=lhs_dil, rd=rhs_dil: lax.conv_general_dilated(
                x, w, s, p, ld, rd, dimension_numbers=NHWC), x, w)

    def loss(w, x, groups=1):
        y = lax.conv_general_dilated(x, w, (2, 2), "SAME", dimension_numbers=NHWC, feature_group_count=groups)
        return jnp.sum(y ** 2)

    out["grouped"] = (lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=NHWC,
                                                            feature_group_count=3), x, grouped)
    out["weight gradient"] = (jax.grad(loss), w, x)
    out["input gradient"] = (jax.grad(lambda x, w: loss(w, x)), x, w)
    out["grouped weight gradient"] = (jax.grad(lambda w, x: loss(w, x, 3)), grouped, x)
    out["1-D"] = (lambda x, w: lax.conv_general_dilated(x, w, (1,), "SAME", dimension_numbers=("NWC", "WIO", "NWC")),
                  jnp.ones((4, 20, 5)), jnp.ones((5, 5, 7)))
    # reductions: n values reduced to one are n - 1 applications of the reducer
    pool = (1, 2, 2, 1)

    def max_pool(x):
        return lax.reduce_window(x, -jnp.inf, lax.max, pool, pool, "VALID")

    out["reduce sum"] = (lambda x: x.sum(axis=(1, 2)), x)
    out["softmax"] = (lambda x: jax.nn.softmax(x, axis=-1), x)
    out["argmax (a reduce of two values)"] = (lambda x: jnp.argmax(x, axis=-1), x)
    out["max pool (reduce-window)"] = (max_pool, x)
    out["padded sum pool"] = (lambda x: lax.reduce_window(x, 0.0, lax.add, (1, 3, 3, 1), (1, 1, 1, 1), "SAME"), x)
    out["cumulative sum"] = (lambda x: jnp.cumsum(x, axis=1), x)
    out["max pool gradient (select-and-scatter, scatter)"] = (jax.grad(lambda x: max_pool(x).sum()), x)
    # a sort: n·⌈log2 n⌉ comparisons for n elements, whatever the operands (an argsort sorts two)
    out["sort"] = (lambda x: jnp.sort(x, axis=1), x)
    out["argsort (a sort of two operands)"] = (lambda x: jnp.argsort(x.reshape(2, -1), axis=-1), x)
    # a conditional: one branch runs, the largest counts
    branches = [lambda h: (jnp.tanh(h @ h.T) @ h).sum(axis=0), lambda h: jax.nn.relu(h).sum(axis=0), lambda h: h[0] * 2.0]
    out["switch of three branches"] = (lambda h: lax.switch(jnp.argmax(h[0, :3]), branches, h), x.reshape(-1, 6)[:9])
    # a scatter that sets (``.at[].set``: its combiner returns the update) does no work; one that adds, one each
    out["scatter that sets, scatter that adds"] = (
        lambda x: jnp.zeros((2, 12, 11, 6)).at[:, 1:10].set(x).at[0, 2].add(x[1, 3]), x)
    # an FFT (8 per input element a factor ⌊log2 n⌋ of its length) and random bits (one per element)
    out["fft (rfft2 and irfft2)"] = (lambda x: jnp.fft.irfft2(jnp.fft.rfft2(x[..., 0]) * 0.5, s=(9, 11)), x)
    out["rng-bit-generator (rbg keys)"] = (
        lambda x: jax.random.bernoulli(jax.random.key(7, impl="rbg"), 0.9, x.shape) * x, x)
    if jax.device_count() >= 4:  # collectives: over four devices (XLA_FLAGS, as the record is made)
        out.update(_collectives(x.reshape(-1, 6)[:8]))
    return out


def _collectives(h) -> dict:
    """A data-parallel gradient's ``psum`` (an all-reduce: one combination per element, as XLA
    counts it) and a ``psum_scatter`` beside an ``all_gather`` (data moved: none)."""
    import functools

    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax.sharding import Mesh
    from jax.sharding import PartitionSpec as P

    mesh = Mesh(np.array(jax.devices()[:4]), ("d",))
    sharded = functools.partial(jax.shard_map, mesh=mesh, in_specs=(P(), P("d")), out_specs=P())

    @sharded
    def data_parallel_gradient(w, x):
        return jax.lax.psum(jax.grad(lambda w: (jnp.tanh(x @ w) ** 2).sum())(w), "d")

    @functools.partial(jax.shard_map, mesh=mesh, in_specs=P("d"), out_specs=P("d"))
    def scatter_and_gather(x):
        return jax.lax.psum_scatter(jax.lax.all_gather(x, "d", tiled=True) * 2.0, "d", tiled=True)

    w = h[:6].T @ h[:6]
    return {"all-reduce of a data-parallel gradient": (data_parallel_gradient, w, h),
            "reduce-scatter and all-gather": (scatter_and_gather, h)}


def _recorded() -> list[dict]:
    """The record (none before ``scripts/record_xla_costs.py`` has written it: then the
    coverage test below fails)."""
    return json.loads(RECORDED.read_text(encoding="utf-8")) if RECORDED.exists() else []


def _unknowns(hlo: str) -> int:
    """The custom calls of ``hlo`` (each computation here runs once): XLA's cost analysis counts
    each as -1 FLOP, "unknown", and sums that into its total (shard_map's
    ``xla.sdy.GlobalToLocalShape`` before optimization, LAPACK's ``geqrf``), which hloviz does not."""
    return len(re.findall(r"\bcustom-call\(", hlo))


@pytest.mark.parametrize("record", _recorded(), ids=lambda r: r["case"])
def test_each_recorded_program_costs_what_xla_said(record):
    assert kernels(parse(record["hlo"])).flops == record["xla_flops"] + _unknowns(record["hlo"])


def test_the_record_covers_padding_strides_dilations_groups_and_gradients():
    names = {r["case"] for r in _recorded()}
    assert len(names) == 2 * (len(PADDINGS) * len(STRIDES) * len(DILATIONS) ** 2 + 20)
    assert {f"{n} ({stage})" for n in ("grouped", "weight gradient", "input gradient", "grouped weight gradient", "1-D")
            for stage in ("pre", "post")} <= names
    assert sum(r["xla_flops"] == 0 for r in _recorded()) <= 2  # (a stride past every input: nothing meets)
    assert any("batch_group_count=3" in r["hlo"] for r in _recorded())  # JAX's grouped weight gradient
    for op in ("reduce(", "reduce-window(", "select-and-scatter(", "scatter(", "sort(", "conditional(",
               "all-reduce(", "reduce-scatter(", "all-gather(", "fft(", "rng-bit-generator("):
        assert any(op in r["hlo"] for r in _recorded()), op


@pytest.mark.requires_jax
def test_every_case_costs_what_xla_says_today():
    """The same functions compiled by the JAX installed now (not the recorded texts)."""
    import jax

    for name, (f, *args) in cases().items():
        compiled = jax.jit(f).lower(*args).compile()
        cost = compiled.cost_analysis()
        cost = cost[0] if isinstance(cost, list) else cost
        xla = (cost.get("flops") or 0) + (cost.get("transcendentals") or 0)
        assert kernels(parse(compiled.as_text())).flops == xla + _unknowns(compiled.as_text()), name
