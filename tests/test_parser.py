"""The HLO parser: dialects users meet, the IR it builds, and errors with line and column."""

from __future__ import annotations

import gzip
import lzma

import pytest

import hloviz
from hloviz.ir import DYNAMIC

from . import entry_of, present, root_of

TF_NEW = """\
HloModule a_inference_f_10__.8, entry_computation_layout={(f32[4]{0}, f32[])->f32[4]{0}}

ENTRY %a_inference_f_10__.8 (arg0.1: f32[4], arg1.2: f32[]) -> f32[4] {
  %arg0.1 = f32[4]{0} parameter(0), parameter_replication={false}, metadata={op_name="XLA_Args"}
  %arg1.2 = f32[] parameter(1), parameter_replication={false}, metadata={op_name="XLA_Args"}
  %broadcast.3 = f32[4]{0} broadcast(%arg1.2), dimensions={}, metadata={op_type="AddV2" op_name="add" source_file="/tmp/model.py" source_line=7}
  %add.4 = f32[4]{0} add(%arg0.1, %broadcast.3), metadata={op_type="AddV2" op_name="add" source_file="/tmp/model.py" source_line=7}
  ROOT %tuple.5 = (f32[4]{0}) tuple(%add.4)
}
"""

TF_OLD = """\
HloModule a_inference_f_10__.8

ENTRY %a_inference_f_10__.8 (arg0.1: f32[4], arg1.2: f32[]) -> (f32[4]) {
  %arg0.1 = f32[4]{0} parameter(0), parameter_replication={false}, metadata={op_name="XLA_Args"}
  %arg1.2 = f32[] parameter(1), parameter_replication={false}, metadata={op_name="XLA_Args"}
  %broadcast.3 = f32[4]{0} broadcast(f32[] %arg1.2), dimensions={}, metadata={op_type="AddV2" op_name="add"}
  %add.4 = f32[4]{0} add(f32[4]{0} %arg0.1, f32[4]{0} %broadcast.3), metadata={op_type="AddV2" op_name="add"}
  ROOT %tuple.5 = (f32[4]{0}) tuple(f32[4]{0} %add.4)
}
"""


def test_current_tf_dialect_builds_the_ir():
    m = hloviz.parse(TF_NEW, filename="f.hlo")
    assert m.name == "a_inference_f_10__.8"
    assert m.entry_computation_layout == "{(f32[4]{0}, f32[])->f32[4]{0}}"
    comp = entry_of(m)
    assert comp.is_entry and [p.name for p in comp.parameters] == ["arg0.1", "arg1.2"]
    add = comp.instruction("add.4")
    assert add.opcode == "add" and str(add.shape) == "f32[4]{0}"
    assert [o.name for o in add.operands] == ["arg0.1", "broadcast.3"]
    assert add.metadata.op_name == "add" and add.metadata.op_type == "AddV2"
    assert add.metadata.source_file == "/tmp/model.py" and add.metadata.source_line == 7
    assert add.line == 7
    root = present(comp.root)
    assert root.opcode == "tuple" and root.is_root
    params, result = present(comp.declared_signature)
    assert [(n, str(s)) for n, s in params] == [("arg0.1", "f32[4]"), ("arg1.2", "f32[]")]
    assert str(result) == "f32[4]"
    assert comp.instruction("broadcast.3").attributes["dimensions"] == "{}"


def test_old_tf_dialect_with_operand_shapes_gives_the_same_graph():
    new, old = hloviz.parse(TF_NEW), hloviz.parse(TF_OLD)
    for a, b in zip(entry_of(new).instructions, entry_of(old).instructions):
        assert (a.name, a.opcode, [o.name for o in a.operands]) == (b.name, b.opcode, [o.name for o in b.operands])


def test_jax_dialect_without_percent_signs_and_with_stack_frames():
    text = """\
HloModule jit_f, is_scheduled=true, entry_computation_layout={(f32[8]{0})->f32[]}

FileNames
1 "/tmp/j.py"

FunctionNames
1 "f"

FileLocations
1 {file_name_id=1 function_name_id=1 line=3 end_line=3 column=11 end_column=40}

StackFrames
1 {file_location_id=1 parent_frame_id=1}


region_0.1 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY main.2 {
  x.1 = f32[8]{0} parameter(0), metadata={op_name="x"}
  c = f32[] constant(0)
  ROOT r = f32[] reduce(x.1, c), dimensions={0}, to_apply=region_0.1, metadata={op_name="jit(f)/reduce_sum" stack_frame_id=1}
}
"""
    m = hloviz.parse(text)
    assert m.is_scheduled
    assert m.stack_frame_tables["FileNames"] == {1: '"/tmp/j.py"'}
    r = root_of(m)
    assert r.called_computations == [m.computation("region_0.1")]
    assert r.calls_by_attribute == {"to_apply": [m.computation("region_0.1")]}
    assert dict(r.metadata.extra) == {"stack_frame_id": "1"}
    assert hloviz.parse(hloviz.to_text(m)).stack_frame_tables == m.stack_frame_tables


def test_shapes_layouts_tiling_dynamic_dims_and_tuples():
    s = hloviz.parse_shape("f32[8,128]{1,0:T(8,128)(2,1)S(1)}")
    layout = present(s.layout)
    assert s.dims == (8, 128) and layout.minor_to_major == (1, 0)
    assert layout.tiles == ((8, 128), (2, 1)) and layout.memory_space == 1
    assert str(s) == "f32[8,128]{1,0:T(8,128)(2,1)S(1)}"
    d = hloviz.parse_shape("s32[<=10,?,3]")
    assert d.dims == (10, DYNAMIC, 3) and d.dynamic == (True, True, False)
    assert str(d) == "s32[<=10,?,3]"
    t = hloviz.parse_shape("(f32[2]{0}, (s32[], token[]), u8[4])")
    assert t.is_tuple and len(t.tuple_shapes) == 3 and t.tuple_shapes[1].tuple_shapes[1].element_type == "token"
    assert t.byte_size == 2 * 4 + 4 + 4
    assert hloviz.parse_shape("bf16[3,5]").byte_size == 30


def test_fusion_while_conditional_and_index_comments():
    text = """\
HloModule m, is_scheduled=true

%fused_computation (p0: f32[4], p1: f32[4]) -> f32[4] {
  %p0 = f32[4]{0} parameter(0)
  %p1 = f32[4]{0} parameter(1)
  ROOT %mul = f32[4]{0} multiply(%p0, %p1)
}

%cond (t: (s32[], f32[4])) -> pred[] {
  %t = (s32[], f32[4]{0}) parameter(0)
  %i = s32[] get-tuple-element(%t), index=0
  %n = s32[] constant(10)
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}

%body (t.1: (s32[], f32[4])) -> (s32[], f32[4]) {
  %t.1 = (s32[], /*index=1*/f32[4]{0}) parameter(0)
  %i.1 = s32[] get-tuple-element(%t.1), index=0
  %v = f32[4]{0} get-tuple-element(%t.1), index=1
  %f = f32[4]{0} fusion(%v, %v), kind=kLoop, calls=%fused_computation
  ROOT %out = (s32[], f32[4]{0}) tuple(%i.1, %f)
}

ENTRY %main (a: (s32[], f32[4])) -> (s32[], f32[4]) {
  %a = (s32[], f32[4]{0}) parameter(0)
  ROOT %w = (s32[], f32[4]{0}) while(%a), condition=%cond, body=%body, backend_config="{\\"known_trip_count\\":{\\"n\\":\\"10\\"}}"
}
"""
    m = hloviz.parse(text)
    w = root_of(m)
    assert w.calls_by_attribute == {"condition": [m.computation("cond")], "body": [m.computation("body")]}
    assert w.attributes["backend_config"].startswith('"{')
    f = m.computation("body").instruction("f")
    assert f.fusion_kind == "kLoop" and f.called_computations[0].name == "fused_computation"


def test_constants_keep_their_literal_and_elided_constants_stay_elided():
    text = """\
HloModule m

ENTRY %e () -> (f32[3], f32[2,2], f32[100]) {
  %a = f32[3]{0} constant({nan, -inf, 1.5e+10})
  %b = f32[2,2]{1,0} constant({ { 1, 2 }, { 3, 4 } })
  %c = f32[100]{0} constant({...})
  ROOT %t = (f32[3]{0}, f32[2,2]{1,0}, f32[100]{0}) tuple(%a, %b, %c)
}
"""
    e = entry_of(hloviz.parse(text))
    assert e.instruction("a").literal == "{nan, -inf, 1.5e+10}"
    assert e.instruction("b").literal == "{ { 1, 2 }, { 3, 4 } }"
    assert e.instruction("c").is_elided_constant and e.instruction("c").literal == "{...}"


def test_unknown_opcodes_and_attributes_are_kept():
    text = """\
HloModule m

ENTRY %e (x: f32[2]) -> f32[2] {
  %x = f32[2]{0} parameter(0)
  ROOT %y = f32[2]{0} future-op(%x), brand_new_attr={a=1, b="x,y=z"}, other=kSomething
}
"""
    y = root_of(hloviz.parse(text))
    assert y.opcode == "future-op"
    assert y.attributes == {"brand_new_attr": '{a=1, b="x,y=z"}', "other": "kSomething"}


def test_frontend_attributes_with_commas_inside_braces():
    text = """\
HloModule m

ENTRY %e (x: f32[2]) -> f32[2] {
  %x = f32[2]{0} parameter(0)
  ROOT %y = f32[2]{0} copy(%x), frontend_attributes={_xla_a="1",_xla_b="2"}, sharding={devices=[2]0,1}
}
"""
    y = root_of(hloviz.parse(text))
    assert y.attributes == {"frontend_attributes": '{_xla_a="1",_xla_b="2"}', "sharding": "{devices=[2]0,1}"}


def test_escaped_quotes_in_metadata():
    text = 'HloModule m\n\nENTRY %e () -> f32[] {\n  ROOT %c = f32[] constant(1), metadata={op_name="a\\"b, c=d"}\n}\n'
    assert root_of(hloviz.parse(text)).metadata.op_name == 'a"b, c=d'


@pytest.mark.parametrize("opener,suffix", [(gzip.open, ".gz"), (lzma.open, ".xz"), (open, "")])
def test_parse_file_reads_plain_and_compressed_files(tmp_path, opener, suffix):
    path = tmp_path / f"m.hlo{suffix}"
    with opener(path, "wt") as f:
        f.write(TF_NEW)
    assert root_of(hloviz.parse_file(path)).opcode == "tuple"


# -- errors -------------------------------------------------------------------------------

def _error(text: str) -> hloviz.HloParseError:
    with pytest.raises(hloviz.HloParseError) as info:
        hloviz.parse(text, filename="bad.hlo")
    return info.value


@pytest.mark.parametrize(
    "text,line,column,message",
    [
        ("", 1, 1, "expected 'HloModule name'"),
        ("HloModel m\n", 1, 1, "expected 'HloModule name'"),
        ("HloModule m\n\nENTRY %e () -> f32[] {\n  %c = f32[] constant(1)\n  %d = f32[] oops\n}\n",
         5, 18, "expected '(' after opcode 'oops'"),
        ("HloModule m\n\nENTRY %e () -> f32[] {\n  %c = g32[] constant(1)\n}\n", 4, 8, "expected an element type"),
        ("HloModule m\n\nENTRY %e (x: f32[]) -> f32[] {\n  %x = f32[] parameter(0)\n  ROOT %n = f32[] negate(%y)\n}\n",
         5, 26, "instruction 'y' is not defined in computation 'e'"),
        ("HloModule m\n\nENTRY %e () -> f32[] {\n  %c = f32[] constant(1)\n", 3, 23, "never closed"),
        ("HloModule m\n\nENTRY %e () -> f32[] {\n  ROOT %c = f32[] call(), to_apply=%nowhere\n}\n",
         4, 36, "computation 'nowhere' (named by to_apply=) is not defined"),
        ("HloModule m\n\nENTRY %e () -> f32[] {\n  ROOT %a = f32[] constant(1)\n  ROOT %b = f32[] constant(2)\n}\n",
         5, 3, "only one ROOT"),
        ("HloModule m\n\nENTRY %e () -> f32[] {\n  %a = f32[] constant(1)\n  %a = f32[] constant(2)\n}\n",
         5, 4, "instruction 'a' is defined twice"),
        ("HloModule m\n\nENTRY %e (x: f32[]) -> f32[] {\n  %x = f32[] parameter(x)\n}\n",
         4, 24, "expected the parameter number"),
    ],
)
def test_errors_give_line_column_and_message(text, line, column, message):
    err = _error(text)
    assert (err.line, err.column) == (line, column), str(err)
    assert message in err.reason
    rendered = str(err).splitlines()
    assert rendered[0].startswith(f"bad.hlo:{line}:{column}: error: ")
    assert rendered[2] == " " * (column - 1) + "^"


def test_error_is_a_hloviz_error():
    assert issubclass(hloviz.HloParseError, hloviz.HlovizError)


def test_binary_and_nul_input_give_parse_errors(tmp_path):
    p = tmp_path / "bin.hlo"
    p.write_bytes(b"HloModule m\n\xff\xfe\x00")
    with pytest.raises(hloviz.HloParseError) as caught:
        hloviz.parse_file(p)
    err = caught.value
    assert (err.line, err.column) == (2, 1) and "not UTF-8" in err.reason
    err = _error("HloModule m\0\n")
    assert (err.line, err.column) == (1, 12)


def test_missing_file_is_an_input_error(tmp_path):
    with pytest.raises(hloviz.InputError, match="no such file"):
        hloviz.parse_file(tmp_path / "nope.hlo")


def test_unclosed_bracket_does_not_swallow_the_rest_of_the_module():
    body = "\n".join(f"  %c{k} = f32[] constant({k})" for k in range(2000))
    text = f"HloModule m\n\nENTRY %e () -> f32[] {{\n  %bad = f32[] add(%c0, \n{body}\n}}\n"
    err = _error(text)
    assert err.line == 4


def test_a_layout_must_hold_dimension_numbers():
    """A fuzz finding: ``{,1}`` was kept as layout text, and its printed form did not re-read
    the same. XLA refuses it; so does hloviz, with where."""
    text = "HloModule m\nENTRY e {\n  ROOT p = f32[2,3]{,1} parameter(0)\n}\n"
    with pytest.raises(hloviz.HloParseError, match="expected dimension numbers in the layout") as err:
        hloviz.parse(text)
    assert (err.value.line, err.value.column) == (3, 20)


def test_a_layout_broken_across_lines_prints_on_one_and_round_trips():
    text = "HloModule m\nENTRY e {\n  ROOT p = f32[2,3]{0,\n 1} parameter(0)\n}\n"
    printed = hloviz.to_text(hloviz.parse(text))
    assert "f32[2,3]{0,1} parameter(0)" in printed
    assert hloviz.to_text(hloviz.parse(printed)) == printed


def test_an_inferred_shape_in_a_cycle_is_bounded():
    """A fuzz finding: ``root = get-tuple-element(..., root)`` with its shape left out made the
    shape inference walk the cycle forever (149 bytes → 5.8 GB). Now it parses at once and
    :func:`hloviz.check` reports the cycle."""
    text = ("HloModule test\n\n test {\n  ROOT root = get-tuple-element(\n"
            "    (f32[10], f16[10]) tuple(f32[10] parameter(0), f16[10] parameter(1))\n  root ), index=0\n}")
    module = hloviz.parse(text)
    assert any("cycle" in p.message for p in hloviz.check(module))


def test_metadata_with_a_known_field_among_the_trailing_words_reads_every_field():
    # a known field after an unknown one leaves XLA's usual order: read field by field (hand-made)
    from hloviz.ir import parse_metadata
    m = parse_metadata('{op_name="a/b" stack_frame_id=3 source_line=7}')
    assert (m.op_name, m.source_line, m.extra) == ("a/b", 7, (("stack_frame_id", "3"),))
    m = parse_metadata('{op_name="a/b" stack_frame_id=3 op_type=Add}')
    assert (m.op_name, m.op_type, m.extra) == ("a/b", "Add", (("stack_frame_id", "3"),))
    m = parse_metadata('{op_name="a/b" stack_frame_id=3}')
    assert (m.op_name, m.source_line, m.extra) == ("a/b", 0, (("stack_frame_id", "3"),))
    assert parse_metadata('{op_type="Add" source_line=4}') == parse_metadata('{op_type="Add" source_line=4}')
    assert parse_metadata('{op_type="Add" source_line=4}').extra == ()
