"""The capture reads the entry computation's parameter shapes from its header line alone
(:func:`hloviz.capture.tf_graph._entry_parameter_shapes`, to name the parameters without parsing
the whole pre-optimization module, issue 32). The oracle is the full parse of the same module."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from hloviz import parse
from hloviz.capture.tf_graph import _ENTRY_LINE, _entry_parameter_shapes

SAMPLES = sorted(Path(__file__).resolve().parent.parent.glob("samples/captures/*/pre.hlo*"))


def _text(path: Path) -> str:
    return gzip.open(path, "rt").read() if path.suffix == ".gz" else path.read_text()


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.parent.name)
def test_the_header_gives_the_full_parses_parameter_shapes(path):
    text = _text(path)
    full = [p.shape.dims for p in parse(text).entry.parameters]
    fast = _entry_parameter_shapes(text)
    assert fast is not None and [s.dims for s in fast] == full


def test_the_samples_include_headers_with_index_comments_and_modules_without_a_signature():
    texts = [_text(p) for p in SAMPLES]
    headers = [m.group(1) for t in texts if (m := _ENTRY_LINE.search(t)) is not None]
    assert any("/*index=" in h for h in headers)  # TF's long parameter lists
    assert len(headers) < len(texts)  # JAX's `ENTRY main.3 {`: the whole module is parsed instead


def test_a_signature_over_several_lines_is_read_by_the_full_parse():
    text = ("HloModule m\n\nENTRY %main (a: f32[2,3],\n    b: s32[]) -> f32[2,3] {\n"
            "  %a = f32[2,3]{1,0} parameter(0)\n  %b = s32[] parameter(1)\n"
            "  ROOT %n = f32[2,3]{1,0} negate(f32[2,3]{1,0} %a)\n}\n")
    assert _ENTRY_LINE.search(text) is None
    assert [s.dims for s in _entry_parameter_shapes(text) or []] == [(2, 3), ()]
    assert _entry_parameter_shapes("not HLO at all") is None
