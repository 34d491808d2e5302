"""Attribute lists: the one-pattern split the parser uses for lists as XLA prints them gives what
the careful, bracket-aware split gives, on every list it accepts, and refuses the rest."""

from __future__ import annotations

import re

from hypothesis import example, given, settings
from hypothesis import strategies as st

from hloviz.parser.attributes import _split_carefully, split_attributes, split_common_attributes

PIECES = [",", ", ", "=", "{", "}", "[", "]", "(", ")", '"', '\\"', "\\", "a", "k", "_", ".", "-", "1", " ",
          "\t", "\n", ", k=", ", m=", "x=", "{1,0}", '"s"', "/", '{op_name="a/b" stack_frame_id=3}']


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=16))
def test_the_common_split_agrees_with_the_careful_one(pieces):
    text = "," + "".join(pieces)
    common = split_common_attributes(text)
    if common is None:
        return
    assert common == _split_carefully(text, 0)
    assert common == split_attributes(text, 0)


def test_the_lists_xla_prints_take_the_common_split():
    jax = ', dimensions={0,1}, metadata={op_name="jit(train_step)/jvp(decoder)/layer_3/mul" stack_frame_id=33}'
    cpu = (', backend_config={"fusion_config":{"kind":"__ynn_fusion"},"outer_dimension_partitions":[]}, '
           'slice={[0:2], [0:16]}, window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f')
    escaped = r', metadata={op_name="params[\'embed\']"}'
    for text in (jax, cpu, escaped):
        assert split_common_attributes(text) == _split_carefully(text, 0)
    # the value ends where the next ", key=" starts, at the top level only
    assert split_common_attributes(', a={x, b=1}, c="y, d=2"') == {"a": "{x, b=1}", "c": '"y, d=2"'}


def test_lists_of_another_form_are_refused():
    # a comma inside a word's value, brackets around a ", key=", no value, a dangling comma, escapes
    # across lines: the parser's other paths read these (and report the bad ones)
    for text in (", a=b,c", ", x=[a, k=b]", ", x=", ", a=1,", ', s="a\\\nb"', ", k={a\nb}"):
        assert split_common_attributes(text) is None, text


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=12))
@example(pieces=["}", ", k=", "{"])  # ", metadata={}, k={}": two attributes, as XLA's parser reads it
@example(pieces=["}", ", k=", "\\", ", k=", "{"])  # ", k=\\, k={}": one key twice (hypothesis found it)
@example(pieces=["}", " ", ", k=", "{"])  # ", metadata={} , k={}": a space before the comma (hypothesis found it)
def test_a_list_of_metadata_alone_splits_as_any_other(pieces):
    # the one-match path for ", metadata={...}" alone (most first-seen lists of a large JAX
    # module) gives what the careful split gives, and refuses what the general pattern refuses
    text = ", metadata={" + "".join(pieces) + "}"
    common = split_common_attributes(text)
    if common is None:
        return
    assert common == _split_carefully(text, 0)
    # the pieces may close the metadata early and start another attribute (", k={"): the split
    # is then into more than one, metadata first, and written back it is the text again — unless
    # a key comes twice (XLA refuses that; the tolerant parser keeps the last, as a dict does)
    assert next(iter(common)) == "metadata"
    keys = re.findall(r", ([A-Za-z_][\w.-]*)=", text)
    if len(keys) == len(set(keys)):  # (the blanks before a comma between attributes are no value's)
        written = "".join(f", {k}={v}" for k, v in common.items())
        assert _top_level_blanks_removed(written) == _top_level_blanks_removed(text)
    else:
        assert set(common) <= set(keys)
    if text.count("{") == 1 and text.count("}") == 1 and "\"" not in text:
        assert common == {"metadata": text[len(", metadata="):]}


def test_the_metadata_xla_prints_takes_the_one_match_path():
    text = r', metadata={op_name="jit(f)/layer_3/mul[\'w\']" source_file="/a/b.py" source_line=7 stack_frame_id=3}'
    assert split_common_attributes(text) == {"metadata": text[len(", metadata="):]}
    for refused in (", metadata={a\nb}", ', metadata={op_name="a}', ", metadata={a", ", metadata={a}}"):
        assert split_common_attributes(refused) is None, refused


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=10), st.lists(st.sampled_from(PIECES), max_size=6),
       st.lists(st.sampled_from(PIECES), max_size=6))
def test_a_list_split_as_its_head_and_its_metadata_splits_as_a_whole(head, meta, other_meta):
    # the parser splits the part before ", metadata={...}" once per distinct text (a cache of
    # heads, kept for one parse); a list split that way is split as the careful split does it,
    # keys in text order, whether its head was cached by an earlier list or not
    heads: dict[str, dict[str, str]] = {}
    first = "," + "".join(head) + ", metadata={" + "".join(other_meta) + "}"
    text = "," + "".join(head) + ", metadata={" + "".join(meta) + "}"
    for t in (first, text):
        split = split_common_attributes(t, heads)
        if split is None:
            continue
        careful = _split_carefully(t, 0)
        assert split == careful and list(split) == list(careful)


def test_heads_are_split_once_and_never_shared_with_a_list():
    heads: dict[str, dict[str, str]] = {}
    a = split_common_attributes(', dimensions={0}, metadata={op_name="a" stack_frame_id=3}', heads)
    b = split_common_attributes(', dimensions={0}, metadata={op_name="b"}', heads)
    assert a == {"dimensions": "{0}", "metadata": '{op_name="a" stack_frame_id=3}'}
    assert b == {"dimensions": "{0}", "metadata": '{op_name="b"}'}
    assert heads == {", dimensions={0}": {"dimensions": "{0}"}}
    # a key written twice keeps its first place and its last value, as the whole split keeps it
    twice = ', metadata={op_name="x"}, k=1, metadata={op_name="y"}'
    assert list(split_common_attributes(twice, heads).items()) == [("metadata", '{op_name="y"}'), ("k", "1")]


def _top_level_blanks_removed(text: str) -> str:
    """``text`` without the blanks between its attributes (outside every brace, bracket and
    string): XLA's lexer skips them, they belong to no value, and the split writes one after
    each comma."""
    out, depth, quoted, i = [], 0, False, 0
    while i < len(text):
        c = text[i]
        if quoted:
            if c == "\\":
                out.append(text[i:i + 2])
                i += 2
                continue
            quoted = c != '"'
        elif c == '"':
            quoted = True
        elif c in "{[":
            depth += 1
        elif c in "}]":
            depth -= 1
        elif c in " \t\n" and depth == 0:
            i += 1
            continue
        out.append(c)
        i += 1
    return "".join(out)
