"""XLA's own parser corpus (../shared/conformance): same counts as XLA, clean errors otherwise."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import hloviz

from . import entry_of
from .conftest import CONFORMANCE, ROOT

pytestmark = pytest.mark.skipif(not (CONFORMANCE / "MANIFEST.json").exists(),
                                reason="../shared/conformance is not beside this checkout")


def _manifest():
    if not (CONFORMANCE / "MANIFEST.json").exists():
        return []
    return json.loads((CONFORMANCE / "MANIFEST.json").read_text())


@pytest.mark.parametrize("entry", [e for e in _manifest() if e["xla_parses"]], ids=lambda e: e["file"])
def test_modules_xla_accepts_parse_with_xlas_counts(entry):
    m = hloviz.parse((CONFORMANCE / entry["file"]).read_text(), filename=entry["file"])
    assert (len(m.computations), m.instruction_count) == (entry["computations"], entry["instructions"])
    assert entry_of(m).name == entry["entry"]


#: Modules XLA rejects that hloviz reads, each with why reading it is right. Any other module XLA
#: rejects must fail hloviz's parse with a positioned error, or hloviz.verify must report it.
TOLERATED = {
    # hloviz infers a shape left out (sqrt of a broadcast to f32[10,10] is f32[10,10]); XLA's
    # parser wants every shape written. Inference is what lets people write HLO by hand.
    "parser_test_276.hlo": "a left-out shape is inferred",
    # `f32[2,5] %constant.1` for an f32[2,2] constant: hloviz takes an operand's shape from its
    # definition, never from the copy written before its name, so nothing it shows is wrong.
    "parser_test_257.hlo": "an operand's shape comes from its definition, not the copy before its name",
}


def _rejected():
    return [e for e in _manifest() if not e["xla_parses"]]


@pytest.mark.parametrize("entry", _rejected(), ids=lambda e: e["file"])
def test_modules_xla_rejects_are_refused_by_the_parser_or_reported_by_verify(entry):
    text = (CONFORMANCE / entry["file"]).read_text()
    try:
        module = hloviz.parse(text, filename=entry["file"])
    except hloviz.HloParseError as err:
        lines = text.split("\n")
        assert 1 <= err.line <= len(lines) and 1 <= err.column <= len(lines[err.line - 1]) + 1
        assert entry["file"] not in TOLERATED, "tolerated, yet refused: take it out of TOLERATED"
        return
    problems = hloviz.verify(module)
    if entry["file"] in TOLERATED:
        assert problems == [], problems
        return
    assert problems, f"hloviz reads {entry['file']}, which XLA refuses ({entry['xla_error']}), and verify finds nothing"


def test_the_tolerated_modules_read_as_their_reasons_say():
    inferred = hloviz.parse((CONFORMANCE / "parser_test_276.hlo").read_text())
    assert str(entry_of(inferred).root.shape).startswith("f32[10,10]")  # type: ignore[union-attr]
    retyped = hloviz.parse((CONFORMANCE / "parser_test_257.hlo").read_text())
    add = entry_of(retyped).instruction("add.1")
    assert [str(o.shape).split("{")[0] for o in add.operands] == ["f32[2,2]", "f32[2,2]"]
    assert set(TOLERATED) <= {e["file"] for e in _rejected()}


@pytest.mark.parametrize("entry", [e for e in _manifest() if e["xla_parses"]], ids=lambda e: e["file"])
def test_verify_finds_nothing_in_modules_xla_accepts(entry):
    module = hloviz.parse((CONFORMANCE / entry["file"]).read_text(), filename=entry["file"])
    assert hloviz.verify(module) == []


def test_the_shared_runner_reports_everything_passing():
    run = subprocess.run([sys.executable, str(CONFORMANCE.parent / "run")], cwd=ROOT, capture_output=True,
                         text=True, timeout=600, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert run.returncode == 0, run.stdout[-2000:]
    assert "242/242" in run.stdout.splitlines()[-1]
