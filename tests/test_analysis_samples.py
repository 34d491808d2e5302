"""The four sample truths (issue 3, item 9), asserted from real TensorFlow output on CPU.

Each sample is captured once per session through :func:`hloviz.capture.load_target` (pinned to
``CPU:0`` so the facts do not depend on the machine's accelerator), then analysed. What TF 2.21
really does, and these tests pin down:

* ``fused_additions``: one kLoop fusion holding all 1000 adds; nothing folded.
* ``fused_additions_const``: XLA's simplifier turns ``x + 1 + … + 1`` into ``x + 1000``: one
  fusion with one add of the constant ``1000``; ``add`` … ``add_998`` are folded into it.
* ``constant_arithmetic``: TensorFlow's bridge (not XLA) folds ``a*b + sin(a)`` before XLA sees
  it; the pre-optimization HLO already holds the literal, and the only kernel copies it out.
  ``constant_arithmetic_xla`` (16 MiB fills, past TF's folding limit) is folded by XLA into one
  scalar, ``3.99749494``, that a single kernel broadcasts.
* ``matmul_chain``: the matmul stays a ``dot``; ``+ sin`` and ``relu`` fuse into one kLoop
  fusion; the sum is a fusion of its own. Without ``jit_compile``, TF 2.21's
  ``experimental_get_compiler_ir`` refuses the function, so hloviz compiles it with
  ``jit_compile=True`` — the HLO is the same — and says that TF itself would run each op alone.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from hloviz import api

from . import present

pytestmark = pytest.mark.requires_tf

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
N = 8192


def _tf_inputs(path: Path, fn: str) -> dict:
    """The traced graph's edges (op → input ops), for captures whose info lacks them."""
    spec = present(importlib.util.spec_from_file_location(f"_hloviz_sample_{path.stem}", path))
    module = importlib.util.module_from_spec(spec)
    present(spec.loader).exec_module(module)
    graph = getattr(module, fn).get_concrete_function().graph
    return {op.name: [t.op.name for t in op.inputs] for op in graph.get_operations()}


class Samples:
    def __init__(self) -> None:
        self.cache: dict[str, api.Stats] = {}

    def get(self, file: str, fn: str) -> api.Stats:
        key = f"{file}:{fn}"
        if key not in self.cache:
            self.cache[key] = api.stats(str(SAMPLES / file) + f":{fn}", device="CPU:0", notify=lambda _: None)
        return self.cache[key]


@pytest.fixture(scope="session")
def samples() -> Samples:
    return Samples()


def test_fused_additions_is_one_kernel_holding_1000_adds(samples):
    s = samples.get("fused_additions.py", "fused_additions")
    a = s.analysis
    assert a.kernels.count == 1
    [k] = a.kernels.kernels
    assert (k.kind, k.opcode, k.computation) == ("kLoop", "fusion", a.kernels.computations[0].name)
    assert k.histogram == {"add": 1000, "broadcast": 1}  # delta is broadcast once, then 1000 adds
    assert k.bytes_read == 100_000_000 * 4 + 4 and k.bytes_written == 100_000_000 * 4
    assert k.flops == 1000 * 100_000_000
    assert len(k.op_names) == 1000
    assert a.folding.folded == ()
    assert a.mapping.counts == {"kernels": 1000, "folded": 0, "eliminated": 0, "no_op_name": 0, "no_work": 3}
    assert a.mapping.no_work_types == {"Placeholder": 2, "Identity": 1}  # the arguments and the result
    assert a.pre.op_names == 1000 and a.post.op_names == 1000
    assert a.verdict == ("1003 ops → 1 kernel (kLoop fusion: 1000 add, broadcast): 1000 in kernels, "
                         "3 no work (2 Placeholder, Identity)")
    line = next(n for n, t in enumerate((SAMPLES / "fused_additions.py").read_text().splitlines(), 1)
                if "x = x + delta" in t)
    [src] = s.to_dict()["kernels"][0]["source_lines"]
    assert src.endswith(f"fused_additions.py:{line}")


def test_constant_delta_folds_999_adds_into_one_add_of_1000(samples):
    s = samples.get("fused_additions.py", "fused_additions_const")
    a = s.analysis
    [k] = a.kernels.kernels
    assert k.kind == "kLoop" and k.histogram == {"add": 1, "broadcast": 1}
    [f] = a.folding.folded
    post = s.to_dict()
    # the value is the post-optimization literal itself
    [const] = [i for i in s.capture.post_module().instructions() if i.opcode == "constant"]
    assert f.value == const.literal == "1000" and f.shape == "f32[]" and f.by == "xla"
    assert f.computation == k.fused_computation
    assert f.from_ops == ("add",) + tuple(f"add_{n}" for n in range(1, 999))
    assert f.into == ("add_999",)
    assert a.mapping.get("add_500").status == "folded" and a.mapping.get("add_999").kernels == (k.name,)
    assert a.verdict == ("1003 ops → 1 kernel (kLoop fusion: add, broadcast): 1 in kernels, "
                         "999 folded into 1 constant (1000) by XLA, 3 no work (Const, Identity, Placeholder)")
    assert post["folded"][0]["value"] == "1000" and len(post["folded"][0]["from"]) == 999


def test_constant_arithmetic_is_folded_by_tensorflow_into_one_literal(samples):
    s = samples.get("constant_folding.py", "constant_arithmetic")
    a = s.analysis
    # XLA had nothing left to fold: the pre-optimization HLO already holds the literal
    assert a.pre.work == 1 and a.pre.op_names == 0  # one reshape of the results plumbing
    [k] = a.kernels.kernels
    assert k.kind == "copy" and k.bytes_read == k.bytes_written == 12
    info = dict(s.info)
    if "tf_inputs" not in info:
        info["tf_inputs"] = _tf_inputs(SAMPLES / "constant_folding.py", "constant_arithmetic")
    from hloviz.analysis import analyze

    pre, post = s.capture.pre_module(), s.capture.post_module()
    full = analyze(pre, post, info=info)
    [f] = present(full.folding).folded
    assert f.by == "tensorflow" and f.from_ops == ("mul", "Sin", "add")
    assert f.value == "{4.84147072, 10.909297, 18.1411209}"
    assert [float(v) for v in f.value.strip("{}").split(",")] == pytest.approx(
        [1 * 4 + 0.8414709848, 2 * 5 + 0.9092974268, 3 * 6 + 0.1411200081], rel=1e-6)
    assert full.verdict == ("6 ops → 1 kernel (copy): 3 folded into 1 constant "
                            "({4.84147072, 10.909297, 18.1411209}) by TensorFlow, 3 no work (2 Const, Identity)")
    assert {m.op_name: m.status for m in present(full.mapping).ops} == {
        "Const": "no_work", "Const_1": "no_work", "mul": "folded", "Sin": "folded", "add": "folded",
        "Identity": "no_work"}


def test_constant_arithmetic_too_big_for_tensorflow_is_folded_by_xla(samples):
    s = samples.get("constant_folding.py", "constant_arithmetic_xla")
    a = s.analysis
    [k] = a.kernels.kernels
    assert k.histogram == {"broadcast": 1} and k.bytes_written == 2048 * 2048 * 4 and k.flops == 0
    [f] = a.folding.folded
    [const] = [i for i in s.capture.post_module().instructions() if i.opcode == "constant"]
    assert f.by == "xla" and f.constant == const.name and f.value == const.literal == "3.99749494"
    assert float(f.value) == pytest.approx(1.5 * 2 + 0.9974949866, rel=1e-6)
    assert f.from_ops == ("Fill_1", "mul", "Sin", "add") and f.into == ("Fill",)
    assert a.verdict == ("10 ops → 1 kernel (kLoop fusion: broadcast): 1 in kernels, 4 folded into 1 constant "
                         "(3.99749494) by XLA, 5 no work (4 Const, Identity)")


@pytest.mark.parametrize("fn", ["matmul_chain", "matmul_chain_no_jit"])
def test_matmul_chain_fuses_sin_and_relu_but_not_the_matmul(samples, fn):
    s = samples.get("matmul_chain.py", fn)
    a = s.analysis
    assert [(k.kind, k.histogram) for k in a.kernels.kernels] == [
        ("dot", {"dot": 1}),
        ("kLoop", {"add": 1, "broadcast": 1, "maximum": 1, "sine": 1}),
        ("kCustom", {"reduce": 1}),
    ]
    dot, tail, total = a.kernels.kernels
    assert dot.flops == 2 * N * N * N and dot.bytes_read == 2 * N * N * 4 and dot.bytes_written == N * N * 4
    assert tail.flops == 3 * N * N  # sine, add, maximum: one per element each
    assert total.bytes_written == 4
    where = {m.op_name: m.kernels for m in a.mapping.ops if m.status == "kernels"}
    assert where == {"MatMul": (dot.name,), "Sin": (tail.name,), "add": (tail.name,), "Relu": (tail.name,),
                     "Sum": (total.name,)}
    assert a.verdict.startswith("9 ops → 3 kernels (dot; kLoop fusion: add, broadcast, maximum, sine; kCustom "
                                "fusion · YNNPACK: reduce): 5 in kernels, 4 no work (2 Placeholder, Const, Identity)")
    if fn == "matmul_chain":
        assert s.notes == () and s.info["jit_compile"] is True
    else:
        assert s.info["jit_compile"] is False
        [note] = s.notes
        assert "5 ops that do work (MatMul, Sin, AddV2, Relu, Sum)" in note and "without XLA" in note


def test_without_jit_compile_tensorflow_refuses_to_give_compiler_ir():
    """The real TF 2.21 behaviour hloviz works around by compiling with jit_compile=True."""
    import tensorflow as tf

    f = tf.function(lambda x: tf.sin(x) + 1.0)
    with pytest.raises(ValueError, match="jit_compile=True"):
        f.experimental_get_compiler_ir(tf.TensorSpec([4], tf.float32))(stage="hlo")
