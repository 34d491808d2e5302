"""The picture comparison of the picture tests (:mod:`tests.svg_meaning`) sees what a reader sees —
a lost label, frame, colour or arrow — and nothing a machine's fonts change: wider text, another
cut of a long column."""

from __future__ import annotations

import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from hloviz.cli import main

from .svg_meaning import SVG, meaning, same_size
from .test_render_readme import LAYERS_PICTURE, PICTURE, ROOT, assert_same_picture, layer_command, render_command

ET.register_namespace("", "http://www.w3.org/2000/svg")
ET.register_namespace("xlink", "http://www.w3.org/1999/xlink")


def _groups(root: ET.Element, cls: str) -> list[tuple[ET.Element, ET.Element]]:
    """(parent, group) for every ``<g class=cls>`` under ``root``."""
    return [(parent, g) for parent in root.iter() for g in parent if g.get("class") == cls]


def _title(g: ET.Element) -> str:
    return "".join(g.find(SVG + "title").itertext())  # type: ignore[union-attr]


def _edited(path: Path, edit) -> bytes:
    root = ET.fromstring(path.read_bytes())
    edit(root)
    return ET.tostring(root)


def _drop_a_box_line(root: ET.Element) -> None:
    _, node = next((p, g) for p, g in _groups(root, "node") if re.fullmatch(r"n\d+", _title(g)))
    anchor = next(el for el in node.iter() if el.find(SVG + "text") is not None)
    anchor.remove(anchor.findall(SVG + "text")[-1])


def _drop_a_frame(root: ET.Element) -> None:
    parent, cluster = _groups(root, "cluster")[-1]
    parent.remove(cluster)


def _recolour_a_box(root: ET.Element) -> None:
    shape = next(el for _, g in _groups(root, "node") if re.fullmatch(r"n\d+", _title(g))
                 for el in g.iter() if el.get("fill", "").startswith("#"))
    shape.set("fill", "#123456")


def _turn_an_arrow(root: ET.Element) -> None:
    _, edge = _groups(root, "edge")[0]
    title = edge.find(SVG + "title")
    assert title is not None and title.text
    src, dst = title.text.split("->")
    title.text = f"{dst}->{src}"


def _drop_an_arrow_label(root: ET.Element) -> None:
    _, edge = next((p, g) for p, g in _groups(root, "edge") if g.find(SVG + "text") is not None)
    edge.remove(edge.findall(SVG + "text")[0])


def _move_a_box_out_of_its_frame(root: ET.Element) -> None:
    """Shift one box far to the left: it leaves every frame it was drawn in."""
    _, node = next((p, g) for p, g in _groups(root, "node") if _title(g) == "n3")
    for shape in node.iter():
        for attr in ("points", "d"):
            if shape.get(attr):
                shape.set(attr, re.sub(r"(-?[\d.]+),", lambda m: f"{float(m[1]) - 5000},", shape.get(attr, "")))


def _widen(root: ET.Element) -> None:
    """What a wider font does: every x coordinate 15% larger, the picture as much wider."""
    for el in root.iter():
        for attr in ("points", "d"):
            if el.get(attr):
                el.set(attr, re.sub(r"(-?[\d.]+),", lambda m: f"{float(m[1]) * 1.15:.2f},", el.get(attr, "")))
        if el.get("x"):
            el.set("x", f"{float(el.get('x', '0')) * 1.15:.2f}")
        if el.get("transform", "").startswith("translate("):
            el.set("transform", re.sub(r"\((-?[\d.]+)", lambda m: f"({float(m[1]) * 1.15:.2f}", el.get("transform", "")))
    x, y, w, h = (float(n) for n in root.get("viewBox", "").split())
    root.set("viewBox", f"{x} {y} {w * 1.15:.2f} {h}")


@pytest.mark.parametrize("picture", [PICTURE, LAYERS_PICTURE], ids=["fused_additions", "layers"])
@pytest.mark.parametrize("slip", [_drop_a_box_line, _drop_a_frame, _recolour_a_box, _turn_an_arrow,
                                  _drop_an_arrow_label, _move_a_box_out_of_its_frame])
def test_a_visible_change_is_a_difference(picture, slip):
    committed = meaning(picture.read_bytes())
    assert committed.differences(meaning(_edited(picture, lambda _root: None))) == []
    assert committed.differences(meaning(_edited(picture, slip))), slip.__name__


@pytest.mark.parametrize("picture", [PICTURE, LAYERS_PICTURE], ids=["fused_additions", "layers"])
def test_wider_text_means_the_same(picture):
    committed, wider = meaning(picture.read_bytes()), meaning(_edited(picture, _widen))
    assert committed.differences(wider) == []
    assert wider.size[0] > committed.size[0] * 1.1 and same_size(committed, wider)


def test_a_picture_laid_out_another_way_is_not_the_same_size():
    committed = meaning(PICTURE.read_bytes())
    sideways = meaning(PICTURE.read_bytes())
    sideways.size = (committed.size[1], committed.size[0] * 3)
    assert not same_size(committed, sideways)


def test_the_cut_arrows_of_a_wrapped_picture_count_as_the_arrows_they_stand_for():
    """The committed layer picture is cut (``▾ part 2: mul_1.137``): the two stubs make the one
    arrow ``depthwise.45 → mul_1.137``, between the boxes of those names (by the hand-read SVG)."""
    text = LAYERS_PICTURE.read_text(encoding="utf-8")
    assert "▾ part 2: mul_1.137" in text and "▴ part 1: depthwise.45" in text
    m = meaning(text)
    ends = {name: [k for k, box in m.boxes.items() if box[1].startswith(f"{name} = ")] for name in ("depthwise.45", "mul_1.137")}
    pairs = [(a[0], a[1]) for a in m.arrows]
    assert any((s, d) in pairs for s in ends["depthwise.45"] for d in ends["mul_1.137"])
    assert not any(box[0][0][0][0] in "▾▴" for box in m.boxes.values()), "a stub is no box of its own"


def _other_font_config(tmp_path: Path) -> Path:
    """A fontconfig file that draws Helvetica, Arial and sans-serif in an installed family other
    than the one this machine picks for them, as another machine would."""
    if not shutil.which("fc-match") or not shutil.which("fc-list"):
        pytest.skip("fontconfig's fc-match / fc-list are not installed")
    picked = subprocess.run(["fc-match", "-f", "%{family[0]}", "Helvetica"], capture_output=True, text=True).stdout
    families = subprocess.run(["fc-list", ":", "family"], capture_output=True, text=True).stdout.splitlines()
    others = sorted({f.split(",")[0] for f in families} - {picked, ""}, key=lambda f: ("Sans" not in f, f))
    if not others:
        pytest.skip(f"only one font family is installed ({picked})")
    rules = "".join(f'<match target="pattern"><test qual="any" name="family"><string>{family}</string></test>'
                    f'<edit name="family" mode="assign" binding="strong"><string>{others[0]}</string></edit></match>'
                    for family in ("Helvetica", "Arial", "sans-serif"))
    conf = tmp_path / "fonts.conf"
    conf.write_text('<?xml version="1.0"?><!DOCTYPE fontconfig SYSTEM "fonts.dtd"><fontconfig>'
                    f'<include ignore_missing="yes">/etc/fonts/fonts.conf</include>{rules}</fontconfig>')
    chosen = subprocess.run(["fc-match", "-f", "%{family[0]}", "Helvetica"], capture_output=True, text=True,
                            env={"FONTCONFIG_FILE": str(conf), "PATH": "/usr/bin:/bin"}).stdout
    assert chosen == others[0], (chosen, others[0])
    return conf


@pytest.mark.requires_dot
@pytest.mark.parametrize("which", ["fused_additions", "layers"])
def test_the_readme_pictures_mean_the_same_in_another_font(tmp_path, monkeypatch, which):
    """Another machine's fonts make other bytes (other widths, another cut) and the same picture."""
    command, committed = (render_command(), PICTURE) if which == "fused_additions" else (layer_command(), LAYERS_PICTURE)
    monkeypatch.setenv("FONTCONFIG_FILE", str(_other_font_config(tmp_path)))
    argv = list(command)
    out = tmp_path / committed.name
    argv[argv.index("-o") + 1] = str(out)
    monkeypatch.chdir(ROOT)
    main(argv[1:])
    assert out.read_bytes() != committed.read_bytes(), "the other font changed nothing: this test tests nothing"
    assert_same_picture(committed, out, command)
