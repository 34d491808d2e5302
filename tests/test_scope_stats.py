"""``hloviz stats --by scope``: per-layer numbers, checked against the HLO text itself.

The expectations for MobileNetV2 and ResNet50 are computed here straight from ``post.hlo``
with regular expressions (which kernel holds which op names), not through hloviz's parser or
analyses, so a mistake in either shows up as a mismatch.
"""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hloviz.cli import app, main

from . import present

CAPTURES = Path(__file__).resolve().parent.parent / "samples" / "captures"

_COMPUTATION = re.compile(r"^(ENTRY )?%?([\w.\-]+) \(.*\{\s*$")
_INSTRUCTION = re.compile(r"^\s*(?:ROOT )?%?([\w.\-]+) = \S+ ([\w\-]+)\(([^)]*)\)")
_OPERAND = re.compile(r"%([\w.\-]+)")
_PARAMETER = re.compile(r"parameter\((\d+)\)")
_OP_NAME = re.compile(r'op_name="([^"]*)"')
_CALLS = re.compile(r"(?:calls|to_apply)=%?([\w.\-]+)")
_NOT_KERNELS = {"parameter", "constant", "tuple", "get-tuple-element", "bitcast", "after-all",
                "add-dependency", "opt-barrier", "partition-id", "replica-id", "domain",
                "get-dimension-size", "set-dimension-size", "while", "conditional", "call"}


def _read_hlo(text: str):
    """{computation: [(name, opcode, op_name, [called computations], [operands], parameter number)]}
    and the entry's name."""
    comps: dict[str, list] = {}
    entry = current = None
    for line in text.splitlines():
        m = _COMPUTATION.match(line)
        if m:
            current = comps.setdefault(m.group(2), [])
            if m.group(1):
                entry = m.group(2)
            continue
        m = _INSTRUCTION.match(line)
        if m and current is not None:
            op = _OP_NAME.search(line)
            number = _PARAMETER.search(line) if m.group(2) == "parameter" else None
            current.append((m.group(1), m.group(2), op.group(1) if op else "", _CALLS.findall(line),
                            _OPERAND.findall(m.group(3)), int(number.group(1)) if number else -1))
    return comps, present(entry, "an ENTRY computation")


def _literals(rows, fed: set[int]) -> set[str]:
    """The instructions of one computation made of literals alone: constants, iotas, parameters
    numbered in ``fed`` (the caller passes them a literal), and whatever takes only those."""
    out: set[str] = set()
    for name, opcode, _op, _called, operands, number in rows:
        if opcode == "parameter":
            if number in fed:
                out.add(name)
        elif opcode in ("constant", "iota") or (operands and all(o in out for o in operands)):
            out.add(name)
    return out


def _expected_layer_kernels(post_text: str, depth: int) -> tuple[set[str], dict[str, set[str]]]:
    """All kernels, and scope path (``depth`` segments) → the kernels holding an op named under
    it; literals (a constant, a broadcast of one: XLA shares them between layers) name no layer."""
    assert "while(" not in post_text and "conditional(" not in post_text  # one flat entry
    comps, entry = _read_hlo(post_text)

    def op_names(comp: str, fed: set[int], seen: set[str]) -> set[str]:
        out: set[str] = set()
        if comp in seen:
            return out
        seen.add(comp)
        lits = _literals(comps[comp], fed)
        for name, opcode, op, called, operands, _n in comps[comp]:
            if op and name not in lits and opcode not in ("parameter", "tuple", "get-tuple-element", "bitcast") \
                    and op not in ("XLA_Args", "XLA_Retvals"):
                out.add(op)
            inner = {k for k, o in enumerate(operands) if o in lits}
            for c in called:
                out |= op_names(c, inner, seen)
        return out

    kernels: set[str] = set()
    by_scope: dict[str, set[str]] = {}
    entry_literals = _literals(comps[entry], set())
    for name, opcode, op, called, operands, _n in comps[entry]:
        if opcode in _NOT_KERNELS:
            continue
        kernels.add(name)
        names = {op} if op and op not in ("XLA_Args", "XLA_Retvals") and opcode != "fusion" else set()
        for c in called:
            names |= op_names(c, {k for k, o in enumerate(operands) if o in entry_literals}, set())
        for n in names:
            parts = n.split("/")[:-1]  # the scope: everything before the op's own name
            if len(parts) >= depth:
                by_scope.setdefault("/".join(parts[:depth]), set()).add(name)
    return kernels, by_scope


def _stats_json(*args: str) -> dict:
    result = CliRunner().invoke(app, ["stats", *args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.mark.parametrize("name", ["mobilenet_v2", "resnet50"])
def test_kernels_are_attributed_to_layers_as_the_op_names_say(name):
    folder = CAPTURES / name
    post_text = gzip.decompress((folder / "post.hlo.gz").read_bytes()).decode()
    kernels, expected = _expected_layer_kernels(post_text, depth=2)
    data = _stats_json(str(folder), "--by", "scope")
    assert {k["name"] for k in data["kernels"]} == kernels
    got = {r["scope"]: set(r["kernels"]) for r in data["scopes"] if r["depth"] == 2 and r["kind"] == "scope"}
    layers_with_kernels = {p: ks for p, ks in got.items() if ks}
    assert layers_with_kernels == expected
    # and each kernel names the scopes it holds ops of, as the op names say
    for k in data["kernels"]:
        spans = {"/".join(path.split("/")[:2]) for path in k["scopes"] if path.count("/") >= 1}
        assert spans == {p for p, ks in expected.items() if k["name"] in ks}, k["name"]
    assert len(expected) > 100  # every layer of the model, not a handful


@pytest.mark.parametrize("name", ["mobilenet_v2", "resnet50", "keras_transformer"])
def test_top_level_scopes_add_up_to_the_module(name):
    data = _stats_json(str(CAPTURES / name), "--by", "scope")
    rows = data["scopes"]
    root = [r for r in rows if r["depth"] == 0]
    top = [r for r in rows if r["depth"] == 1]
    assert len(root) == 1 and top
    ops = sum(data["mapping_counts"].values())
    assert root[0]["ops"] == ops == sum(r["ops"] for r in top)
    for key in ("folded", "eliminated"):
        assert sum(r[key] for r in top) == data["mapping_counts"][key]
    for status, n in data["mapping_counts"].items():
        assert root[0]["statuses"][status] == n == sum(r["statuses"][status] for r in top)
    assert sum(r["flops"] for r in top) == data["flops"] == root[0]["flops"]
    assert sum(r["bytes"] for r in top) == data["bytes_read"] + data["bytes_written"]
    assert set().union(*(r["kernels"] for r in top)) == {k["name"] for k in data["kernels"]}
    # and every scope's numbers cover its children's
    by_path = {r["scope"]: r for r in rows}
    for r in rows:
        if r["depth"] >= 2:
            parent = by_path[r["scope"].rsplit("/", 1)[0]]
            assert set(r["kernels"]) <= set(parent["kernels"])
            assert r["ops"] <= parent["ops"] and r["flops"] <= parent["flops"]


def test_depth_limits_the_rows():
    data = _stats_json(str(CAPTURES / "mobilenet_v2"), "--by", "scope", "--depth", "1")
    assert {r["depth"] for r in data["scopes"]} == {0, 1}
    [model] = [r for r in data["scopes"] if r["kind"] == "scope"]
    assert model["scope"] == "mobilenetv2_1.00_224_1" and model["label"] == "mobilenetv2_1.00_224"


def test_transformer_step_reads_as_forward_backward_optimizer_per_layer():
    data = _stats_json(str(CAPTURES / "keras_transformer"), "--by", "scope", "--depth", "2")
    rows = {r["label"]: r for r in data["scopes"]}
    adam = rows["adam"]
    assert adam["phase"] == "optimizer" and len(adam["kernels"]) > 50
    updating: set[str] = set()
    for layer in ("block_0", "block_1", "final_norm", "logits", "token_embedding"):
        r = rows[layer]
        assert r["phase"] == "forward+backward+optimizer", r
        phases = r["phases"]
        assert phases["forward"]["kernels"] and phases["backward"]["kernels"]
        assert phases["forward"]["ops"] and phases["backward"]["ops"]
        # the optimizer's kernels that update this layer's variables: Adam's, named adam/…
        update = phases["optimizer"]
        assert update["updates_variables"] and update["ops"] and update["kernels"]
        assert set(update["kernels"]) <= set(adam["kernels"])
        assert not set(update["kernels"]) & updating  # each update kernel updates one layer here
        updating |= set(update["kernels"])
    # the two blocks have the same variables, so the same number of update ops and kernels
    assert rows["block_0"]["phases"]["optimizer"]["ops"] == rows["block_1"]["phases"]["optimizer"]["ops"]
    assert (len(rows["block_0"]["phases"]["optimizer"]["kernels"])
            == len(rows["block_1"]["phases"]["optimizer"]["kernels"]))
    # the backward pass of a block is as big as its forward pass or bigger (a matmul's gradient is two)
    block = rows["block_1"]["phases"]
    assert block["backward"]["ops"] >= block["forward"]["ops"]


def test_table_lists_layers_by_their_keras_names():
    result = CliRunner().invoke(app, ["stats", str(CAPTURES / "mobilenet_v2"), "--by", "scope"])
    assert result.exit_code == 0, result.output
    assert "block_5_expand " in result.stdout and "block_5_expand_1 " not in result.stdout
    assert "by scope" in result.stdout


@pytest.mark.parametrize("args, message", [
    (["--by", "layer"], "--by 'layer'"),
    (["--depth", "2"], "--depth applies to --by scope"),
])
def test_bad_grouping_options(args, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["stats", str(CAPTURES / "mobilenet_v2"), *args])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_an_optimized_module_alone(tmp_path):
    post = tmp_path / "resnet50.post.hlo"
    post.write_bytes(gzip.decompress((CAPTURES / "resnet50" / "post.hlo.gz").read_bytes()))
    data = _stats_json(str(post), "--by", "scope", "--depth", "1")
    rows = data["scopes"]
    assert all(r["ops"] is None and r["folded"] is None for r in rows)  # no pre-optimization module
    top = [r for r in rows if r["depth"] == 1]
    assert sum(r["flops"] for r in top) == data["flops"]
    assert set().union(*(r["kernels"] for r in top)) == {k["name"] for k in data["kernels"]}


def test_a_module_without_op_names(tmp_path):
    post = tmp_path / "m.hlo"
    post.write_text("""HloModule m, is_scheduled=true

%fused (p: f32[8]) -> f32[8] {
  %p = f32[8]{0} parameter(0)
  ROOT %n = f32[8]{0} negate(%p)
}

ENTRY %main (x: f32[8]) -> f32[8] {
  %x = f32[8]{0} parameter(0)
  %f = f32[8]{0} fusion(%x), kind=kLoop, calls=%fused
  ROOT %c = f32[8]{0} copy(%f)
}
""")
    data = _stats_json(str(post), "--by", "scope")
    [root, own] = data["scopes"]
    assert own["scope"] == "(main)" and own["kind"] == "unnamed"
    assert own["kernels"] == ["f", "c"] and own["flops"] == root["flops"] == 8


def test_scope_names_are_printed_as_text_not_markup(tmp_path):
    post = tmp_path / "m.hlo"
    post.write_text("""HloModule m, is_scheduled=true

ENTRY %main (x: f32[8]) -> f32[8] {
  %x = f32[8]{0} parameter(0)
  %a = f32[8]{0} negate(%x), metadata={op_name="[oops]/[bold]layer/Neg"}
  ROOT %c = f32[8]{0} sine(%a), metadata={op_name="[red]x/Sin"}
}
""")
    result = CliRunner().invoke(app, ["stats", str(post), "--by", "scope"])
    assert result.exit_code == 0, result.output
    assert "[oops]" in result.stdout and "[bold]layer" in result.stdout and "[red]x" in result.stdout
