"""The parser's structure (issue 15): one explicit state shared by two readers, operand names kept
apart from operands, the IR built through its own API without importing the parser, and every
error carrying a :class:`hloviz.source.Span` — lazily read parts included, at their true place."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import hloviz
from hloviz.parser.instructions import InstructionReader
from hloviz.parser.module import ModuleReader
from hloviz.parser.state import ParseState
from hloviz.source import SourceText, Span

PACKAGE = Path(hloviz.__file__).resolve().parent

TEXT = """\
HloModule m

ENTRY %e (a: f32[4], b: f32[4]) -> f32[4] {
  %a = f32[4] parameter(0)
  %b = f32[4] parameter(1)
  %late = f32[4] add(%sum, %a), metadata={op_name="late"}
  %sum = f32[4] add(%a, %b), control-predecessors={%a}
  ROOT %r = f32[4] multiply(%late, %sum), sharding={replicated}
}
"""


def test_two_readers_over_one_explicit_state():
    assert not issubclass(ModuleReader, InstructionReader) and not issubclass(InstructionReader, ModuleReader)
    state = ParseState(TEXT, "m.hlo")
    reader = ModuleReader(state)
    assert reader.instructions.state is state
    module = reader.read()
    assert module is state.module and module.name == "m"
    # nothing is left waiting once the module is read
    assert state.unresolved == [] and state.predecessors == [] and state.inferred == []


def test_forward_references_resolve_to_instructions_never_names():
    m = hloviz.parse(TEXT)
    late = m.entry.instruction("late")
    assert [o.name for o in late.operands] == ["sum", "a"]
    assert all(isinstance(o, hloviz.Instruction) for i in m.instructions() for o in i.operands)
    assert [p.name for p in m.entry.instruction("sum").control_predecessors] == ["a"]
    assert "control-predecessors" not in m.entry.instruction("sum").attributes


def test_the_ir_does_not_import_the_parser():
    files = sorted((PACKAGE / "ir").glob("*.py"))
    assert len(files) > 1  # the IR is a package: every module of it is read
    for path in files:
        tree = ast.parse(path.read_text())
        imported = {node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
        imported |= {a.name for node in ast.walk(tree) if isinstance(node, ast.Import) for a in node.names}
        assert not any("parser" in name for name in imported), (path.name, imported)


def test_the_parser_uses_the_irs_public_api_only():
    for path in (PACKAGE / "parser").rglob("*.py"):  # the text/ subpackage too
        source = path.read_text()
        for private in ("._by_name", "._attributes", "._shared_attributes", "._metadata", "._cache"):
            assert private not in source, f"{path.name} reaches into {private}"


def test_a_span_is_formatted_in_one_place():
    span = Span("f.hlo", 3, 5, "  x = oops")
    assert str(span) == "f.hlo:3:5"
    assert span.format("bad") == "f.hlo:3:5: error: bad\n  x = oops\n    ^"
    # the input's own text is escaped (file name, message, excerpt); the caret stays under its character
    hostile = Span("f\x1b.hlo", 1, 4, "a\u202eb%z")
    assert hostile.format("no \x07") == "f\\x1b.hlo:1:4: error: no \\x07\na\\u202eb%z\n        ^"
    with pytest.raises(AttributeError):
        span.line = 4  # type: ignore[misc]  (frozen)
    assert Span("f", 2, 3, "ab(cd").shifted(2, "(cd\n  ef") == Span("f", 2, 5, "ab(cd")
    assert Span("f", 2, 3, "ab(cd").shifted(6, "(cd\n  ef") == Span("f", 3, 3, "  ef")
    assert SourceText("a\nbc\n", "t").span_in(0, "a\nbc", 3) == Span("t", 2, 2, "bc")


def test_every_parse_error_carries_its_span():
    with pytest.raises(hloviz.HloParseError) as info:
        hloviz.parse(TEXT.replace("multiply(%late", "multiply(%nope"), filename="m.hlo")
    err = info.value
    assert err.span == Span("m.hlo", 8, 29, "  ROOT %r = f32[4] multiply(%nope, %sum), sharding={replicated}")
    assert (err.filename, err.line, err.column) == ("m.hlo", 8, 29)
    assert str(err).startswith("m.hlo:8:29: error: instruction 'nope' is not defined")


def test_a_bad_attribute_list_errs_at_parse_time_at_its_true_place():
    # attribute lists are split while parsing (a command reads them all anyway): the error comes
    # from parse, at the missing value, not later from the first read of .attributes
    bad = TEXT.replace('metadata={op_name="late"}', 'metadata={op_name="late"}, frontend_attributes=')
    with pytest.raises(hloviz.HloParseError) as info:
        hloviz.parse(bad, filename="m.hlo")
    err = info.value
    line = bad.splitlines()[5]
    assert (err.filename, err.line, err.source_line) == ("m.hlo", 6, line)
    assert "frontend_attributes" in err.reason and line[err.column - 1 :] == ""  # at the missing value


@pytest.mark.parametrize("header, line, column", [
    ("ENTRY %e (a: f32[4], b: g99[4]) -> f32[4] {", 3, 25),
    ("ENTRY %e (a: f32[4],\n    b: g99[4])\n    -> f32[4] {", 4, 8),
])
def test_a_lazily_read_signature_errs_at_its_true_place(header, line, column):
    text = TEXT.replace("ENTRY %e (a: f32[4], b: f32[4]) -> f32[4] {", header)
    m = hloviz.parse(text, filename="m.hlo")
    with pytest.raises(hloviz.HloParseError) as info:
        _ = m.entry.declared_signature
    err = info.value
    assert (err.filename, err.line, err.column) == ("m.hlo", line, column)
    assert err.source_line == text.splitlines()[line - 1]
    assert err.source_line[column - 1 :].startswith("g99")


SHARED = """\
HloModule m

ENTRY %e (a: f32[4]) -> f32[4] {
  %a = f32[4] parameter(0)
  %x = f32[4] negate(%a), metadata={op_name="jit(f)/layer_1/neg" stack_frame_id=7}
  %y = f32[4] negate(%x), metadata={op_name="jit(f)/layer_1/neg" stack_frame_id=7}
  ROOT %z = f32[4] negate(%y), metadata={op_name="jit(f)/layer_2/neg" source_file="m.py" source_line=12}
}
"""


def test_instructions_with_the_same_attribute_text_share_one_read_only_split():
    # the parser splits each distinct attribute text once and shares the split: read-only, so
    # that no instruction's change reaches another; a change is a new mapping assigned
    m = hloviz.parse(SHARED)
    x, y, z = (m.entry.instruction(n) for n in ("x", "y", "z"))
    assert x.attributes == y.attributes and x.attributes is y.attributes
    a = m.entry.instruction("a")
    for inst in (x, a):  # with attributes or none
        with pytest.raises(TypeError):
            inst.attributes["metadata"] = '{op_name="changed"}'  # type: ignore[index]
    x.attributes = {**x.attributes, "metadata": '{op_name="changed"}', "extra": "1"}
    assert x.attributes == {"metadata": '{op_name="changed"}', "extra": "1"}
    assert x.metadata.op_name == "changed"
    assert y.attributes == {"metadata": '{op_name="jit(f)/layer_1/neg" stack_frame_id=7}'}
    assert y.metadata.op_name == "jit(f)/layer_1/neg"
    given = {"metadata": '{op_name="given"}'}
    a.attributes = given
    given["metadata"] = '{op_name="later"}'  # the caller's dict, changed after: not the instruction's
    assert a.attributes == {"metadata": '{op_name="given"}'} and a.metadata.op_name == "given"
    # metadata is a value: one parse per distinct text, every field as the text says (read here
    # with a regular expression, not with hloviz)
    for inst in (y, z):
        line = SHARED.splitlines()[inst.line - 1]
        fields = dict(re.findall(r'(\w+)=("[^"]*"|\d+)', line.split("metadata=", 1)[1]))
        assert inst.metadata.op_name == fields["op_name"].strip('"')
        assert inst.metadata.source_line == int(fields.get("source_line", "0"))
        assert inst.metadata.source_file == fields.get("source_file", "").strip('"')
        assert inst.metadata.extra == tuple((k, v) for k, v in fields.items()
                                            if k not in ("op_name", "source_file", "source_line"))
    fresh = hloviz.parse(SHARED).entry
    assert fresh.instruction("x").metadata is fresh.instruction("y").metadata  # one value, shared


def test_setting_attributes_reads_the_metadata_again():
    m = hloviz.parse(SHARED)
    y = m.entry.instruction("y")
    assert y.metadata.op_name == "jit(f)/layer_1/neg"
    y.attributes = {"metadata": '{op_name="other" source_line=3}'}
    assert (y.metadata.op_name, y.metadata.source_line) == ("other", 3)


def test_a_called_computation_is_resolved_and_its_attribute_kept_apart():
    text = """\
HloModule m

%f (p: f32[4]) -> f32[4] {
  ROOT %p = f32[4] parameter(0)
}

ENTRY %e (a: f32[4]) -> f32[4] {
  %a = f32[4] parameter(0)
  %b = f32[4] fusion(%a), kind=kLoop, calls=%f, metadata={op_name="b"}
  ROOT %c = f32[4] fusion(%b), kind=kLoop, calls=%f, metadata={op_name="b"}
}
"""
    m = hloviz.parse(text)
    b, c = m.entry.instruction("b"), m.entry.instruction("c")
    for inst in (b, c):
        assert inst.attributes == {"kind": "kLoop", "metadata": '{op_name="b"}'}
        assert [x.name for x in inst.called_computations] == ["f"]
        assert list(inst.calls_by_attribute) == ["calls"]
    with pytest.raises(hloviz.HloParseError) as info:
        hloviz.parse(text.replace("calls=%f, metadata", "calls=%g, metadata", 1), filename="m.hlo")
    err = info.value
    line = text.splitlines()[8].replace("%f", "%g")
    assert (err.line, err.source_line) == (9, line) and line[err.column - 1 :].startswith("%g")
