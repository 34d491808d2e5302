"""XLA's tuple-index operands, ``fusion(%arg_tuple.1#1, %arg_tuple.1#4)``: element 1 and 4 of the
tuple ``arg_tuple.1``, whose get-tuple-element XLA 0.11's dump text leaves out.

The oracle is JAX's text of the same compile (``samples/captures/gpu/NAME/post.hlo``), which
prints every get-tuple-element: read here by regular expressions, it names the same tuples,
indices and element shapes the dump's ``%tuple#N`` operands stand for.
"""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest

import hloviz
from hloviz.printer import to_text

from . import run_cli

ROOT = Path(__file__).resolve().parent.parent
GPU = ROOT / "samples" / "captures" / "gpu"
XLA = GPU / "xla"
CAPTURES = sorted(p.name for p in GPU.iterdir() if (p / "capture.json").is_file())


def _text(path: Path) -> str:
    data = path.read_bytes()
    return (gzip.decompress(data) if path.suffix == ".gz" else data).decode()


def _dump(name: str) -> str:
    found = [p for p in (XLA / name).iterdir() if p.name.removesuffix(".gz").endswith("after_optimizations.txt")]
    assert len(found) == 1
    return _text(found[0])


def _post(name: str) -> str:
    folder = GPU / name
    return _text(next(p for p in folder.iterdir() if p.name in ("post.hlo", "post.hlo.gz")))


def test_the_dump_writes_tuple_index_operands():
    """What the rest of this file is about is in XLA's files: operands ``%name#N`` and (but
    for a computation's root) no get-tuple-element in the dump; JAX's text of the same compile
    prints them."""
    dump, post = _dump("loops_rnn_scan"), _post("loops_rnn_scan")
    assert "fusion(%arg_tuple.1#1, %arg_tuple.1#4)" in dump
    assert " get-tuple-element(" not in dump and " get-tuple-element(%arg_tuple.1), index=1" in post


def test_a_gpu_dump_of_a_loop_is_read(capsys):
    """``hloviz stats`` on a GPU dump folder of a program with a loop (refused before: "cannot
    read '%arg_tuple.1#1' as an operand name")."""
    code, out, err = run_cli(["stats", "--json", str(XLA / "loops_rnn_scan")], capsys)
    assert code == 0, err
    assert json.loads(out)["kernel_count"] > 0


@pytest.mark.parametrize("name", CAPTURES)
def test_each_element_is_the_get_tuple_element_jaxs_text_prints(name):
    """Every get-tuple-element of the dump as hloviz reads it — tuple, index and the element's
    shape — is one that JAX's text of the same compile prints, as many times: the dump's
    ``%tuple#N`` operands stand for exactly these, and the data flows from the tuple."""
    module = hloviz.parse(_dump(name))
    mine = sorted((i.operands[0].name, int(i.attributes["index"]), str(i.shape))
                  for i in module.instructions() if i.opcode == "get-tuple-element")
    theirs = sorted((t, int(k), s) for s, t, k in
                    re.findall(r"= (\S+) get-tuple-element\(%([\w.\-]+)\), index=(\d+)", _post(name)))
    assert mine == theirs


def test_the_users_read_the_element_from_the_tuple():
    """``%gemm_fusion_dot_general.1 = … fusion(%arg_tuple.1#1, %arg_tuple.1#4)``: its operands
    are elements 1 and 4 of ``arg_tuple.1``, shaped as the tuple's elements are (the tuple's
    shape read here from its own line)."""
    dump = _dump("loops_rnn_scan")
    tuple_line = re.search(r"%arg_tuple\.1 = \((.*?)\) parameter\(0\)", dump)
    assert tuple_line is not None
    elements = re.findall(r"[a-z0-9]+\[[\d,]*\](?:\{[\d,]*\})?", tuple_line.group(1))
    body = hloviz.parse(dump).get_computation("region_0.4")
    assert body is not None
    user = body.by_name["gemm_fusion_dot_general.1"]
    assert [(o.opcode, o.operands[0].name, o.attributes["index"]) for o in user.operands] == [
        ("get-tuple-element", "arg_tuple.1", "1"), ("get-tuple-element", "arg_tuple.1", "4")]
    assert [str(o.shape) for o in user.operands] == [elements[1], elements[4]]
    # one element instruction for all of its users, defined before the first
    order = [i.name for i in body.instructions]
    first = body.by_name["arg_tuple.1#0"]
    assert {u.name for u in body.instructions if first in u.operands} == {
        "input_reduce_tanh_fusion", "fusion-start", "loop_add_fusion"}
    assert order.index("arg_tuple.1#0") < order.index("input_reduce_tanh_fusion")


def test_the_printer_writes_the_operand_back():
    """The canonical text keeps ``%tuple#N`` as the operand (no get-tuple-element line XLA's
    text did not have) and reads back to itself."""
    text = to_text(hloviz.parse(_dump("loops_rnn_scan")))
    assert "fusion(%arg_tuple.1#1, %arg_tuple.1#4)" in text
    assert not re.search(r"%\S+#\d+ = ", text)
    assert to_text(hloviz.parse(text)) == text


_MODULE = """HloModule m

ENTRY %e (p: (f32[2], s32[]), q: f32[3]) -> f32[2] {
  %p = (f32[2]{0}, s32[]) parameter(0)
  %q = f32[3]{0} parameter(1)
  ROOT %n = f32[2]{0} negate(OPERAND)
}
"""


def test_a_whole_element_is_read():
    entry = hloviz.parse(_MODULE.replace("OPERAND", "%p#0")).entry
    assert entry is not None
    root = entry.root
    assert root is not None and root.operands[0].operands[0].name == "p"
    assert str(root.operands[0].shape) == "f32[2]{0}"


@pytest.mark.parametrize(("operand", "says"), [
    ("%p#2", "element 2 of 'p', a tuple of 2 elements"),
    ("%q#0", "element 0 of 'q', which is not a tuple"),
    ("%r#0", "instruction 'r'"),
    ("%p#x", "cannot read"),
    ("%p#", "cannot read"),
])
def test_an_element_that_is_not_there_is_refused_where_it_is_named(operand, says, tmp_path, capsys):
    path = tmp_path / "m.hlo"
    path.write_text(_MODULE.replace("OPERAND", operand))
    code, _, err = run_cli(["stats", str(path)], capsys)
    assert code == 2 and says in err and "Traceback" not in err
    assert f"m.hlo:6:{_MODULE.splitlines()[5].index('OPERAND') + 1}" in err


@pytest.mark.parametrize("name", CAPTURES)
def test_the_dump_and_the_capture_of_one_compile_count_the_same_kernels(name, capsys):
    """The dump writes asynchronous fusions in full (``async-start(…), calls=%async_computation``,
    the fusion inside it), JAX's text as sugar (``fusion-start(…), calls=%fused_…``): the same
    compile, so the same kernels launch."""
    counts, sizes = [], []
    for target in (GPU / name, XLA / name):
        code, out, err = run_cli(["stats", "--json", str(target)], capsys)
        assert code == 0, err
        stats = json.loads(out)
        counts.append(stats["kernel_count"])
        # what each kernel reads (through the tuple elements), writes and computes: one compile
        sizes.append(sorted((k["bytes_read"], k["bytes_written"], k["flops"], k["instructions"], k["in_loop"])
                            for k in stats["kernels"]))
    assert counts[0] == counts[1]
    assert sizes[0] == sizes[1]
    starts = len(re.findall(r" async-start\(", _dump(name)))
    assert starts == len(re.findall(r" fusion-start\(", _post(name)))
