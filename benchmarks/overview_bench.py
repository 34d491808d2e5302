"""Does the default picture of each real model read at a glance? (issue 33's goals, measured.)

For each saved capture this runs ``hloviz render CAPTURE --stage both -o x.svg`` as a user does
(a fresh process, timed wall-clock) once with the default budget (the overview) and once with
``--budget 300`` (the detailed picture that was the default before), interleaved, and measures
each SVG on its own geometry:

* **canvas** — width × height in points, from the ``viewBox``; goal: longer side ≤ 2,500 pt;
* **boxes** — drawn nodes with an outline (a ``<g class="node">`` holding a polygon or path; the
  text-only "part k of n" titles are not boxes), and **max/col** the most boxes in one laid-out
  column (a ``<g class="part">`` of a composed picture); goal: ≤ 40 a column;
* **cover** — the boxes' area (their outlines' bounding boxes) over the canvas's; goal ≥ 8%;
* **x/arrow** — crossing points per drawn arrow (:func:`picture_bench.crossings`); goal ≤ 0.1;
* **font** — the smallest label font size in points (SVG ``font-size``) and how many labels are
  under 10 pt; goal: none;
* **s** — wall time of the command; goal ≤ 2 s (this machine is shared and loaded: compare the
  two columns, measured in the same run, rather than the seconds).

The diff pictures are measured the same way: ``hloviz diff A B -o x.svg`` (the overview of both
modules) against ``--budget 300``, for each pair of :data:`DIFFS`.

Run: ``python benchmarks/overview_bench.py [--model NAME ...] [--diff A:B ...] [--no-diffs] [--out FILE]``.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from picture_bench import crossings, shifts  # noqa: E402

CAPTURES = ROOT / "samples" / "captures"
MODELS = ("inception_v3", "densenet121", "mobilenet_v2", "efficientnet_b0", "resnet50", "convnext_tiny",
          "keras_cnn_train", "transformer_train-tf2.21", "flax_train_step", "jax_gpt_step12",
          "mobilenet_v3_adam", "cnn_adam", "cnn_sgd", "loops_vit_train", "keras_small_train_step", "keras_autonamed")
#: The diff pairs of samples/captures (before, after): the same function under two releases, or
#: two variants of one model.
DIFFS = (("fused_additions-tf2.17", "fused_additions-tf2.21"), ("matmul_chain-tf2.17", "matmul_chain-tf2.21"),
         ("transformer_train-tf2.17", "transformer_train-tf2.21"), ("widen_64", "widen_96"),
         ("resblock_relu", "resblock_gelu"), ("loops_vit", "loops_vit_relu"))

_VIEWBOX = re.compile(r'viewBox="([-\d.]+) ([-\d.]+) ([\d.]+) ([\d.]+)"')
_NODE = re.compile(r'<g id="node\d+" class="node">(.*?)</g>', re.DOTALL)
_SHAPE = re.compile(r'<(?:polygon|path)[^>]*?(?:points|d)="([^"]+)"')
_NUM = re.compile(r"-?\d+(?:\.\d+)?")
_FONT = re.compile(r'font-size="([\d.]+)"')
#: a column's cluster: its outline, then its heading (``before: …``/``after: …`` in a diff,
#: ``before optimization``/``after optimization`` side by side)
_COLUMN = re.compile(r'<g id="clust\d+" class="cluster">\s*<title>[^<]*</title>\s*<(?:polygon|path)[^>]*?(?:points|d)="([^"]+)"'
                     r'[^>]*>\s*<text[^>]*>(?:before|after)\b')


@dataclass
class Measure:
    width: float
    height: float
    boxes: int
    max_per_column: int
    cover: float
    crossings: int
    arrows: int
    min_font: float
    small_labels: int
    seconds: float

    @property
    def per_arrow(self) -> float:
        return self.crossings / self.arrows if self.arrows else 0.0


def measure(svg: str, seconds: float) -> Measure:
    """The goals' figures of one SVG (see the module docstring)."""
    import bisect

    m = _VIEWBOX.search(svg)
    assert m is not None, "no viewBox"
    width, height = float(m.group(3)), float(m.group(4))
    starts, _moves = shifts(svg)
    area = 0.0
    columns: dict[int, list[tuple[float, float]]] = {}  # part → its columns' x ranges, where it has two
    for c in _COLUMN.finditer(svg):
        xs = [float(x) for x in _NUM.findall(c.group(1))][0::2]
        columns.setdefault(bisect.bisect_right(starts, c.start()) - 1, []).append((min(xs), max(xs)))
    per_part: dict[tuple[int, int], int] = {}
    boxes = 0
    for node in _NODE.finditer(svg):
        shape = _SHAPE.search(node.group(1))
        if shape is None:
            continue
        nums = [float(x) for x in _NUM.findall(shape.group(1))]
        xs, ys = nums[0::2], nums[1::2]
        if not xs or not ys:
            continue
        boxes += 1
        area += (max(xs) - min(xs)) * (max(ys) - min(ys))
        part = bisect.bisect_right(starts, node.start()) - 1
        # columns laid out in one run (a diff's tied columns) share a part: tell them apart by x
        centre = (max(xs) + min(xs)) / 2
        shared = columns.get(part, []) if len(columns.get(part, [])) > 1 else []
        column = next((i for i, (x0, x1) in enumerate(shared) if x0 <= centre <= x1), -1)
        per_part[(part, column)] = per_part.get((part, column), 0) + 1
    fonts = [float(f) for f in _FONT.findall(svg)]
    cross, arrows = crossings(svg)
    return Measure(width, height, boxes, max(per_part.values(), default=0), area / (width * height) if width * height else 0.0,
                   cross, arrows, min(fonts, default=0.0), sum(f < 10 for f in fonts), seconds)


def draw(model: str, out: Path, extra: list[str]) -> tuple[str, float]:
    """``render MODEL --stage both`` (or, for a pair ``A:B``, ``diff A B``) into ``out``, timed."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    if ":" in model:
        a, b = model.split(":", 1)
        cmd = [sys.executable, "-m", "hloviz", "diff", str(CAPTURES / a), str(CAPTURES / b), "-o", str(out), *extra]
    else:
        cmd = [sys.executable, "-m", "hloviz", "render", str(CAPTURES / model), "--stage", "both", "-o", str(out),
               *extra]
    t0 = time.perf_counter()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    seconds = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return out.read_text(), seconds


def row(name: str, label: str, m: Measure) -> str:
    return (f"{name:<44} {label:<9} {m.width:>7,.0f} × {m.height:<7,.0f} {m.boxes:>5} {m.max_per_column:>7} "
            f"{100 * m.cover:>6.1f}% {m.per_arrow:>8.3f} {m.min_font:>5.1f} {m.small_labels:>6} {m.seconds:>6.1f}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", action="append", help="a capture under samples/captures (default: a set of real models)")
    ap.add_argument("--out", type=Path, help="also write the table here")
    ap.add_argument("--keep", type=Path, help="keep the SVGs in this folder")
    ap.add_argument("--diff", action="append", metavar="A:B", help="a diff pair of captures (default: DIFFS)")
    ap.add_argument("--no-diffs", action="store_true", help="measure the render pictures only")
    args = ap.parse_args()
    models = args.model or ([] if args.diff else [m for m in MODELS if (CAPTURES / m).exists()])
    if not args.no_diffs:
        models += args.diff or ([] if args.model else [f"{a}:{b}" for a, b in DIFFS
                                                       if (CAPTURES / a).exists() and (CAPTURES / b).exists()])
    head = (f"{'model':<44} {'picture':<9} {'canvas (pt)':^17} {'boxes':>5} {'max/col':>7} {'cover':>7} "
            f"{'x/arrow':>8} {'font':>5} {'<10pt':>6} {'s':>6}")
    lines = [head, "-" * len(head)]
    print(head, flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        for model in models:
            for label, extra in (("overview", []), ("--budget 300", ["--budget", "300"])):
                # (a model given as a path is named by its folders: written inside ``folder``, not beside it)
                safe = model.replace(":", "--").replace("/", "_")
                out = folder / f"{safe}-{'overview' if not extra else 'b300'}.svg"
                svg, seconds = draw(model, out, extra)
                name = "diff " + model.replace(":", " ").replace("-tf", "@") if ":" in model else model
                line = row(name, label.replace("--budget ", "b"), measure(svg, seconds))
                print(line, flush=True)
                lines.append(line)
    goals = ("goals (issue 33, the overview): longer side ≤ 2,500 pt, ≤ 40 boxes a column, cover ≥ 8%, "
             "≤ 0.1 crossings an arrow, no label under 10 pt, ≤ 2 s")
    lines.append(goals)
    if args.out:
        args.out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
