"""Computation signatures: the short reading of the usual form reads exactly what the general
reading reads, and both read what the header says (names and shapes read off the text here)."""

from __future__ import annotations

import gzip
import re
from pathlib import Path

import pytest

import hloviz
from hloviz.errors import HloParseError
from hloviz.parser.shapes import ShapeParser, _parse_signature, parse_signature

CAPTURES = Path(__file__).resolve().parent.parent / "samples" / "captures"
# A header line as XLA prints it: `%name (p: shape, ...) -> shape {`, the signature kept whole.
HEADER = re.compile(r"^(?:ENTRY )?%?\S+ (\(.*\) -> .*) \{$", re.MULTILINE)


def _texts() -> list[str]:
    out = []
    for path in sorted(CAPTURES.rglob("*.hlo*"))[:40]:
        data = path.read_bytes()
        out.append((gzip.decompress(data) if path.suffix == ".gz" else data).decode())
    return out


def test_every_header_of_real_captures_reads_as_written():
    seen = 0
    for text in _texts():
        module = hloviz.parse(text)
        headers = HEADER.findall(re.sub(r"/\*.*?\*/", "", text))
        # Computations XLA's async sugar stands for (fusion-start's `.wrapped`) have no header.
        written = [c for c in module.computations if not c.synthetic]
        for computation, header in zip(written, headers):
            params, result = computation.declared_signature or ([], None)
            inner, _, result_text = header.rpartition(") -> ")
            pieces = [p.split(":", 1) for p in re.split(r", (?=%?[\w.\-]+: )", inner[1:]) if p]
            assert [name for name, _ in params] == [n.strip().lstrip("%") for n, _ in pieces]
            assert [str(shape) for _, shape in params] == [t.strip() for _, t in pieces]
            assert str(result) == result_text
            seen += 1
    assert seen > 100


@pytest.mark.parametrize("signature", [
    "(a: f32[2], b: s32[]) -> f32[2]",
    "() -> f32[]",
    "(a: f32[2]{0}, b: f32[3,4]{1,0}) -> (f32[2], s32[])",
    "(%a: f32[2]) -> f32[2]",
    "(a: f32[2],b: f32[2]) -> f32[2]",
    "(a:f32[2], b: f32[2]) -> f32[2]",
    "( a: f32[2]) -> f32[2]",
    "(a: f32[2] , b: f32[2]) -> f32[2]",
    "(a: (f32[2], s32[]), b: f32[2]) -> f32[2]",
    "(a: f32[2], : f32[2]) -> f32[2]",
    "(a b: f32[2]) -> f32[2]",
    "(a: f32[2]) -> f32[2] junk",
    "(a: f32[2]) ->  f32[2]",
    "(a: f32[2], b) -> f32[2]",
])
def test_the_short_reading_agrees_with_the_general_one(signature):
    for _ in range(2):  # the second time every shape is known: the short reading's case
        try:
            general = _parse_signature(signature, None, ShapeParser())
        except HloParseError as err:
            with pytest.raises(HloParseError) as got:
                parse_signature(signature)
            assert str(got.value) == str(err)
            continue
        assert parse_signature(signature) == general
