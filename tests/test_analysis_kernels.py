"""Kernels of hand-written optimized modules: what counts as a kernel, histograms, bytes, FLOPs."""

from __future__ import annotations

import pytest

import hloviz
from hloviz.analysis import kernels

from . import present

FUSED = """HloModule m, is_scheduled=true

%inner (q0: f32[8]) -> f32[8] {
  %q0 = f32[8]{0} parameter(0)
  %e = f32[8]{0} exponential(%q0), metadata={op_type="Exp" op_name="exp"}
  ROOT %n = f32[8]{0} negate(%e), metadata={op_type="Neg" op_name="neg"}
}

%fused_computation (p0: f32[8], p1: f32[]) -> f32[8] {
  %p0 = f32[8]{0} parameter(0)
  %p1 = f32[] parameter(1)
  %c = f32[] constant(2)
  %b = f32[8]{0} broadcast(%p1), dimensions={}
  %bc = f32[8]{0} broadcast(%c), dimensions={}
  %a1 = f32[8]{0} add(%p0, %b), metadata={op_type="AddV2" op_name="add" source_file="m.py" source_line=3}
  %a2 = f32[8]{0} add(%a1, %bc), metadata={op_type="AddV2" op_name="add_1" source_file="m.py" source_line=4}
  %nested = f32[8]{0} fusion(%a2), kind=kLoop, calls=%inner
  ROOT %m = f32[8]{0} multiply(%nested, %a1), metadata={op_type="Mul" op_name="mul"}
}

ENTRY %main (x: f32[8], d: f32[]) -> f32[8] {
  %x = f32[8]{0} parameter(0)
  %d = f32[] parameter(1)
  ROOT %f = f32[8]{0} fusion(%x, %d), kind=kLoop, calls=%fused_computation, metadata={op_name="mul"}
}
"""


def test_a_fusion_is_one_kernel_with_a_histogram_of_its_work():
    report = kernels(hloviz.parse(FUSED))
    assert report.count == 1
    [k] = report.kernels
    assert (k.name, k.kind, k.opcode, k.computation) == ("f", "kLoop", "fusion", "main")
    assert k.fused_computation == "fused_computation"
    # parameters and the constant do no work; the nested fusion is opened, not counted itself
    assert k.histogram == {"add": 2, "broadcast": 2, "multiply": 1, "exponential": 1, "negate": 1}
    assert k.instructions == 7
    assert k.opcodes[0] == ("add", 2)  # most frequent first
    assert k.bytes_read == 8 * 4 + 4 and k.bytes_written == 8 * 4
    assert k.flops == 8 * 5  # one per element for each of 5 elementwise ops; broadcasts are free
    assert k.op_names == ("mul", "add", "add_1", "exp", "neg")
    assert k.sources == (("m.py", 3), ("m.py", 4))


UNFUSED = """HloModule m, is_scheduled=true

%sum (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

%unused (u: f32[]) -> f32[] {
  %u = f32[] parameter(0)
  ROOT %n = f32[] negate(%u)
}

ENTRY %main (x: f32[64,32], w: f32[32,16]) -> (f32[64,16], f32[]) {
  %x = f32[64,32]{1,0} parameter(0)
  %w = f32[32,16]{1,0} parameter(1)
  %dot = f32[64,16]{1,0} dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, metadata={op_name="MatMul"}
  %bc = f32[16,64]{0,1} bitcast(%dot)
  %zero = f32[] constant(0)
  %r = f32[] reduce(%dot, %zero), dimensions={0,1}, to_apply=%sum, metadata={op_name="Sum"}
  %cp = f32[64,16]{1,0} copy(%dot)
  ROOT %t = (f32[64,16]{1,0}, f32[]) tuple(%cp, %r)
}
"""


def test_unfused_work_ops_are_kernels_and_bookkeeping_is_not():
    report = kernels(hloviz.parse(UNFUSED))
    assert [(k.name, k.kind) for k in report.kernels] == [("dot", "dot"), ("r", "reduce"), ("cp", "copy")]
    dot = present(report.by_name("dot"))
    assert dot.flops == 2 * 64 * 16 * 32
    assert dot.bytes_read == (64 * 32 + 32 * 16) * 4 and dot.bytes_written == 64 * 16 * 4
    assert dot.instructions == 1 and dot.histogram == {"dot": 1} and dot.fused_computation is None
    r = present(report.by_name("r"))
    assert r.flops == 64 * 16 - 1  # 1,024 values summed into one: 1,023 adds
    assert r.bytes_read == 64 * 16 * 4 + 4 and r.bytes_written == 4
    # the reducer and the unreachable computation are not executed on their own
    assert [c.name for c in report.computations] == ["main"]
    assert report.flops == dot.flops + r.flops
    assert len(report.fusions) == 0 and len(report.unfused) == 3


WHILE = """HloModule m, is_scheduled=true

%body (s: (s32[], f32[4])) -> (s32[], f32[4]) {
  %s = (s32[], f32[4]{0}) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %v = f32[4]{0} get-tuple-element(%s), index=1
  %one = s32[] constant(1)
  %i2 = s32[] add(%i, %one), metadata={op_name="while/add"}
  %v2 = f32[4]{0} sine(%v), metadata={op_name="while/Sin"}
  ROOT %t = (s32[], f32[4]{0}) tuple(%i2, %v2)
}

%cond (s: (s32[], f32[4])) -> pred[] {
  %s = (s32[], f32[4]{0}) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %n = s32[] constant(10)
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}

%then (a: f32[4]) -> f32[4] {
  %a = f32[4]{0} parameter(0)
  ROOT %c = f32[4]{0} cosine(%a)
}

%else (a: f32[4]) -> f32[4] {
  %a = f32[4]{0} parameter(0)
  ROOT %c = f32[4]{0} copy(%a)
}

ENTRY %main (x: f32[4], p: pred[]) -> f32[4] {
  %x = f32[4]{0} parameter(0)
  %p = pred[] parameter(1)
  %zero = s32[] constant(0)
  %init = (s32[], f32[4]{0}) tuple(%zero, %x)
  %w = (s32[], f32[4]{0}) while(%init), condition=%cond, body=%body
  %out = f32[4]{0} get-tuple-element(%w), index=1
  ROOT %k = f32[4]{0} conditional(%p, %out, %out), true_computation=%then, false_computation=%else
}
"""


def test_control_flow_bodies_are_reported_per_body():
    report = kernels(hloviz.parse(WHILE))
    roles = {c.name: (c.caller, c.role) for c in report.computations}
    assert roles == {"main": (None, "entry"), "cond": ("w", "while condition"), "body": ("w", "while body"),
                     "then": ("k", "true branch"), "else": ("k", "false branch")}
    assert [(k.computation, k.name) for k in report.kernels] == [
        ("cond", "lt"), ("body", "i2"), ("body", "v2"), ("then", "c"), ("else", "c")]
    assert [k.name for k in report.in_computation("body")] == ["i2", "v2"]
    assert not report.in_computation("main")  # while, conditional, tuple, gte: no kernels


CONV = """HloModule m, is_scheduled=true

ENTRY %main (x: f32[1,8,8,3], k: f32[3,3,3,16]) -> f32[1,8,8,16] {
  %x = f32[1,8,8,3]{3,2,1,0} parameter(0)
  %k = f32[3,3,3,16]{3,2,1,0} parameter(1)
  ROOT %conv = f32[1,8,8,16]{3,2,1,0} convolution(%x, %k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
}
"""


def test_convolution_flops_count_the_input_and_kernel_elements_that_meet():
    """Padded by one, each spatial dimension's 8 outputs meet 3 kernel positions but the first
    and the last output lose one (it falls on the padding): 8·3 − 2 pairs a dimension, as XLA's
    cost analysis counts (``tests/test_flops_against_xla.py`` checks that against XLA)."""
    [k] = kernels(hloviz.parse(CONV)).kernels
    assert k.flops == 2 * 16 * 3 * (8 * 3 - 2) ** 2


GEMM = """HloModule m, is_scheduled=true

ENTRY %main (a: f32[128,64], b: f32[64,32]) -> (f32[128,32], s8[1024]) {
  %a = f32[128,64]{1,0} parameter(0)
  %b = f32[64,32]{1,0} parameter(1)
  ROOT %g = (f32[128,32]{1,0}, s8[1024]{0}) custom-call(%a, %b), custom_call_target="__cublas$gemm", backend_config={"gemm_backend_config":{"alpha_real":1,"dot_dimension_numbers":{"lhs_contracting_dimensions":["1"],"rhs_contracting_dimensions":["0"],"lhs_batch_dimensions":[],"rhs_batch_dimensions":[]}}}
}
"""


def test_gemm_custom_calls_get_dot_flops_from_their_backend_config():
    [k] = kernels(hloviz.parse(GEMM)).kernels
    assert (k.kind, k.target) == ("custom-call", "__cublas$gemm")
    assert k.flops == 2 * 128 * 32 * 64
    assert k.bytes_written == 128 * 32 * 4 + 1024


def test_a_module_of_bookkeeping_only_has_no_kernels():
    m = hloviz.parse("HloModule m\n\nENTRY %e (p: f32[2]) -> (f32[2]) {\n  %p = f32[2]{0} parameter(0)\n"
                     "  ROOT %t = (f32[2]{0}) tuple(%p)\n}\n")
    report = kernels(m)
    assert report.count == 0 and report.flops == 0


@pytest.mark.parametrize("opcode,flops", [("add", 6), ("broadcast", 0), ("transpose", 0)])
def test_unfused_elementwise_and_data_movement_flops(opcode, flops):
    body = {"add": "add(%p, %p)", "broadcast": "broadcast(%p), dimensions={0,1}",
            "transpose": "transpose(%p), dimensions={1,0}"}[opcode]
    text = (f"HloModule m\n\nENTRY %e (p: f32[2,3]) -> f32[2,3] {{\n  %p = f32[2,3]{{1,0}} parameter(0)\n"
            f"  ROOT %r = f32[2,3]{{1,0}} {body}\n}}\n")
    if opcode == "transpose":
        text = text.replace("ROOT %r = f32[2,3]", "ROOT %r = f32[3,2]").replace("-> f32[2,3]", "-> f32[3,2]")
    [k] = kernels(hloviz.parse(text)).kernels
    assert k.flops == flops and k.kind == opcode
