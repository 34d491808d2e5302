"""The peer corpus (tests/corpus): 300 real HLO modules written by others, checked against XLA.

Each module is read by hloviz and must give XLA's computation and instruction counts (recorded
in MANIFEST.json from XLA's parser, and re-checked live against jaxlib when it is installed),
the same ops in every fusion, text that XLA's parser reads back to the same counts, and a diff
against a second parse of itself with every instruction unchanged; and every module goes through
the graph check, the analyses and the drawing.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

import hloviz

CORPUS = Path(__file__).resolve().parent / "corpus"
MANIFEST = json.loads((CORPUS / "MANIFEST.json").read_text())
ACCEPTED = [e for e in MANIFEST if e["xla_parses"]]


def _parse(entry) -> hloviz.HloModule:
    return hloviz.parse_file(CORPUS / "modules" / entry["file"])


def test_the_corpus_is_large_and_every_module_has_a_source():
    sources = {s["file"]: s for s in json.loads((CORPUS / "SOURCES.json").read_text())}
    files = {p.name for p in (CORPUS / "modules").glob("*.hlo")}
    assert len(files) >= 100 and files == set(sources) == {e["file"] for e in MANIFEST}
    for s in sources.values():
        assert s["repo"] and s["path"] and re.fullmatch(r"[0-9a-f]{40}", s["commit"])
    gpu = [f for f in files if "gpu" in sources[f]["path"]]
    assert len(gpu) >= 50


@pytest.mark.parametrize("entry", ACCEPTED, ids=lambda e: e["file"])
def test_counts_and_entry_are_xlas(entry):
    m = _parse(entry)
    assert (len(m.computations), m.instruction_count) == (entry["computations"], entry["instructions"])
    assert m.entry.name == entry["entry"]


@pytest.mark.parametrize("entry", ACCEPTED, ids=lambda e: e["file"])
def test_a_module_diffed_against_itself_is_all_unchanged(entry):
    d = hloviz.diff_modules(_parse(entry), _parse(entry))
    assert d.summary.identical and d.comparable
    assert d.summary.unchanged == d.summary.total > 0


# -- live against XLA's own parser --------------------------------------------------------------

_OPCODE = re.compile(r"=\s*(?:\(.*?\)|\S+)\s+([a-z][a-z0-9_\-]*)\(")
_CALLS = re.compile(r"\bcalls=%?([\w.\-]+)")


def _same_fusions(fusions: dict[str, Counter]) -> Counter:
    """The fusions as a multiset of their op counts (XLA renames instructions whose names collide
    with others in the module, so names are not compared)."""
    return Counter(tuple(sorted(ops.items())) for ops in fusions.values())


def _xla_fusions(module) -> dict[str, Counter]:
    """Fusion name → the opcodes of its fused computation, from XLA's own module."""
    comps = {c.name: c for c in module.computations()}
    out = {}
    for c in module.computations():
        for inst in c.instructions():
            if str(inst.opcode).endswith("kFusion"):
                called = _CALLS.search(inst.to_string())
                body = comps[called.group(1)]
                out[inst.name] = Counter(_OPCODE.search(i.to_string()).group(1) for i in body.instructions())
    return out


def _hloviz_fusions(module: hloviz.HloModule) -> dict[str, Counter]:
    return {i.name: Counter(j.opcode for j in i.called_computations[0].instructions)
            for i in module.instructions() if i.opcode == "fusion"}


@pytest.mark.requires_jax
@pytest.mark.parametrize("entry", ACCEPTED, ids=lambda e: e["file"])
def test_against_xlas_parser(entry):
    from jaxlib import _hlo

    text = (CORPUS / "modules" / entry["file"]).read_text()
    xla = _hlo.hlo_module_from_text(text)
    comps = xla.computations()
    assert (len(comps), sum(len(c.instructions()) for c in comps)) == (entry["computations"], entry["instructions"])
    ours = hloviz.parse(text, filename=entry["file"])
    # The same fusions, each with the same ops inside.
    assert _same_fusions(_hloviz_fusions(ours)) == _same_fusions(_xla_fusions(xla))
    # What hloviz prints, XLA reads back to the same module.
    again = _hlo.hlo_module_from_text(hloviz.to_text(ours)).computations()
    assert (len(again), sum(len(c.instructions()) for c in again)) == (entry["computations"], entry["instructions"])


@pytest.mark.parametrize("entry", ACCEPTED, ids=lambda e: e["file"])
def test_every_module_goes_through_the_analyses_and_the_drawing(entry):
    from hloviz.analysis.export import to_dict
    from hloviz.render import draw_module, to_dot

    m = _parse(entry)
    assert hloviz.check(m) == []
    report = to_dict(hloviz.analyze(None, m))
    assert report["kernel_count"] == len(report["kernels"])
    assert "digraph" in to_dot(draw_module(m).scene)
