"""Every saved sample's FLOPs are XLA's own: real TensorFlow and JAX programs, CPU and GPU,
before and after optimization.

The oracle is XLA: ``scripts/record_sample_costs.py`` costs each sample's text with XLA's own
HLO parser and cost analysis (jaxlib) and records the figure with the text's SHA-256
(``tests/data/costs/sample_costs.json``). Two things XLA's CPU cost analysis does not count are
costed separately, by XLA too: a GPU module's cuDNN convolutions (a ``custom-call`` is no work
to it), each as the ``convolution`` of the module before optimization it replaced, cut out into
a module of its own. XLA adds its figures up in single precision, so a total of a few thousand
instructions may be off its exact sum by a few parts in 10⁵ (``fused_additions``: 99,999,760,384
for 10¹¹); hloviz's integers are held to that.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path

import pytest

from hloviz.analysis.flops import flops
from hloviz.analysis.kernels import kernels
from hloviz.parser import parse

ROOT = Path(__file__).resolve().parent.parent
RECORDED = Path(__file__).resolve().parent / "data" / "costs" / "sample_costs.json"
#: XLA's single-precision sums: off the exact total by at most this share.
ROUNDING = 1e-4


def _records() -> list[dict]:
    return json.loads(RECORDED.read_text(encoding="utf-8"))


def _text(record: dict) -> str:
    folder = ROOT / record["capture"]
    plain, packed = folder / f"{record['stage']}.hlo", folder / f"{record['stage']}.hlo.gz"
    if plain.exists():
        return plain.read_text(encoding="utf-8")
    with gzip.open(packed, "rt", encoding="utf-8") as f:
        return f.read()


@pytest.mark.parametrize("record", _records(), ids=lambda r: f"{r['capture'].split('captures/')[-1]} ({r['stage']})")
def test_each_sample_costs_what_xla_said(record):
    text = _text(record)
    assert hashlib.sha256(text.encode("utf-8")).hexdigest() == record["sha256"], \
        "the sample changed since XLA costed it: run scripts/record_sample_costs.py"
    module = parse(text)
    expected = record["xla_flops"] + sum(record["library_convolutions"].values())
    assert kernels(module).flops == pytest.approx(expected, rel=ROUNDING, abs=8)
    by_name = {i.name: i for i in module.instructions()}
    for name, xla in record["library_convolutions"].items():
        assert flops(by_name[name]) == xla, name  # one convolution: no rounding to allow


def test_the_record_covers_every_sample_and_the_gpu_convolutions():
    records = _records()
    folders = {p.parent.relative_to(ROOT).as_posix() for p in (ROOT / "samples" / "captures").rglob("*.hlo*")}
    assert {r["capture"] for r in records} == folders
    convolutions = {(r["capture"], n) for r in records for n in r["library_convolutions"]}
    assert len(convolutions) >= 5
    # every kind XLA hands cuDNN in the GPU samples: forward (with bias), filter and input gradients
    text = "".join(_text(r) for r in records if r["library_convolutions"])
    for target in ("convBiasActivationForward", "convBackwardFilter"):
        assert f"__cudnn${target}" in text
    # a module before optimization whose computations two calls share (JAX's jnp.where, tril)
    assert any(r["stage"] == "pre" and "jax_scopes" in r["capture"] for r in records)


def _call(target: str, result: str, operands: tuple[str, str]) -> str:
    return (f"HloModule m\n\nENTRY e {{\n  a = {operands[0]} parameter(0)\n  b = {operands[1]} parameter(1)\n"
            f"  ROOT c = ({result}, u8[0]{{0}}) custom-call(a, b), window={{size=3x3 stride=2x2 pad=1_1x1_1}}, "
            f'dim_labels=b01f_o01i->b01f, custom_call_target="__cudnn${target}"\n}}\n')


@pytest.mark.parametrize("target, result, operands", [
    ("convForward", "f32[1,3,3,3]", ("f32[1,5,5,2]", "f32[3,3,3,2]")),           # input, kernel -> output
    ("convBiasActivationForward", "f32[1,3,3,3]", ("f32[1,5,5,2]", "f32[3,3,3,2]")),
    ("convBackwardFilter", "f32[3,3,3,2]", ("f32[1,5,5,2]", "f32[1,3,3,3]")),    # input, output's gradient
    ("convBackwardInput", "f32[1,5,5,2]", ("f32[1,3,3,3]", "f32[3,3,3,2]")),     # output's gradient, kernel
])
def test_a_cudnn_convolution_counts_the_forward_convolutions_work_whichever_gradient_it_is(target, result, operands):
    # one 3x3 convolution of stride 2, 2 -> 3 features, a 5x5 image padded by one to 3x3
    # outputs: along each side, taps 0 and 2 meet 2 real inputs and tap 1 meets 3 (7 pairs);
    # 2 x 3 x 7 x 7 multiply-adds whichever of its three products cuDNN is asked for
    call = parse(_call(target, result, operands)).entry.root
    assert flops(call) == 2 * (2 * 3 * 7 * 7)


@pytest.mark.requires_jax
def test_a_jitted_function_a_model_calls_six_times_counts_six_times_before_optimization():
    """Written as a JAX user writes a model of repeated blocks: before optimization the six calls
    share one computation; XLA's cost analysis counts its work at every call, and so must hloviz."""
    import jax
    import jax.numpy as jnp

    @jax.jit
    def block(x, w):
        return jax.nn.gelu(x @ w) + x

    def model(x, ws):
        for i in range(6):
            x = block(x, ws[i])
        return jnp.sum(x)

    lowered = jax.jit(model).lower(jnp.ones((8, 64)), jnp.ones((6, 64, 64)))
    text = lowered.as_text(dialect="hlo")
    assert text.count(" call(") == 6
    cost = lowered.cost_analysis()
    cost = cost[0] if isinstance(cost, list) else cost
    report = kernels(parse(text))
    assert report.flops == int(cost["flops"] + cost.get("transcendentals", 0))
    assert {k.runs for k in report.kernels if k.opcode == "dot"} == {6}
