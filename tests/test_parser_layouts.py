"""Module forms XLA's parser accepts beyond what XLA prints: no ``HloModule`` line, statements
broken across lines or sharing one. Each case states the counts XLA's own parser gives
(checked live against jaxlib when it is installed)."""

from __future__ import annotations

import pytest

import hloviz

CASES = {
    # name: (text, computations, instructions) as XLA's parser reads them
    "no_header": (("add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT r = f32[] add(a, b)\n}\n"
                   "ENTRY main {\n  p = f32[4] parameter(0)\n  c = f32[] constant(0)\n"
                   "  ROOT r = f32[] reduce(p, c), dimensions={0}, to_apply=add\n}\n"), 2, 6),
    "shape_then_opcode_on_next_line": (
        ("add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  c = f32[] parameter(2)\n"
         "  d = f32[] parameter(3)\n  ROOT t = (f32[], f32[]) tuple(a, b)\n}\n"
         "fusion {\n  p0 = f32[2,3,8] parameter(0)\n  p1 = f32[2,3,8] parameter(1)\n  c0 = f32[] constant(0)\n"
         "  ROOT reduce = (f32[2, 3], f32[2, 3])\n    reduce(p0, p1, c0, c0), dimensions={2}, to_apply=add\n}\n"),
        2, 9),
    "operands_on_their_own_lines": (
        ("HloModule PadToStatic\n\nENTRY main {\n  %param = s32[2,<=2,2] parameter(0)\n"
         "  ROOT %cc = (s32[2,2,2], s32[], s32[], s32[])\n             custom-call(s32[2,<=2,2] %param),\n"
         "             custom_call_target=\"PadToStatic\"\n}\n"), 1, 2),
    "computation_on_one_line": (("c { ROOT p = f32[] parameter(0) }\nENTRY e { p = f32[] parameter(0)\n"
                                 " ROOT r = f32[] call(p), to_apply=c }\n"), 2, 3),
    "attributes_continued_after_a_comma_line": (
        "ENTRY e {\n p = f32[4] parameter(0)\n ROOT r = f32[4] negate(p)\n , metadata={op_name=\"x\"}\n}\n", 1, 2),
    "a_line_break_after_every_token": (
        "ENTRY\n e\n {\n p\n =\n f32[4]\n parameter(0)\n ROOT\n r\n =\n f32[4]\n negate(\n p\n )\n}\n", 1, 2),
    "two_instructions_on_a_line": (
        "ENTRY e {\n p = f32[4] parameter(0) q = f32[4] parameter(1)\n ROOT r = f32[4] add(p, q)\n}\n", 1, 3),
    "header_and_computation_on_one_line": ("HloModule m ENTRY e { ROOT p = f32[] parameter(0) }\n", 1, 1),
    "module_name_on_its_own_line": ("HloModule\n m\n\nENTRY e {\n ROOT p = f32[] parameter(0)\n}\n", 1, 1),
    "closing_brace_after_the_root": ("ENTRY e {\n p = f32[4] parameter(0)\n ROOT r = f32[4] negate(p) }\n", 1, 2),
    "blank_line_inside_an_instruction": ("ENTRY e {\n p = f32[4] parameter(0)\n ROOT r = f32[4]\n\n negate(p)\n}\n",
                                         1, 2),
    "crlf_line_ends": (("HloModule m\r\n\r\nENTRY e {\r\n  p = f32[4] parameter(0)\r\n"
                        "  ROOT r = f32[4] negate(p)\r\n}\r\n"), 1, 2),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_layouts_xla_accepts_parse_with_xlas_counts(name):
    text, computations, instructions = CASES[name]
    m = hloviz.parse(text, filename=f"{name}.hlo")
    assert (len(m.computations), m.instruction_count) == (computations, instructions)


@pytest.mark.requires_jax
@pytest.mark.parametrize("name", sorted(CASES))
def test_the_stated_counts_are_xlas(name):
    from jaxlib import _hlo

    text, computations, instructions = CASES[name]
    comps = _hlo.hlo_module_from_text(text).computations()
    assert (len(comps), sum(len(c.instructions()) for c in comps)) == (computations, instructions)


def test_a_module_without_header_is_named_after_its_file_or_its_entry():
    text = CASES["no_header"][0]
    assert hloviz.parse(text, filename="/tmp/reduce_row/variadic_f32.hlo").name == "variadic_f32"
    assert hloviz.parse(text, filename="dump.hlo.txt.gz").name == "dump"
    assert hloviz.parse(text).name == "main"
    m = hloviz.parse(text)
    assert m.entry.name == "main" and m.entry.root.opcode == "reduce" and m.attributes == {}


def test_a_statement_split_over_lines_keeps_its_first_line_and_its_root():
    m = hloviz.parse(CASES["shape_then_opcode_on_next_line"][0])
    reduce = m.computation("fusion").root
    assert reduce.name == "reduce" and reduce.opcode == "reduce" and reduce.shape.is_tuple
    assert [o.name for o in reduce.operands] == ["p0", "p1", "c0", "c0"]
    assert reduce.attributes["dimensions"] == "{2}"


def test_the_second_reading_maps_lines_back():
    m = hloviz.parse(CASES["two_instructions_on_a_line"][0])
    assert [(i.name, i.line) for i in m.entry.instructions] == [("p", 2), ("q", 2), ("r", 3)]
    m = hloviz.parse(CASES["a_line_break_after_every_token"][0])
    assert [(i.name, i.line) for i in m.entry.instructions] == [("p", 4), ("r", 8)]
    assert m.entry.root.name == "r" and m.entry.line == 1
    m = hloviz.parse(CASES["attributes_continued_after_a_comma_line"][0])
    assert m.entry.root.metadata.op_name == "x"


@pytest.mark.parametrize("text, line, column, words", [
    # a shape with no opcode, then the next statement: the error is where the opcode is missing
    ("ENTRY e {\n p = f32[4]\n ROOT r = f32[4] negate(p)\n}\n", 2, 12, "expected an opcode"),
    # an unknown name is still an error, at its line, after the second reading fails as well
    ("ENTRY e {\n p = f32[4] parameter(0) q = f32[4] negate(x)\n ROOT r = f32[4] add(p, q)\n}\n", 2, None, "x"),
    ("HloModule m\nENTRY e {\n ROOT p = f32[] parameter(0)\n", 2, None, "never closed"),
])
def test_real_errors_keep_their_position(text, line, column, words):
    with pytest.raises(hloviz.HloParseError) as info:
        hloviz.parse(text, filename="bad.hlo")
    err = info.value
    assert err.line == line and words in err.reason
    if column is not None:
        assert err.column == column
