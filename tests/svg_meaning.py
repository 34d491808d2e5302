"""What an hloviz SVG means, read back from the SVG: for comparing a committed picture with the one
the code makes today on any machine.

Graphviz sizes every box from the text it measures with the machine's fonts (``fc-match``), so the
same code and the same Graphviz give pictures a point wider or narrower on another machine — and,
once a column is long enough for ``--wrap auto`` to cut it, cut in other places. Bytes differ;
what the picture says does not. :func:`meaning` keeps what a reader sees and drops coordinates:

- the picture's title, description and dark-theme style;
- every box (by its DOT id): its text lines with their weight, slant, size and colour, its tooltip,
  and the fill, outline and dash of its shape;
- every frame (cluster) by its label: its colours, and the boxes drawn inside it (a box is inside
  the frames whose outline holds its centre, in the picture's own coordinates);
- every arrow: its two ends, its label, its colour and dash, whether it has a head. An arrow that a
  wrapped picture cuts in two (``… ▾ part 2: NAME`` at one end, ``▴ part 1: NAME`` at the other)
  counts as the one arrow it stands for, so a picture cut in other places, or not cut, means the
  same.

Only the picture's size is geometry, compared loosely (:func:`same_size`).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

SVG = "{http://www.w3.org/2000/svg}"
XLINK = "{http://www.w3.org/1999/xlink}"
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e-?\d+)?")
_TRANSLATE = re.compile(r"translate\(\s*(-?[\d.]+)[ ,]+(-?[\d.]+)\s*\)")
_STUB = re.compile(r"^([▾▴]) part \d+: (.+)$")
_SHAPES = ("polygon", "path", "ellipse", "polyline", "rect")
_TEXT_ATTRS = ("font-family", "font-weight", "font-style", "font-size", "fill", "text-decoration")


@dataclass
class Meaning:
    """What one picture says (see the module docstring); two are equal when they say the same."""

    title: str
    desc: str
    style: str
    boxes: dict[str, tuple] = field(default_factory=dict)
    frames: dict[tuple, tuple] = field(default_factory=dict)
    arrows: list[tuple] = field(default_factory=list)
    size: tuple[float, float] = (0.0, 0.0)

    def differences(self, other: Meaning) -> list[str]:
        """What differs between ``self`` (the committed picture) and ``other`` (the one made now),
        a line each, readable in a test failure."""
        out: list[str] = []
        for what in ("title", "desc", "style"):
            if getattr(self, what) != getattr(other, what):
                out.append(f"{what}: {getattr(self, what)!r} → {getattr(other, what)!r}")
        out += _changed("box", self.boxes, other.boxes) + _changed("frame", self.frames, other.frames)
        mine, theirs = [repr(a) for a in self.arrows], [repr(a) for a in other.arrows]
        out.extend(f"arrow only in the committed picture: {a}" for a in mine if a not in theirs)
        out.extend(f"arrow only in the new picture: {a}" for a in theirs if a not in mine)
        if not out and sorted(mine) != sorted(theirs):
            out.append(f"as many arrows, counted differently: {len(mine)} → {len(theirs)}")
        return out


def _changed(what: str, mine: Mapping[Any, tuple], theirs: Mapping[Any, tuple]) -> list[str]:
    return [f"{what} {key}: {mine.get(key)} → {theirs.get(key)}"
            for key in sorted(set(mine) | set(theirs), key=str) if mine.get(key) != theirs.get(key)]


def same_size(a: Meaning, b: Meaning, tolerance: float = 0.4) -> bool:
    """Whether the two pictures are about as large: each side within ``tolerance`` (a fraction)
    of the other's. Fonts change a picture's width by a few percent and a cut by a column's; a
    picture laid out another way (left to right, a lost column) changes it by far more."""
    return all(abs(x - y) <= tolerance * max(x, y) for x, y in zip(a.size, b.size, strict=True))


def _text(el: ET.Element | None) -> str:
    return "".join(el.itertext()) if el is not None else ""


def _shape_style(el: ET.Element) -> tuple:
    return tuple((s.tag.removeprefix(SVG), s.get("fill"), s.get("stroke"), s.get("stroke-dasharray"))
                 for s in el.iter() if s.tag.removeprefix(SVG) in _SHAPES)


def _texts(el: ET.Element) -> tuple:
    return tuple((_text(t),) + tuple(t.get(a) for a in _TEXT_ATTRS) for t in el.iter(SVG + "text"))


def _tooltip(el: ET.Element) -> str:
    return next((a.get(XLINK + "title", "") for a in el.iter(SVG + "a")), "")


def _box(el: ET.Element) -> tuple[float, float, float, float]:
    """The box around the numbers of ``el``'s shapes (Graphviz writes absolute coordinates)."""
    xs: list[float] = []
    ys: list[float] = []
    for shape in el.iter():
        tag = shape.tag.removeprefix(SVG)
        if tag not in _SHAPES:
            continue
        if tag == "ellipse":
            cx, cy, rx, ry = (float(shape.get(k, "0")) for k in ("cx", "cy", "rx", "ry"))
            xs += [cx - rx, cx + rx]
            ys += [cy - ry, cy + ry]
            continue
        numbers = [float(n) for n in _NUMBER.findall(shape.get("points") or shape.get("d") or "")]
        xs += numbers[0::2]
        ys += numbers[1::2]
    if not xs:
        return (0.0, 0.0, 0.0, 0.0)
    return (min(xs), min(ys), max(xs), max(ys))


def _walk(el: ET.Element, dx: float, dy: float, found: list[tuple[str, ET.Element, float, float]]) -> None:
    """Every node, edge and cluster under ``el`` with the offset of the parts around it."""
    for child in el:
        if child.tag != SVG + "g":
            continue
        cls = child.get("class", "")
        move = _TRANSLATE.search(child.get("transform", "")) if cls == "part" else None
        x, y = (dx + float(move[1]), dy + float(move[2])) if move else (dx, dy)
        if cls in ("node", "edge", "cluster"):
            found.append((cls, child, x, y))
        else:
            _walk(child, x, y, found)


class _Reader:
    """One pass over the picture's nodes, clusters and edges, filling a :class:`Meaning`."""

    def __init__(self, root: ET.Element, m: Meaning) -> None:
        self.m = m
        self.found: list[tuple[str, ET.Element, float, float]] = []
        _walk(root, 0.0, 0.0, self.found)
        self.centres: dict[str, tuple[float, float]] = {}
        self.stubs: dict[str, tuple[str, str]] = {}
        self.names: dict[str, list[str]] = {}
        self.inside: dict[str, set[tuple]] = {}

    def of(self, cls: str) -> list[tuple[ET.Element, float, float]]:
        return [(el, dx, dy) for c, el, dx, dy in self.found if c == cls]

    def boxes(self) -> None:
        for el, dx, dy in self.of("node"):
            key = _text(el.find(SVG + "title"))
            texts = _texts(el)
            stub = _STUB.match(texts[0][0]) if len(texts) == 1 else None
            if stub:
                self.stubs[key] = (stub[1], stub[2])
            elif re.fullmatch(r"n\d+", key):  # not the "part 1 of 2" headings of a wrapped picture
                x0, y0, x1, y1 = _box(el)
                self.centres[key] = ((x0 + x1) / 2 + dx, (y0 + y1) / 2 + dy)
                self.inside[key] = set()
                tooltip = _tooltip(el)
                self.names.setdefault(tooltip.split(" = ")[0], []).append(key)
                self.m.boxes[key] = (texts, tooltip, _shape_style(el))

    def frames(self) -> None:
        for el, dx, dy in self.of("cluster"):
            label = tuple(t[0] for t in _texts(el))
            x0, y0, x1, y1 = _box(el)
            members = sorted((k for k, (x, y) in self.centres.items()
                              if x0 + dx <= x <= x1 + dx and y0 + dy <= y <= y1 + dy), key=lambda k: int(k[1:]))
            for k in members:
                self.inside[k].add(label)
            entry = (_texts(el), _shape_style(el), tuple(members))
            self.m.frames[label] = tuple(sorted({*self.m.frames.get(label, ()), entry}, key=str))

    def far_end(self, stub: str, near: str) -> str:
        """The box a cut arrow's stub names: the box of that name in the same frames as ``near``.
        A stub naming no one box by its tooltip (the overview's group boxes, ``logits,
        XLA_Retvals.103``) stands for itself, by the name it shows."""
        candidates = self.names.get(self.stubs[stub][1], [])
        if len(candidates) > 1:
            candidates = [c for c in candidates if self.inside[c] & self.inside[near]]
        return candidates[0] if len(candidates) == 1 else f"stub: {self.stubs[stub][1]}"

    def arrows(self) -> None:
        cut: dict[tuple[str, str], tuple[set, set]] = {}
        for el, _dx, _dy in self.of("edge"):
            src, dst = _text(el.find(SVG + "title")).split("->")
            if src not in self.stubs and dst not in self.stubs:
                self.m.arrows.append((src, dst, tuple(sorted(_texts(el))), tuple(sorted(set(_shape_style(el))))))
                continue
            if dst in self.stubs:
                dst = self.far_end(dst, src)
            if src in self.stubs:
                src = self.far_end(src, dst)
            texts, shapes = cut.setdefault((src, dst), (set(), set()))
            texts.update(_texts(el))
            shapes.update(_shape_style(el))
        self.m.arrows += [(src, dst, tuple(sorted(texts)), tuple(sorted(shapes)))
                          for (src, dst), (texts, shapes) in cut.items()]
        self.m.arrows.sort(key=repr)


def meaning(data: bytes | str) -> Meaning:
    """Read what the hloviz SVG ``data`` says (see the module docstring)."""
    root = ET.fromstring(data)
    hashed = next((c for c in root.get("class", "").split() if c.startswith("hz")), None)
    style = _text(root.find(SVG + "style"))
    if hashed:
        style = style.replace(hashed, "hz")
    box = [float(n) for n in root.get("viewBox", "0 0 0 0").split()]
    m = Meaning(title=_text(root.find(SVG + "title")), desc=_text(root.find(SVG + "desc")), style=style,
                size=(box[2], box[3]))
    reader = _Reader(root, m)
    reader.boxes()
    reader.frames()
    reader.arrows()
    return m
