"""The verdict attributes "by XLA" / "by TensorFlow" to each group of folded constants, and
every number it prints is a field of ``summary`` (issue 19, item 9).

The oracle for who folded what is the HLO text of ``samples/captures/folded_by_both`` (TF 2.21,
CPU), read here with regular expressions: TensorFlow's bridge folded ``3.0 * 2.0`` (the sample's
source) into a constant 6 of the pre-optimization HLO; a constant XLA folded is in the optimized
HLO with a value no pre-optimization constant has.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hloviz import api
from hloviz.analysis import Summary

ROOT = Path(__file__).resolve().parent.parent
CAPTURES = sorted(p for p in (ROOT / "samples" / "captures").iterdir() if (p / "post.hlo").is_file()
                  or (p / "post.hlo.gz").is_file())
BOTH = ROOT / "samples" / "captures" / "folded_by_both"

_INSTRUCTION = re.compile(r"^\s*(?:ROOT )?%?([\w.\-]+) = \S+ (\w[\w\-]*)\((.*?)\)(?:,|$)(.*)$", re.MULTILINE)
_OP_NAME = re.compile(r'op_type="([^"]*)" op_name="([^"]*)"')


def _instructions(text: str) -> list[tuple[str, str, str, str, str]]:
    """(name, opcode, operands/literal, op_type, op_name) of each instruction line."""
    out = []
    for name, opcode, inside, rest in _INSTRUCTION.findall(text):
        meta = _OP_NAME.search(rest)
        out.append((name, opcode, inside, meta.group(1) if meta else "", meta.group(2) if meta else ""))
    return out


def _tensorflow_folds(pre_text: str) -> list[str]:
    """The bridge's fold of ``tf.constant(3.0) * tf.constant(2.0)`` in ``folded_by_both``: a
    constant 6 of the pre-opt HLO that carries the type of the op it flows into, not ``Const``."""
    return [name for name, opcode, literal, op_type, _ in _instructions(pre_text)
            if opcode == "constant" and op_type not in ("Const", "") and float(literal) == 3.0 * 2.0]


def _xla_folds(pre_text: str, post_text: str) -> list[str]:
    """Constants of the optimized HLO whose value no pre-opt constant has."""
    before = {inside for _, opcode, inside, _, _ in _instructions(pre_text) if opcode == "constant"}
    return [name for name, opcode, inside, _, _ in _instructions(post_text)
            if opcode == "constant" and inside not in before]


def test_each_group_of_folded_constants_names_its_own_folder():
    pre, post = (BOTH / "pre.hlo").read_text(), (BOTH / "post.hlo").read_text()
    tf_folds, xla_folds = _tensorflow_folds(pre), _xla_folds(pre, post)
    assert len(tf_folds) == 1 and len(xla_folds) == 2  # the capture is what the test needs
    literal = re.search(rf"%{re.escape(tf_folds[0])} = \S+ constant\(([^)]*)\)", pre)
    assert literal is not None

    result = api.stats(str(BOTH))
    verdict = result.analysis.verdict
    assert f"into {len(tf_folds)} constant ({literal.group(1)}) by TensorFlow" in verdict
    assert f"; {len(xla_folds)} folded constants by XLA hold part of an op's work" in verdict
    assert "by XLA and by TensorFlow" not in verdict
    s = result.analysis.summary
    assert s.folded_with_ops_by == {"tensorflow": len(tf_folds)}
    assert s.folded_without_ops_by == {"xla": len(xla_folds)}


def test_mixed_folders_in_one_group_are_counted_each():
    s = Summary(ops=9, statuses={"kernels": 1, "folded": 5, "eliminated": 0, "no_work": 3}, no_work_types={"Const": 3},
                kernels=1, fusions=1, kernel_descriptions=(), folded_constants=4, folded_by={"xla": 3, "tensorflow": 1},
                folded_into_constants=5, folded_constants_without_ops=1, folded_value=None, new_constants=0,
                pre_work=9, unfused_kernels=0, folded_into_no_constant=0, folded_constants_with_ops=3,
                folded_with_ops_by={"xla": 2, "tensorflow": 1}, folded_without_ops_by={"xla": 1},
                folded_without_ops_value="0.5")
    assert s.verdict() == ("9 ops → 1 kernel: 1 in kernels, 5 folded into 3 constants (2 by XLA, 1 by TensorFlow), "
                           "3 no work (3 Const); 1 folded constant (0.5) by XLA holds part of an op's work")


def _numbers(value: object) -> set[str]:
    if isinstance(value, bool) or value is None:
        return set()
    if isinstance(value, int):
        return {str(value)}
    if isinstance(value, dict):
        return {n for v in value.values() for n in _numbers(v)}
    return set()


@pytest.mark.parametrize("capture", CAPTURES, ids=lambda p: p.name)
def test_every_number_of_the_verdict_is_a_summary_field(capture):
    summary = api.stats(str(capture)).analysis.summary
    data = summary.to_dict()
    text = summary.verdict()
    # the words that carry their own numbers: kernel descriptions and folded values
    for words in (*data["kernel_descriptions"], data["folded_value"], data["folded_without_ops_value"]):
        if words:
            text = text.replace(f"({words})", "").replace(words, "")
    # "(60 Const, 35 ReadVariableOp, …, +4 more)": the types of no_work_types left unnamed
    more = re.search(r"\(((?:\d+ )?\w+, ){4}\+(\d+) more\)", text)
    if more:
        assert int(more.group(2)) == len(data["no_work_types"]) - 4
        text = text.replace(f"+{more.group(2)} more", "")
    fields = set().union(*(_numbers(v) for v in data.values()))
    said = re.findall(r"(?<![\w.])\d+(?![\w.])", text)
    assert said and set(said) <= fields, (set(said) - fields, summary.verdict())
