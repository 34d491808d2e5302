"""The overview draws a while loop's condition and body under the loop, and the loop's results
under its body: the order the program runs them in (issue 33: the loop captures' bodies stood
beside their loop, 2,763–2,901 pt wide).

Oracles outside the renderer: which instructions are the loop's condition, its body and its
users, from regexes over the capture's HLO text (``while(…), condition=%C, body=%B``, the
computations' instruction lines, what each calls); where they are drawn, from the SVG's own
geometry (each node's outline, found by the instruction name its tooltip starts with).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hloviz.cli import main

CAPTURES = Path(__file__).resolve().parent.parent / "samples" / "captures"

pytestmark = pytest.mark.requires_dot

_HEAD = re.compile(r"^(?:ENTRY\s+)?%?([\w.\-]+)\s*(?:\(.*)?\{\s*$")
_INST = re.compile(r"^\s*(?:ROOT\s+)?%?([\w.\-]+)\s*=")
_CALLS = re.compile(r"(?:condition|body|calls|to_apply|branch_computations)=\{?%?([\w.\-]+)")
_WHILE = re.compile(r"^\s*(?:ROOT\s+)?%?([\w.\-]+)\s*=.*\bwhile\(.*condition=%?([\w.\-]+), body=%?([\w.\-]+)")
_NODE = re.compile(r'<g id="node\d+" class="node">.*?xlink:title="([^"=\s]+) =.*?points="([^"]+)"', re.DOTALL)
_NUM = re.compile(r"-?\d+(?:\.\d+)?")


def _computations(text: str) -> tuple[dict[str, list[str]], dict[str, set[str]], str]:
    """Computation → its instruction lines; → the computations its instructions call; the entry."""
    lines: dict[str, list[str]] = {}
    calls: dict[str, set[str]] = {}
    entry, current = "", None
    for line in text.splitlines():
        head = _HEAD.match(line)
        if head:
            current = head.group(1)
            lines[current], calls[current] = [], set()
            if line.startswith("ENTRY"):
                entry = current
        elif current is not None and _INST.match(line):
            lines[current].append(line)
            calls[current].update(_CALLS.findall(line))
    return lines, calls, entry


def _names(comp: str, lines: dict[str, list[str]], calls: dict[str, set[str]]) -> set[str]:
    """The instructions of ``comp`` and of everything it calls (fusions, nested loops)."""
    out, todo, seen = set(), [comp], set()
    while todo:
        c = todo.pop()
        if c in seen or c not in lines:
            continue
        seen.add(c)
        out.update(m.group(1) for m in map(_INST.match, lines[c]) if m)
        todo.extend(calls[c])
    return out


def _boxes(svg: str) -> dict[str, tuple[float, float]]:
    """Instruction name → (top, bottom) of its node in SVG coordinates (y grows downwards)."""
    out = {}
    for name, points in _NODE.findall(svg):
        ys = [float(v) for v in _NUM.findall(points)][1::2]
        out[name] = (min(ys), max(ys))
    return out


CASES = [("loops_newton", "pre"), ("loops_newton", "post"), ("loops_rnn_scan", "pre"),
         ("loops_rnn_scan", "post"), ("tf_scan", "post")]


@pytest.mark.parametrize(("capture", "stage"), CASES)
def test_a_loops_condition_and_body_hang_under_it(capture, stage, tmp_path):
    text = (CAPTURES / capture / f"{stage}.hlo").read_text(encoding="utf-8")
    lines, calls, entry = _computations(text)
    loops = [m.groups() for m in map(_WHILE.match, lines[entry]) if m]
    assert loops, "the entry runs a while loop"
    out = tmp_path / "x.svg"
    try:
        code = main(["render", str(CAPTURES / capture), "--stage", stage, "-o", str(out)])
    except SystemExit as stop:
        code = stop.code
    assert code in (0, None)
    boxes = _boxes(out.read_text(encoding="utf-8"))
    checked = 0
    for loop, cond, body in loops:
        if loop not in boxes:
            continue
        drawn_cond = [boxes[n] for n in _names(cond, lines, calls) if n in boxes]
        drawn_body = [boxes[n] for n in _names(body, lines, calls) if n in boxes]
        if not drawn_body:
            continue  # the body folded into the loop's node
        users = [m.group(1) for m in map(_INST.match, lines[entry])
                 if m and re.search(rf"[(,]\s*%?{re.escape(loop)}[,)]", m.string)]
        drawn_users = [boxes[n] for n in users if n in boxes]
        loop_bottom = boxes[loop][1]
        assert all(top > loop_bottom for top, _ in drawn_cond + drawn_body), (loop, "a body node above its loop")
        if drawn_cond:
            assert min(t for t, _ in drawn_body) > max(b for _, b in drawn_cond), (loop, "the body beside its condition")
        assert all(top > max(b for _, b in drawn_body) for top, _ in drawn_users), (loop, "a result beside the body")
        checked += 1
    assert checked, "no loop with its body drawn open"
