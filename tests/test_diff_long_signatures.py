"""Two compilations of a training step whose batch size differs: the entry signatures differ in
two of hundreds of parameters. The warning names those two, not both signatures whole (two of
4,500 characters each), and the diff picture stays one page: its header's note was one line of
9,179 characters, the picture 36,888 pt wide.

Oracles: the parameters this test changes, and the SVG's own geometry.
"""

from __future__ import annotations

import re

import pytest

import hloviz
from hloviz.analysis.diff import diff_modules
from hloviz.render.layout.dot_writer import NOTE_LINES, NOTE_WIDTH, header_rows, note_lines

from . import run_cli

WEIGHTS = 150


def _step(batch: int, *, extra: int = 0, reshaped: int = 0) -> str:
    """A module of ``WEIGHTS`` (+ ``extra``) weight parameters and a batch, each weight added to
    the batch's sum; the first ``reshaped`` weights come as ``f32[4,1]``."""
    n = WEIGHTS + extra
    lines = [f"  x = f32[{batch},4] parameter(0)", "  zero = f32[] constant(0)",
             "  total = f32[4] reduce(x, zero), dimensions={0}, to_apply=add"]
    acc = "total"
    for k in range(1, n + 1):
        if k <= reshaped:
            lines.append(f"  p{k} = f32[4,1] parameter({k})")
            lines.append(f"  w{k} = f32[4] reshape(p{k})")
        else:
            lines.append(f"  w{k} = f32[4] parameter({k})")
        lines.append(f"  s{k} = f32[4] add({acc}, w{k})")
        acc = f"s{k}"
    lines.append(f"  ROOT out = f32[4] copy({acc})")
    return ("HloModule step\n\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n\n"
            "ENTRY main {\n" + "\n".join(lines) + "\n}\n")


def test_the_warning_names_the_parameters_that_changed():
    d = diff_modules(hloviz.parse(_step(4)), hloviz.parse(_step(8)))
    assert not d.comparable and len(d.warnings) == 1
    warning = d.warnings[0]
    assert "parameter 0 f32[4,4] → f32[8,4]" in warning and f"(of {WEIGHTS + 1} parameters)" in warning
    assert len(warning) < 300 and "parameter 1 " not in warning  # the weights did not change


def test_a_changed_count_of_parameters_is_said():
    d = diff_modules(hloviz.parse(_step(4)), hloviz.parse(_step(4, extra=2)))
    assert f"{WEIGHTS + 1} parameters before, {WEIGHTS + 3} after" in d.warnings[0] and len(d.warnings[0]) < 300


def test_many_changed_parameters_are_counted_not_listed():
    d = diff_modules(hloviz.parse(_step(4)), hloviz.parse(_step(8, reshaped=5)))
    warning = d.warnings[0]
    named = re.findall(r"parameter (\d+) ", warning)
    assert named == ["0", "1", "2"] and "3 more parameters changed" in warning  # six changed in all
    assert "parameter 1 f32[4] → f32[4,1]" in warning and len(warning) < 300


@pytest.mark.requires_dot
def test_the_diff_picture_of_two_batch_sizes_is_one_page(tmp_path, capsys):
    a, b, out = tmp_path / "b4.hlo", tmp_path / "b8.hlo", tmp_path / "diff.svg"
    a.write_text(_step(4))
    b.write_text(_step(8))
    code, _, err = run_cli(["diff", str(a), str(b), "-o", str(out)], capsys)
    assert code == 0, err
    head = out.read_text(encoding="utf-8")[:3000]
    width, height = (float(v) for v in re.search(r'<svg width="([\d.]+)pt" height="([\d.]+)pt"', head).groups())
    assert max(width, height) <= 2500, (width, height)


def test_a_long_note_is_broken_into_a_few_lines_at_spaces():
    note = " ".join(f"word{k}" for k in range(2000))
    lines = note_lines(note)
    assert len(lines) == NOTE_LINES and all(len(line) <= NOTE_WIDTH for line in lines)
    assert lines[-1].endswith("…") and " ".join(lines).startswith(" ".join(lines[:-1]))
    assert all(not line.startswith(" ") and not line.endswith(" ") for line in lines)
    assert note_lines("short") == ["short"]
    middle = note_lines("a" * (NOTE_WIDTH + 10))  # no space to break at: cut at the width
    assert [len(line) for line in middle] == [NOTE_WIDTH, 10]


def test_a_pictures_header_draws_a_long_note_as_its_lines():
    note = "the entry signatures differ: " + ", ".join(f"f32[{k},64]" for k in range(400))
    rows = header_rows("step → step", [note, "a short note"])
    texts = [row.text for row in rows]
    assert texts[0] == "step → step" and texts[-1] == "a short note"
    assert texts[1:-1] == note_lines(note) and len(texts) == 2 + NOTE_LINES
