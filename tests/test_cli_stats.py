"""``hloviz stats``: tables, ``--json`` and errors, on HLO files (and one live TF capture)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hloviz.cli import main

from .test_analysis_folding import _chain_post, _chain_pre
from .test_analysis_mapping import POST, PRE

SAMPLES = Path(__file__).resolve().parent.parent / "samples"


@pytest.fixture
def chain(tmp_path: Path) -> tuple[Path, Path]:
    pre, post = tmp_path / "chain.pre.hlo", tmp_path / "chain.post.hlo"
    pre.write_text(_chain_pre(10))
    post.write_text(_chain_post(10, "10"))
    return pre, post


def _json(capsys, *argv: str) -> dict:
    main(["stats", *argv, "--json"])
    return json.loads(capsys.readouterr().out)


def test_tables_show_counts_kernels_folds_and_the_verdict(chain, capsys):
    pre, post = chain
    main(["stats", "--pre", str(pre), "--post", str(post)])
    out = capsys.readouterr().out
    assert "instructions" in out and " 32 " in out  # pre-opt instruction count
    assert "kernels (1)" in out and "kLoop" in out and "2: add, broadcast" in out
    assert "folded constants (1)" in out and "add, add_1, …, add_8 (9 ops)" in out
    assert out.rstrip().endswith("10 ops → 1 kernel (kLoop fusion: add, broadcast): 1 in kernels, "
                                 "9 folded into 1 constant (10) by XLA")
    assert "ops of the function (10)" in out  # the status table adds up to the verdict's count


def test_json_carries_the_contract_fields(chain, capsys):
    pre, post = chain
    data = _json(capsys, "--pre", str(pre), "--post", str(post))
    assert (data["pre"], data["post"]) == (32, 6)
    assert data["kernel_count"] == 1
    [k] = data["kernels"]
    assert (k["name"], k["kind"], k["opcodes"]) == ("f", "kLoop", {"add": 1, "broadcast": 1})
    assert k["bytes_read"] == 16 and k["bytes_written"] == 16 and k["flops"] == 4
    [f] = data["folded"]
    assert (f["constant"], f["value"], f["into"]) == ("c", "10", ["add_9"])
    assert f["from"] == ["add"] + [f"add_{n}" for n in range(1, 9)]
    assert data["mapping_counts"] == {"kernels": 1, "folded": 9, "eliminated": 0, "no_op_name": 0, "no_work": 0}
    assert data["verdict"].startswith("10 ops → 1 kernel")
    s = data["summary"]
    assert (s["ops"], s["statuses"], s["kernels"], s["folded_constants"]) == (10, data["mapping_counts"], 1, 1)
    assert (k["instructions"], k["ops"]) == (2, 1)


def test_a_single_optimized_file_reports_its_kernels(tmp_path, capsys):
    path = tmp_path / "model.post.hlo"
    path.write_text(POST)
    data = _json(capsys, str(path))
    assert data["pre"] is None and data["post"] == 9
    assert [(k["name"], k["kind"]) for k in data["kernels"]] == [("d", "dot"), ("f", "kLoop")]
    assert data["kernels"][0]["flops"] == 2 * 8 * 4 * 4
    assert data["folded"] == [] and "mapping" not in data
    assert "optimized module only" in data["verdict"]


def test_a_single_pre_optimization_file_reports_counts(tmp_path, capsys):
    path = tmp_path / "model.pre.hlo"
    path.write_text(PRE)
    main(["stats", str(path)])
    out = capsys.readouterr().out
    assert "5 instructions doing work before optimization" in out
    data = _json(capsys, str(path))
    assert data["pre"] == 8 and data["post"] is None and data["kernel_count"] is None


@pytest.mark.parametrize("argv,message", [
    (["stats", "no/such/file.hlo"], "no/such/file.hlo"),
    (["stats"], "no target given"),
])
def test_bad_input_exits_2_with_a_message(argv, message, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_unparsable_hlo_exits_2_with_line_and_column(tmp_path, capsys):
    bad = tmp_path / "bad.hlo"
    bad.write_text("HloModule m, is_scheduled=true\n\nENTRY %e () -> f32[] {\n  ROOT %c = f32[] constant(\n}\n")
    with pytest.raises(SystemExit) as exc:
        main(["stats", str(bad)])
    assert exc.value.code == 2
    assert f"{bad}:5:1: error: unexpected" in capsys.readouterr().err


@pytest.mark.requires_tf
def test_stats_of_a_live_tf_function(capsys):
    data = _json(capsys, f"{SAMPLES / 'constant_folding.py'}:constant_arithmetic", "--device", "CPU:0")
    assert data["framework"] == "tensorflow" and data["kernel_count"] == 1
    assert data["kernels"][0]["kind"] == "copy"
    assert data["pre"] == 4 and data["post"] == 2


@pytest.mark.requires_jax
def test_stats_of_a_jax_function_maps_every_op_to_a_kernel(capsys):
    data = _json(capsys, f"{SAMPLES / 'jax_mlp.py'}:mlp")
    assert data["framework"] == "jax"
    assert sum(k["opcodes"].get("dot", 0) for k in data["kernels"]) == 2
    assert sum(k["flops"] for k in data["kernels"] if "dot" in k["opcodes"]) == 2 * (8 * 32 * 16 + 8 * 4 * 32)
    assert {v["status"] for v in data["mapping"].values()} == {"kernels"}
    assert all(k["source_lines"] for k in data["kernels"])  # JAX's stack frames give the user's lines


def test_source_lines_come_from_xlas_stack_frame_tables(tmp_path, capsys):
    model = tmp_path / "model.py"
    model.write_text("import jax\n\ndef f(x):\n    return jax.numpy.sin(x)\n")
    post = tmp_path / "f.post.hlo"
    post.write_text(f"""HloModule jit_f, is_scheduled=true

FileNames
1 "{model}"
FunctionNames
1 "f"
FileLocations
1 {{file_name_id=1 function_name_id=1 line=4 end_line=4 column=11 end_column=30}}
StackFrames
1 {{file_location_id=1 parent_frame_id=1}}

ENTRY %main (x: f32[4]) -> f32[4] {{
  %x = f32[4]{{0}} parameter(0)
  ROOT %s = f32[4]{{0}} sine(%x), metadata={{op_name="jit(f)/sin" stack_frame_id=1}}
}}
""")
    data = _json(capsys, str(post))
    assert data["kernels"][0]["source_lines"] == [f"{model}:4" if not str(model).startswith(str(Path.cwd()))
                                                  else f"{model.relative_to(Path.cwd())}:4"]


def test_top_opcodes_and_fusions_by_kind_of_a_capture(capsys):
    capture = Path(__file__).resolve().parent.parent / "samples" / "captures" / "matmul_chain-tf2.21"
    main(["stats", str(capture)])
    out = capsys.readouterr().out
    assert "top opcodes" in out
    row = next(line for line in out.splitlines() if "│ fusion " in line)
    assert [c.strip() for c in row.split("│")[1:4]] == ["fusion", "0", "2"]
    assert "fusions by kind (optimized): kCustom 1, kLoop 1" in out
    main(["stats", str(capture), "--json"])
    data = json.loads(capsys.readouterr().out)
    assert data["opcodes"]["post"]["fusion"] == 2 and data["opcodes"]["pre"]["dot"] == 1
    assert data["fusions_by_kind"] == {"pre": {}, "post": {"kCustom": 1, "kLoop": 1}}
