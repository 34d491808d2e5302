"""Real models in the terminal (issue 19, item 10): each kernel's layer beside its source line,
``stats --sort flops|bytes|instructions --top N``, and one name for a backend's custom fusions
(YNNPACK) in stats, the verdict and diff.

Oracles: the HLO text read with regular expressions (op names, backend configs), and the
unsorted ``--json`` kernel list sorted here.
"""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest

from . import run_cli
from .layer_names import shown as _shown

CAPTURES = Path(__file__).resolve().parent.parent / "samples" / "captures"
TRANSFORMER = CAPTURES / "keras_transformer"
MATMUL = CAPTURES / "matmul_chain-tf2.21"


def _text(folder: Path, stage: str = "post") -> str:
    plain = folder / f"{stage}.hlo"
    if plain.is_file():
        return plain.read_text()
    return gzip.decompress((folder / f"{stage}.hlo.gz").read_bytes()).decode()


def _json(capsys, *args: str) -> dict:
    code, out, err = run_cli(["stats", *args, "--json"], capsys)
    assert code == 0, err
    return json.loads(out)


@pytest.mark.parametrize("sort,key", [
    ("flops", lambda k: k["flops"]),
    ("bytes", lambda k: k["bytes_read"] + k["bytes_written"]),
    ("instructions", lambda k: k["instructions"]),
])
def test_sort_and_top_list_the_biggest_kernels(capsys, sort, key):
    every = _json(capsys, str(TRANSFORMER))["kernels"]
    expected = sorted(every, key=lambda k: -key(k))[:7]  # Python's sort is stable: ties in execution order
    data = _json(capsys, str(TRANSFORMER), "--sort", sort, "--top", "7")
    assert [k["name"] for k in data["kernels"]] == [k["name"] for k in expected]
    assert data["kernel_count"] == len(every) == 380 and data["kernels_listed"] == {"sort": sort, "top": 7}


def test_the_table_lists_top_n_rows_and_says_how_many_are_left(capsys):
    every = _json(capsys, str(TRANSFORMER))["kernels"]
    biggest = sorted(every, key=lambda k: -k["flops"])[:5]
    code, out, _ = run_cli(["stats", str(TRANSFORMER), "--sort", "flops", "--top", "5"], capsys)
    assert code == 0
    assert "kernels (380), the 5 with the most flops" in out
    rows = re.findall(r"^│ (\S+) +│", out, re.MULTILINE)
    kernel_rows = [r for r in rows if r in {k["name"] for k in every}]
    assert kernel_rows == [k["name"] for k in biggest]
    assert "… 375 more kernels" in out


def test_top_without_sort_keeps_execution_order(capsys):
    every = _json(capsys, str(TRANSFORMER))["kernels"]
    data = _json(capsys, str(TRANSFORMER), "--top", "3")
    assert [k["name"] for k in data["kernels"]] == [k["name"] for k in every[:3]]


@pytest.mark.parametrize("args,message", [
    (["--sort", "speed"], "--sort 'speed': expected one of flops, bytes, instructions"),
    (["--top", "0"], "--top 0: expected 1 or more kernels"),
    (["--top", "3", "--all"], "give --top N or --all, not both"),
    (["--sort", "flops", "--by", "scope"], "--sort orders the kernel table; --by scope lists scopes"),
])
def test_bad_sort_and_top_values_are_input_errors(capsys, args, message):
    code, out, err = run_cli(["stats", str(TRANSFORMER), *args], capsys)
    assert code == 2 and message in err and not out


def _op_names(text: str) -> dict[str, str]:
    """Instruction name → its metadata op_name, from the HLO text."""
    return {m.group(1): m.group(2) for m in
            re.finditer(r'^\s*(?:ROOT )?%?([\w.\-]+) = .*?op_name="([^"]*)"', text, re.MULTILINE)}


def test_each_kernel_has_its_layer_where_the_source_line_is_the_model_call(capsys):
    data = _json(capsys, str(TRANSFORMER))
    names = _op_names(_text(TRANSFORMER))
    layers = json.loads((TRANSFORMER / "capture.json").read_text())["layer_scopes"]
    # the dots (unfused, one op each): the layer is the op's name without its last segment
    dots = [k for k in data["kernels"] if k["opcode"] == "dot" and len(k["op_names"]) == 1]
    assert len(dots) >= 20
    # a gradient belongs to the forward scope it differentiates: the longest prefix of its path
    # that forward ops are named under (gradient_tape/…/Tensordot/MatMul/MatMul_1 → …/Tensordot)
    forward: set[str] = set()
    for n in names.values():
        if not n.startswith("gradient_tape/"):
            parts = n.split("/")[:-1]
            forward.update("/".join(parts[:i]) for i in range(1, len(parts) + 1))
    for k in dots:
        op_name = names[k["name"]]
        path = op_name.removeprefix("gradient_tape/").rsplit("/", 1)[0]
        while op_name.startswith("gradient_tape/") and path not in forward and "/" in path:
            path = path.rsplit("/", 1)[0]
        assert k["layer"].split(" (")[0] == _shown(path, layers, names.values()), (k["name"], op_name)
        assert k["layer"].endswith(" (backward)") == op_name.startswith("gradient_tape/")
    # one source line, many layers: what the issue saw ("every kernel the same source line")
    by_line: dict[str, set[str]] = {}
    for k in dots:
        for line in k["source_lines"]:
            by_line.setdefault(line, set()).add(k["layer"])
    assert max(len(layers) for layers in by_line.values()) >= 5


def test_the_table_and_show_name_the_layer(capsys, tmp_path):
    code, out, _ = run_cli(["stats", str(TRANSFORMER), "--sort", "flops", "--top", "1"], capsys)
    assert code == 0 and "┃ layer" in out
    top = max(_json(capsys, str(TRANSFORMER))["kernels"], key=lambda k: k["flops"])
    tail = "/".join(top["layer"].split(" (")[0].split("/")[-3:])
    assert tail[:12] in out.replace("\n", "")
    from hloviz import api
    from hloviz.render.page.report import summary_lines

    result = api.stats(str(TRANSFORMER))
    lines = summary_lines(result.analysis, result.source, limit=400)
    kernel_lines = [ln for ln in lines if ln.startswith("  #")]
    assert len(kernel_lines) == 380
    with_layer = [ln for ln in kernel_lines if " in transformer_1/" in ln]
    assert len(with_layer) > 100 and len({ln.split(" in ")[1].split("  ←")[0] for ln in with_layer}) > 20


def test_a_ynnpack_fusion_is_named_alike_in_stats_the_verdict_and_diff(capsys):
    # the HLO says how XLA's CPU backend runs the fusion: fusion_config kind __ynn_fusion
    post = _text(MATMUL)
    m = re.search(r"^\s*(?:ROOT )?%?(\S+) = \S+ fusion\(.*kind=kCustom.*__ynn_fusion", post, re.MULTILINE)
    assert m is not None
    name = m.group(1)
    code, stats_out, _ = run_cli(["stats", str(MATMUL)], capsys)
    assert code == 0
    row = next(ln for ln in stats_out.splitlines() if ln.startswith(f"│ {name} "))
    assert "kCustom fusion · YNNPACK" in row
    assert "kCustom fusion · YNNPACK: reduce" in " ".join(stats_out.split())  # the verdict
    code, diff_out, _ = run_cli(["diff", str(CAPTURES / "matmul_chain-tf2.17"), str(MATMUL)], capsys)
    assert code == 0
    assert f"+ {name}  kCustom fusion · YNNPACK: reduce" in diff_out
    assert "kCustom fusion: reduce" not in diff_out + stats_out


def test_top_cuts_the_kernel_table_only(capsys):
    # keras_small_train_step: 19 folded constants in its HLO's table, all listed whatever --top says
    every = _json(capsys, str(CAPTURES / "keras_small_train_step"))
    code, out, _ = run_cli(["stats", str(CAPTURES / "keras_small_train_step"), "--top", "2"], capsys)
    assert code == 0 and f"folded constants ({len(every['folded'])})" in out
    for f in every["folded"]:
        assert re.search(rf"^│ {re.escape(f['constant'])} +│", out, re.MULTILINE), f["constant"]
    assert f"… {len(every['kernels']) - 2} more kernels" in out


_BITCASTS_ONLY = """HloModule reshaped_kernel

%fused_computation (param_0: f32[16,1]) -> f32[16,1] {
  %param_0 = f32[16,1]{1,0} parameter(0)
  %bitcast.1 = f32[16]{0} bitcast(%param_0)
  ROOT %bitcast.2 = f32[16,1]{1,0} bitcast(%bitcast.1)
}

ENTRY %main (kernel: f32[16,1], x: f32[16,1]) -> f32[16,1] {
  %kernel = f32[16,1]{1,0} parameter(0)
  %x = f32[16,1]{1,0} parameter(1)
  %bitcast_fusion = f32[16,1]{1,0} fusion(%kernel), kind=kLoop, calls=%fused_computation
  ROOT %add = f32[16,1]{1,0} add(%bitcast_fusion, %x)
}
"""


def test_a_fusion_of_bitcasts_is_said_to_move_data(tmp_path, capsys):
    # a Flax Dense(1)'s [16] kernel as [16,1] (round 39's Fourier operator): a kLoop fusion whose
    # body holds bitcasts alone still writes its buffer; "kLoop fusion (0 instructions)" said nothing
    path = tmp_path / "after.hlo"
    path.write_text(_BITCASTS_ONLY)
    body = _BITCASTS_ONLY.split("%fused_computation", 1)[1].split("\n}\n", 1)[0]
    assert set(re.findall(r"\b([a-z\-]+)\(", body)) == {"parameter", "bitcast"}  # the oracle: nothing computed
    code, out, err = run_cli(["show", str(path), "-o", str(tmp_path / "out")], capsys)
    assert code == 0, err
    line = next(ln for ln in out.splitlines() if " bitcast_fusion: " in ln)
    assert "kLoop fusion: moves data, computes nothing (0 instructions)" in line, line
    code, out, err = run_cli(["render", str(path), "--budget", "300", "-o", str(tmp_path / "p.svg")], capsys)
    assert code == 0, err
    assert "no instruction doing work: moves data" in (tmp_path / "p.svg").read_text()
