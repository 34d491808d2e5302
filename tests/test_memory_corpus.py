"""The memory estimate against XLA's own buffer assignment, on programs it was not written against.

``tests/data/memory_corpus/`` holds, for each program ``samples/memory_corpus.py`` compiles, the
optimized module XLA dumped and XLA's own records of it (``*-buffer-assignment.txt``, JAX's
``*-live-range.txt``, JAX's ``memory_analysis()``). XLA's numbers are read here with regular
expressions over those files; hloviz sees ``post.hlo.gz`` only.
"""

from __future__ import annotations

import gzip
import json
import re
import statistics
from pathlib import Path

import pytest

import hloviz
from hloviz.analysis.memory import memory_report
from hloviz.analysis.memory.estimate import CORPUS_ACCURACY

from .xla_records import most_live

CORPUS = Path(__file__).resolve().parent / "data" / "memory_corpus"
PROGRAMS = sorted(p.name for p in CORPUS.iterdir() if (p / "post.hlo.gz").is_file())

_ALLOCATION = re.compile(r"^allocation (\d+): size (\d+)(.*):$", re.MULTILINE)
_VALUE = re.compile(r"^ value: <\d+ (\S+?)(\{[\d,]*\})?(?: \(phi\))? @\d+> \(size=(\d+),offset=(\d+)\)", re.MULTILINE)


def _read(name: str, file: str) -> str:
    path = CORPUS / name / file
    return gzip.open(path, "rt", encoding="utf-8").read() if path.is_file() else ""


def _meta(name: str) -> dict:
    return json.loads((CORPUS / name / "stats.json").read_text(encoding="utf-8"))


def _xla_total(name: str) -> int:
    """XLA's total: its "Total bytes used" where the file has it, else its allocations' sum."""
    text = _read(name, "buffer-assignment.txt.gz")
    total = sum(int(m.group(2)) for m in _ALLOCATION.finditer(text))
    said = re.search(r"^Total bytes used: (\d+)", text, re.MULTILINE)
    if said:
        assert int(said.group(1)) == total
    if "total_bytes" in _meta(name):
        assert _meta(name)["total_bytes"] == total
    return total


def _estimate(name: str):
    return memory_report(hloviz.parse(_read(name, "post.hlo.gz")))


def _error(name: str) -> float:
    xla = _xla_total(name)
    return 100 * (_estimate(name).total_bytes - xla) / xla


def test_corpus_is_large_and_split_before_tuning():
    assert len(PROGRAMS) >= 30
    splits = [_meta(n)["split"] for n in PROGRAMS]
    assert {"tune", "check"} == set(splits)
    assert min(splits.count("tune"), splits.count("check")) >= len(PROGRAMS) // 3


@pytest.mark.parametrize("name", PROGRAMS)
def test_estimate_within_bounds_of_xla(name):
    """Within ±5% of XLA's total (±10% for donated / in-place steps), never more than +1% over."""
    err = _error(name)
    bound = 10.0 if _meta(name)["in_place"] else 5.0
    assert -bound <= err <= 1.0, f"{name}: {err:+.3f}%"


@pytest.mark.parametrize("name", [n for n in PROGRAMS if "memory_analysis" in _meta(n)])
def test_jax_memory_analysis_agrees_with_the_dump(name):
    """The two oracles agree: JAX's temp_size_in_bytes is the dump's preallocated temporary block."""
    text = _read(name, "buffer-assignment.txt.gz")
    temp = sum(int(m.group(2)) for m in _ALLOCATION.finditer(text) if "preallocated-temp" in m.group(3))
    assert _meta(name)["memory_analysis"]["temp_size_in_bytes"] == temp


def _xla_live(name: str) -> tuple[list[str], dict[str, tuple[int, int]]]:
    text = _read(name, "live-range.txt.gz") or _read(name, "buffer-assignment.txt.gz")
    section = text[text.index("HloLiveRange (max "):]
    sequence = re.findall(r"^    \d+:(\S+)$", section, re.MULTILINE)
    ranges = {m.group(1): (int(m.group(2)), int(m.group(3)))
              for m in re.finditer(r"^    (\S+?\{[\d,]*\}):(-?\d+)-(-?\d+)$", section, re.MULTILINE)}
    return sequence, ranges


@pytest.mark.parametrize("name", PROGRAMS)
def test_schedule_and_live_ranges_are_xlas(name):
    """The flattened schedule and every value's live range are the ones XLA's HloLiveRange lists."""
    from hloviz.analysis.memory.dataflow import analyse

    sequence, ranges = _xla_live(name)
    flow = analyse(hloviz.parse(_read(name, "post.hlo.gz")))
    assert [i.name for i in flow.sequence] == sequence
    ours = {v.key: (v.start, v.end) for b in flow.buffers for v in b.values}
    wrong = {k: (r, ours.get(k)) for k, r in ranges.items() if ours.get(k) != r}
    assert not wrong, f"{name}: {len(wrong)} of {len(ranges)} live ranges differ: {list(wrong.items())[:5]}"


@pytest.mark.parametrize("name", PROGRAMS)
def test_ten_largest_buffers_at_the_peak_are_xlas(name):
    """The 10 largest buffers hloviz lists at its peak are the 10 largest live there by XLA's own
    live ranges and sizes (ties at the tenth place either way)."""
    report = _estimate(name)
    _, ranges = _xla_live(name)
    text = _read(name, "buffer-assignment.txt.gz")
    sizes = {m.group(1) + (m.group(2) or "{}"): int(m.group(3)) for m in _VALUE.finditer(text)}
    t = report.peak.time
    live = sorted(((sizes.get(k, 0), k) for k, (s, e) in ranges.items() if s <= t <= e), reverse=True)
    ours = [(b.bytes, b.instruction + "{" + ",".join(map(str, b.index)) + "}") for b in report.buffers_at_peak]
    top = ours[:10]
    assert len(top) == min(10, len([x for x in live if x[0]]))
    tenth = top[-1][0] if top else 0
    xla_top = {k for size, k in live if size >= tenth and size}
    assert {k for _, k in top} <= xla_top, name
    assert {k for size, k in live[:10] if size > tenth} <= {k for _, k in top}, name


def test_accuracy_said_in_the_report_is_measured():
    """``memory``'s own line ("estimated: within ±N% on M programs") is the corpus' worst error."""
    errors = [_error(n) for n in PROGRAMS]
    worst = max(abs(e) for e in errors)
    assert CORPUS_ACCURACY.programs == len(PROGRAMS)
    assert CORPUS_ACCURACY.worst == round(worst, 2) or worst <= CORPUS_ACCURACY.worst < worst + 0.01
    assert CORPUS_ACCURACY.median == round(statistics.median(abs(e) for e in errors), 2)
    report = _estimate(PROGRAMS[0])
    assert f"within ±{CORPUS_ACCURACY.worst:.2f}% on {len(PROGRAMS)} programs" in report.origin


def _xla_peak(name: str) -> int:
    """The most bytes XLA's own record has live at one position: at each position, the values its
    ``HloLiveRange`` lists as live, stored where its buffer assignment put them (allocation,
    offset, size), bytes overlapping in one allocation counted once."""
    text = _read(name, "buffer-assignment.txt.gz")
    _, ranges = _xla_live(name)
    where: dict[str, tuple[int, int, int]] = {}
    for block in re.split(r"^(?=allocation \d+:)", text, flags=re.MULTILINE):
        head = _ALLOCATION.match(block)
        if head is not None:
            for v in _VALUE.finditer(block):
                where[v.group(1) + (v.group(2) or "{}")] = (int(head.group(1)), int(v.group(4)), int(v.group(3)))
    return most_live(((key, s, e) for key, (s, e) in ranges.items()), where)


@pytest.mark.parametrize("name", PROGRAMS)
def test_the_peak_is_the_most_xlas_record_has_live_at_once(name):
    """The estimate's peak (from the HLO text alone) is the most bytes XLA's own live ranges and
    buffer assignment have live at one position."""
    assert _estimate(name).peak.bytes == _xla_peak(name), name
