"""GPU modules from the peer corpus (tests/corpus, written by XLA's developers): how the backend
runs each kernel (Triton GEMM, cuDNN, cuBLAS), and kernels counted as XLA runs them — async
collectives and async fusions once each, command buffers' kernels inside them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import hloviz
from hloviz.analysis.backends import backend_name
from hloviz.cli import main
from hloviz.render import draw_module, to_dot

MODULES = Path(__file__).resolve().parent / "corpus" / "modules"


def _kernels(name: str) -> hloviz.KernelReport:
    return hloviz.kernels(hloviz.parse_file(MODULES / name))


def test_triton_gemm_fusions_carry_their_backend_kind():
    report = _kernels("tools__multihost_hlo_runner__data__multiple_gemm_fusions.hlo")
    gemms = [k for k in report.kernels if k.kind == "kCustom"]
    assert len(gemms) == 3 and {k.backend_kind for k in gemms} == {"__triton_gemm"}
    assert {k.backend for k in gemms} == {"Triton GEMM"}
    assert all(k.histogram.get("dot") == 1 for k in gemms)
    loops = [k for k in report.kernels if k.kind == "kLoop"]
    assert loops and all(k.backend_kind is None for k in loops)


@pytest.mark.parametrize("name, kind", [
    ("tests_cc__cudnn_test.L141.hlo", "__cudnn$fusion"),  # a JSON backend_config
    ("service__gpu__kernel_reuse.1.hlo", "__triton_gemm"),  # a quoted one: "{\"fusion_backend_config\"...
    ("service__gpu__triton_naming.hlo", "__triton_gemm"),  # the relaxed form: {fusion_backend_config:{kind:...
])
def test_every_spelling_of_backend_config_gives_the_kind(name, kind):
    fusions = [k for k in _kernels(name).kernels if k.is_fusion and k.kind == "kCustom"]
    assert fusions and {k.backend_kind for k in fusions} == {kind}


def test_cublas_custom_calls_are_named_by_their_library():
    report = _kernels("service__gpu__kernel_reuse.0.hlo")
    calls = [k for k in report.kernels if k.opcode == "custom-call"]
    assert len(calls) == 4 and {(k.backend_kind, k.backend) for k in calls} == {("__cublas$gemm", "cuBLAS GEMM")}
    assert all(k.flops == 2 * 5 * 5 * 5 for k in calls)  # the GEMM's dims from its backend_config


def test_backend_names():
    assert backend_name("__cudnn$fmhaSoftmaxBackward") == "cuDNN fused attention"
    assert backend_name("__triton") == "Triton" and backend_name("__new_kind") == "__new_kind"
    assert backend_name(None) is None


def test_async_collectives_are_one_kernel_each_at_their_start():
    report = _kernels("tests_cc__gpu_latency_hiding_scheduler_test.L233.hlo")
    assert [(k.name, k.opcode) for k in report.kernels] == [
        ("ar_0", "all-reduce-start"), ("rs_0", "reduce-scatter-start"), ("ag_0", "all-gather-start")]
    rs = report.by_name("rs_0")
    assert rs.shape == "f32[1]" and rs.bytes_written == 4  # the reduce-scatter's result, not the tuple


def test_async_fusions_inside_a_command_buffer():
    report = _kernels("tests_cc__async_command_buffer_test.L47.hlo")
    assert [(k.name, k.kind, k.fused_computation) for k in report.kernels] == [
        ("start1", "kLoop", "double1"), ("start2", "kLoop", "double2"), ("start3", "kLoop", "sum")]
    assert all(k.is_fusion and k.histogram == {"add": 1} and k.computation == "command_buffer"
               for k in report.kernels)
    assert [(c.name, c.role) for c in report.computations] == [("main", "entry"),
                                                                ("command_buffer", "command buffer")]


def test_the_kernel_table_and_json_show_the_backend(capsys):
    path = MODULES / "service__gpu__kernel_reuse.1.hlo"
    assert main(["stats", str(path)]) in (0, None)
    out = capsys.readouterr().out
    assert "kCustom fusion · Triton GEMM" in out  # as the verdict and diff write it
    assert main(["stats", str(path), "--json"]) in (0, None)
    kernels = json.loads(capsys.readouterr().out)["kernels"]
    assert {k["backend_kind"] for k in kernels} == {"__triton_gemm"}


def test_the_fusion_cluster_is_labelled_with_the_backend():
    m = hloviz.parse_file(MODULES / "tests_cc__cudnn_test.L141.hlo")
    dot = to_dot(draw_module(m).scene)
    assert "fusion kCustom · cuDNN" in dot


@pytest.mark.parametrize("nesting", ["[" * 100_000 + "]" * 100_000,
                                     "{\\\"a\\\":" * 900 + "{\\\"dot_dimension_numbers\\\":{\\\"lhs_contracting_dimensions\\\":[\\\"1\\\"]}}" + "}" * 900])
def test_a_gemm_config_nested_past_the_json_reader_counts_no_flops_and_breaks_nothing(nesting):
    """A fuzz finding: a GEMM's backend_config of 100k nested arrays raised RecursionError in the
    kernel report. A config that deep is not the backend's: no FLOPs from it; one nested 900
    deep but readable still gives its dims (the key is found without recursion)."""
    text = (MODULES / "service__gpu__kernel_reuse.0.hlo").read_text()
    line = next(ln for ln in text.splitlines() if 'custom-call(a, a)' in ln)
    hostile = line[: line.index('backend_config="') + len('backend_config="')] + nesting + '"'
    report = hloviz.kernels(hloviz.parse(text.replace(line, hostile)))
    calls = [k for k in report.kernels if k.opcode == "custom-call"]
    assert len(calls) == 4
    changed = next(k for k in calls if k.name == "custom-call")
    assert changed.flops == (0 if nesting.startswith("[") else 2 * 5 * 5 * 5)
