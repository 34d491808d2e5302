"""A PNG too big to write in seconds is drawn to fit 12,000 px on its longer side, says so, and
keeps the picture's shape — unless that would put its text under 8 px, when no PNG is written
and hloviz says to draw an .svg or a part (issue 33); a small one is written at full size without
a note.

Oracles: the PNG's size read from its header here (``struct``), the SVG's ``viewBox`` of the same
picture read by regex, and Graphviz's 96 pixels an inch for PNG (72 points an inch)."""

from __future__ import annotations

import re
import struct
from pathlib import Path

import pytest

from hloviz.cli import main

CAPTURES = Path(__file__).resolve().parent.parent / "samples" / "captures"
_VIEWBOX = re.compile(r'viewBox="0\.00 0\.00 ([\d.]+) ([\d.]+)"')


def _png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR"
    return struct.unpack(">II", head[16:24])


def _render(capture: str, out: Path, capsys) -> str:
    # --budget 300: the detailed picture (the default overview of issue 33 is a page, not a poster)
    code = main(["render", str(CAPTURES / capture), "--stage", "both", "--budget", "300", "-o", str(out)])
    assert code in (0, None)
    return capsys.readouterr().err


def _svg_points(capture: str, tmp_path: Path, capsys) -> tuple[float, float]:
    _render(capture, tmp_path / "x.svg", capsys)
    match = _VIEWBOX.search((tmp_path / "x.svg").read_text(encoding="utf-8"))
    assert match
    return float(match.group(1)), float(match.group(2))


def _smallest_font(capture: str, tmp_path: Path, capsys) -> float:
    _render(capture, tmp_path / "x.svg", capsys)
    return min(float(f) for f in re.findall(r'font-size="([\d.]+)"', (tmp_path / "x.svg").read_text(encoding="utf-8")))


def test_a_big_png_is_drawn_to_fit_and_keeps_its_shape_and_readable_text(tmp_path, capsys):
    # the small Keras training step side by side is about 5,300 x 10,300 pt: 13,700 px tall at
    # full size; fitted to 12,000 px its 9 pt text is still about 10.5 px
    width_pt, height_pt = _svg_points("keras_small_train_step", tmp_path, capsys)
    font = _smallest_font("keras_small_train_step", tmp_path, capsys)
    assert height_pt * 96 / 72 > 12_000 + 100
    err = _render("keras_small_train_step", tmp_path / "x.png", capsys)
    width, height = _png_size(tmp_path / "x.png")
    assert abs(max(width, height) - 12_000) <= 2
    assert width / height == pytest.approx(width_pt / height_pt, rel=0.01)
    assert f"fit 12,000 px on its longer side ({width:,} × {height:,} px)" in err
    assert font * height / height_pt >= 8  # the smallest text, in the PNG's pixels


def test_a_png_whose_text_would_be_unreadable_is_refused(tmp_path, capsys):
    """Issue 33, goal 4: ResNet50 side by side is about 11,000 x 20,000 pt; fitted to 12,000 px
    its 9 pt text would be about 5 px high. hloviz writes no PNG, says why and what to do
    instead, and exits with 2 (README, Exit codes: any error)."""
    width_pt, height_pt = _svg_points("resnet50", tmp_path, capsys)
    font = _smallest_font("resnet50", tmp_path, capsys)
    assert font * 12_000 / max(width_pt, height_pt) < 8  # the oracle: what fitting would do to it
    out = tmp_path / "x.png"
    with pytest.raises(SystemExit) as stop:
        main(["render", str(CAPTURES / "resnet50"), "--stage", "both", "--budget", "300", "-o", str(out)])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    errors = [line for line in err.splitlines() if line.startswith("hloviz: error:")]
    assert len(errors) == 1 and "under the 8 px" in errors[0] and "no PNG is written" in errors[0], err
    assert "--scope" in err and ".svg" in err
    assert not out.exists()


def test_a_small_png_is_written_at_full_size_without_a_note(tmp_path, capsys):
    width_pt, height_pt = _svg_points("fused_additions", tmp_path, capsys)
    assert max(width_pt, height_pt) * 96 / 72 < 12_000
    err = _render("fused_additions", tmp_path / "x.png", capsys)
    width, height = _png_size(tmp_path / "x.png")
    # full size: 96 px an inch (the PNG is composed from positions, the SVG stitched from its
    # columns' drawings, so their headers may sit a few points apart in height)
    assert abs(width - width_pt * 96 / 72) <= 3
    assert height == pytest.approx(height_pt * 96 / 72, rel=0.05)
    assert "px on its longer side" not in err
