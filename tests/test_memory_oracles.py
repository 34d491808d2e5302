"""hloviz memory against oracles outside its code, for what tests/test_memory.py's consistency
checks could not see: XLA's dump text read with regular expressions (flags, sizes, offsets), the
binary ``HloProto`` of the same program decoded by TensorFlow's own ``hlo_pb2``, and values
counted by hand (written out beside them)."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest

from tests import run_cli

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data" / "memory"
SAMPLES = ROOT / "samples" / "memory"
PROTO = DATA / "jax_proto_dump" / "module_0006.jit_f.cpu_after_optimizations.hlo.pb"

_ALLOCATION = re.compile(r"^allocation (\d+): size (\d+)(.*):$", re.MULTILINE)


def _text(path: Path) -> str:
    return gzip.decompress(path.read_bytes()).decode() if path.suffix == ".gz" else path.read_text()


def _assignment(folder: Path) -> str:
    return _text(next(p for p in folder.iterdir() if re.search(r"-buffer-assignment\.txt(\.gz)?$", p.name)))


def _allocations(folder: Path) -> list[tuple[int, int, str]]:
    """(index, size, flags) of each allocation XLA wrote (the shape text between |…| left out)."""
    return [(int(i), int(s), re.sub(r"\|[^|]*\|", "", flags))
            for i, s, flags in _ALLOCATION.findall(_assignment(folder))]


def _json(capsys, *args: str) -> dict:
    code, out, err = run_cli(["memory", *args, "--json"], capsys)
    assert code == 0, err
    return json.loads(out)


# --- a dump's flags: maybe-live-out, parameter, thread-local -------------------------------------

@pytest.mark.parametrize("dump", ["jax_donated_dump", "jax_dump", "tf_dump", "flax_cnn_train_dump"])
def test_kinds_and_aliased_bytes_are_xlas_flags_summed(dump, capsys):
    allocs = _allocations(DATA / dump)
    param = re.compile(r"\bparameter \d+")
    expected = {
        "parameters": sum(s for _, s, f in allocs if param.search(f)),
        "constants": sum(s for _, s, f in allocs if not param.search(f) and "constant" in f),
        "thread_local": sum(s for _, s, f in allocs if "thread-local" in f),
        "outputs": sum(s for _, s, f in allocs if not param.search(f) and "constant" not in f
                       and "thread-local" not in f and "maybe-live-out" in f),
        # a parameter XLA may hand back as an output: the donated buffers of a JAX step
        "aliased": sum(s for _, s, f in allocs if param.search(f) and "maybe-live-out" in f),
    }
    got = _json(capsys, str(DATA / dump))["by_kind"]
    assert {k: got[k] for k in expected} == expected


def test_a_donated_jax_step_hands_its_weights_back(capsys):
    """jax_donated_dump, counted by hand from its buffer-assignment file: eight donated
    parameters marked maybe-live-out (2×524,288 + 2×20,480 + 2×2,048 + 2×40 = 1,093,712 bytes)
    and one output tuple of eight pointers (64 bytes)."""
    got = _json(capsys, str(DATA / "jax_donated_dump"))["by_kind"]
    assert got["aliased"] == 2 * 524_288 + 2 * 20_480 + 2 * 2_048 + 2 * 40 == 1_093_712
    assert got["outputs"] == 64


# --- the binary proto, against the text dump of the same program and against TF's decoder ------

def _text_values() -> list[tuple[int, str, int, int]]:
    """(allocation, instruction, size, offset) of each value in jax_dump's text (the same program
    as jax_proto_dump, dumped without --xla_dump_hlo_as_proto)."""
    out, current = [], -1
    for line in _assignment(DATA / "jax_dump").splitlines():
        if m := re.match(r"allocation (\d+):", line):
            current = int(m.group(1))
        elif m := re.match(r" value: <\d+ ([^\s{]+)(?:\{[\d,]*\})? @\d+> \(size=(\d+),offset=(\d+)\)", line):
            out.append((current, m.group(1), int(m.group(2)), int(m.group(3))))
    return sorted(out)


def test_the_proto_holds_the_values_the_text_dump_lists():
    from hloviz.analysis.memory.readers import from_hlo_proto

    record = from_hlo_proto(PROTO.read_bytes(), "test")
    assert record is not None
    got = sorted((v.allocation, v.instruction, v.size, v.offset) for a in record.allocations for v in a.values)
    assert got == _text_values() and len(got) == 13
    allocs = _allocations(DATA / "jax_dump")
    assert [(a.index, a.size) for a in record.allocations] == [(i, s) for i, s, _ in allocs]
    assert [a.live_out for a in record.allocations] == ["maybe-live-out" in f for _, _, f in allocs]
    assert [a.kind == "thread_local" for a in record.allocations] == ["thread-local" in f for _, _, f in allocs]


@pytest.mark.requires_tf
def test_the_proto_as_tensorflows_hlo_pb2_reads_it():
    from tensorflow.compiler.xla.service import hlo_pb2

    from hloviz.analysis.memory.readers import from_hlo_proto

    theirs = hlo_pb2.HloProto.FromString(  # type: ignore[attr-defined]  (generated protobuf module)
        PROTO.read_bytes()).buffer_assignment
    ours = from_hlo_proto(PROTO.read_bytes(), "test")
    assert ours is not None
    assert [(a.index, a.size, a.maybe_live_out, a.is_entry_computation_parameter, a.is_thread_local)
            for a in theirs.buffer_allocations] == \
        [(a.index, a.size, a.live_out, a.kind == "parameters", a.kind == "thread_local") for a in ours.allocations]
    assert sorted((b.logical_buffer_id, a.index, b.size, b.offset) for a in theirs.buffer_allocations
                  for b in a.assigned) == \
        sorted((v.id, a.index, v.size, v.offset) for a in ours.allocations for v in a.values)


# --- what the report makes of the record ------------------------------------------------------

def test_the_buffers_at_the_peak_come_largest_first_as_xlas_live_range_report_lists_them(capsys):
    live = _text(DATA / "tf_dump" / next(p.name for p in (DATA / "tf_dump").iterdir()
                                          if "buffer-assignment" in p.name))
    peak = live[live.index("(peak):"):live.index("Stack trace")]
    rows = [(n, int(b)) for n, b in re.findall(r"^    (\S+?)\{[\d,]*\}: (\d+) bytes", peak, re.MULTILINE)]
    got = _json(capsys, str(DATA / "tf_dump"))["buffers_at_peak"]
    sizes = [b["bytes"] for b in got]
    assert sizes == sorted(sizes, reverse=True)
    assert sizes[0] == max(b for _, b in rows) and got[0]["instruction"] in {n for n, b in rows if b == sizes[0]}


@pytest.mark.parametrize("name", ["keras_mha", "keras_transformer", "jax_scopes"])
def test_each_layers_bytes_at_the_peak_hold_its_inner_layers(name, capsys):
    """A layer's bytes at the peak are those of the buffers filed under it or under any layer
    inside it, at every depth (keras_transformer nests 4 levels, jax_scopes 3: ``Transformer/
    Block_0/Attention``; its einsums' subscripts, once read as a fourth, name ops), and every
    layer of every such buffer is listed."""
    got = _json(capsys, str(SAMPLES / name))
    scopes = {s["scope"]: s["bytes"] for s in got["scopes"]}
    buffers = got["buffers_at_peak"]
    paths = {"/".join(b["scope"].split("/")[:k]) for b in buffers if b["scope"] != "(top level)"
             for k in range(1, len(b["scope"].split("/")) + 1)}
    assert max(p.count("/") for p in paths) >= {"keras_mha": 1, "jax_scopes": 2}.get(name, 3)
    for path in paths:
        inside = sum(b["bytes"] for b in buffers if b["scope"] == path or b["scope"].startswith(path + "/"))
        assert scopes.get(path) == inside, path
    assert sum(v for k, v in scopes.items() if "/" not in k) == got["peak"]["bytes"]


def test_the_key_projections_bytes_at_the_peak_counted_by_hand(capsys):
    """keras_mha, by hand from post.hlo: the key projection's kernel (arg3.1, f32[64,4,16]:
    16,384 B), its bias (arg4.1, f32[4,16]: 256 B), its dot and the transposed copy of it
    (16,384 B each) are live at the peak: 49,408 bytes."""
    scopes = {s["scope"]: s["bytes"] for s in _json(capsys, str(SAMPLES / "keras_mha"))["scopes"]}
    assert scopes["mha/key"] == 3 * 16_384 + 256 == 49_408  # the layer's clean name (op_name mha_1/key_1)


def test_a_capture_diffed_with_itself_has_no_buffer_new_or_grown(capsys):
    sample = str(SAMPLES / "keras_mha")
    code, out, err = run_cli(["diff", sample, sample, "--format", "json"], capsys)
    assert code == 0, err
    memory = json.loads(out)["memory"]
    assert memory["buffers_new_or_grown"] == []
    assert memory["peak_bytes"]["before"] == memory["peak_bytes"]["after"]


# --- the records kept with the samples, against the HLO they belong to ------------------------

_BYTES = {"pred": 1, "s8": 1, "u8": 1, "s16": 2, "u16": 2, "f16": 2, "bf16": 2, "s32": 4, "u32": 4, "f32": 4,
          "s64": 8, "u64": 8, "f64": 8, "c64": 8, "c128": 16}
_DEFINED = re.compile(r"^\s*(?:ROOT )?%?([\w.\-]+) = (\w+)\[([\d,]*)\]", re.MULTILINE)


def _memory_samples() -> list[str]:
    return sorted(p.name for p in SAMPLES.iterdir() if (p / "memory.json").is_file()) if SAMPLES.is_dir() else []


@pytest.mark.parametrize("name", _memory_samples())
def test_each_recorded_value_has_the_byte_size_of_its_instructions_shape(name):
    """memory.json was decoded by hloviz at capture time (from XLA's proto or its dump), so it is
    no independent record by itself; here each array value it lists is checked against the
    optimized HLO it came with: the instruction exists and the value's size is the shape's
    elements × the element type's bytes, read from the text with a regex."""
    folder = SAMPLES / name
    post = next(p for p in (folder / "post.hlo", folder / "post.hlo.gz") if p.is_file())
    text = _text(post)
    shapes = {n: (t, d) for n, t, d in _DEFINED.findall(text)}
    defined = set(re.findall(r"^\s*(?:ROOT )?%?([\w.\-]+) = ", text, re.MULTILINE))
    record = json.loads((folder / "memory.json").read_text())
    checked = 0
    for a in record["allocations"]:
        for _vid, inst, index, size, offset in a["values"]:
            assert offset + size <= a["size"], (name, inst)
            if index or inst not in shapes or shapes[inst][0] not in _BYTES:
                continue  # a tuple element, or a tuple's own pointer table
            dtype, dims = shapes[inst]
            elements = 1
            for d in filter(None, dims.split(",")):
                elements *= int(d)
            assert size == elements * _BYTES[dtype], (name, inst, dtype, dims, size)
            checked += 1
    assert checked >= 5, name
    names = {inst for a in record["allocations"] for _v, inst, *_ in a["values"]}
    assert names <= defined, sorted(names - defined)[:5]  # every value is an instruction of this module
