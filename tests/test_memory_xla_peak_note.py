"""What ``hloviz memory`` says XLA's live-range report says, XLA's report says.

XLA's ``HloLiveRange`` report names a peak position and lists the buffers live there; its list
counts twice the bytes of a slot two values share (a result written in place over its operand).
Held-out round 82's capsule network (``benchmarks/heldout/round82.py:capsnet_margin_step``, the
dump kept in ``tests/data/memory/tf_capsnet_dump``): XLA's list at position 154 adds up to
2,889,332 bytes (its "Stack trace breakdown for peak usage"), where 2,612,852 are live by its
ranges; hloviz's note read "XLA's live-range report calls position 154 the peak (2612852 bytes
live)", a figure XLA never printed.

Oracle: XLA's own dump text, read here with regular expressions.
"""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest

from tests import run_cli

DATA = Path(__file__).resolve().parent / "data" / "memory"
_NOTE = re.compile(r"XLA's live-range report calls position (\d+) the peak \((?:its list there adds up to (\d+) bytes|(\d+) bytes live)")


def _read(path: Path) -> str:
    return gzip.decompress(path.read_bytes()).decode() if path.suffix == ".gz" else path.read_text()


def _xla_peak(folder: Path) -> tuple[int, int] | None:
    """XLA's peak position and the bytes its list there adds up to, from its dump text."""
    for path in sorted(folder.iterdir()):
        if "buffer-assignment" not in path.name and "live" not in path.name.lower():
            continue
        text = _read(path)
        at = re.search(r"^  Live ranges at (\d+) \(peak\):\n((?:    .*\n)*)", text, re.MULTILINE)
        if at:
            return int(at.group(1)), sum(int(b) for b in re.findall(r"^    \S+: (\d+) bytes", at.group(2), re.MULTILINE))
    return None


def _folders() -> list[str]:
    return sorted(p.name for p in DATA.iterdir() if p.is_dir() and _xla_peak(p) is not None)


@pytest.mark.parametrize("folder", _folders())
def test_the_peak_it_attributes_to_xla_is_xlas(folder, capsys):
    time, listed = _xla_peak(DATA / folder)
    code, out, err = run_cli(["memory", str(DATA / folder), "--json"], capsys)
    assert code == 0, err
    for note in json.loads(out)["notes"]:
        said = _NOTE.search(note)
        if said:
            assert int(said.group(1)) == time, note
            assert int(said.group(2) or said.group(3)) == listed, note  # XLA's figure, whichever way it is put


def test_the_capsule_networks_note_quotes_xlas_own_figure(capsys):
    folder = DATA / "tf_capsnet_dump"
    time, listed = _xla_peak(folder)
    text = _read(next(folder.glob("*buffer-assignment.txt.gz")))
    breakdown = re.search(r"Stack trace breakdown for peak usage: ([\d ]+) bytes", text).group(1)
    assert listed == int(breakdown.replace(" ", ""))  # the list and XLA's total at its peak agree
    code, out, err = run_cli(["memory", str(folder), "--json"], capsys)
    assert code == 0, err
    report = json.loads(out)
    notes = [n for n in report["notes"] if _NOTE.search(n)]
    assert len(notes) == 1, report["notes"]
    said = _NOTE.search(notes[0])
    assert (int(said.group(1)), int(said.group(2))) == (time, listed)
    assert report["peak"]["bytes"] > 0 and report["peak"]["time"] != time  # the highest point, elsewhere
