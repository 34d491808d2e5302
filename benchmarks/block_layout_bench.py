"""Would laying out each block on its own, and then its parent with the block as one fixed-size
box, make a picture faster than one ``dot`` over the whole column? (Issue 20, item 4.)

For each capture and column (before / after optimization, the default ``render --stage both``
scenes), this times, interleaved and in alternating order, best of ``--repeat``:

* **whole** — one ``dot -Tjson0`` over the column, as hloviz lays a column out today;
* **one dot** — the same two rounds, but all blocks laid out by one ``dot`` (disconnected,
  so dot lays out each on its own) instead of one process each;
* **blocks** — every top-level cluster (a layer, a block, a fusion) laid out alone, the
  ``dot`` processes running at once (one per core), *then* the parent graph, in which each
  block is a box of the size its own layout gave (``fixedsize``) and every arrow into or out
  of a block ends at that box: the two rounds a composed block layout needs (the translation
  of each block's contents into its box is not counted, so this is a lower bound).

It prints both, their ratio, and how the blocks' round splits (the slowest block, the parent).
A ratio under 1 means composing blocks would pay on that input.

``--render`` times the real thing instead, end to end: ``hloviz render TARGET --stage both
--layout whole`` against ``--layout blocks`` (:mod:`hloviz.render.layout.blocklayout`), each a fresh
process as a user runs it (start, parse, analysis, views, every ``dot``, composing, writing
the SVG), interleaved and in alternating order, best of ``--repeat``, for every capture in
``samples/captures`` (``--model`` to choose) and each ``--big`` file (drawn alone, as
``render FILE``). Both pictures are also measured: crossings per arrow on the SVG's geometry
(``picture_bench.crossings``) and the size of the largest column (boxes and drawn arrows, the
figure ``auto``'s rule reads). A ratio (blocks / whole) under 1 means ``--layout blocks`` pays.

``--budget 300 900 1200`` draws each at those budgets (boxes per column; 300, the default, is
where every large model's picture is capped, and where ``auto``'s rule had to be set from
larger columns).

Run: ``python benchmarks/block_layout_bench.py [--model NAME ...] [--repeat N] [--big PATH.hlo] [--render [--budget B ...]]``.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from picture_bench import CAPTURES, crossings, read  # noqa: E402  # pyright: ignore[reportMissingImports]

import hloviz  # noqa: E402
from hloviz.analysis import analyze  # noqa: E402
from hloviz.render.layout.dot_parts import part_dot  # noqa: E402
from hloviz.render.layout.positions import read_layout  # noqa: E402
from hloviz.render.layout.runs.graphviz_run import run_dot_many  # noqa: E402
from hloviz.render.layout.sidebyside import side_by_side  # noqa: E402
from hloviz.render.scene import Cluster, Node, Row, Scene  # noqa: E402

MODELS = ("inception_v3", "densenet121", "jax_gpt_step", "keras_cnn_train", "resnet50")


def _inside(cluster: Cluster) -> list[str]:
    out, stack = [], [cluster]
    while stack:
        c = stack.pop()
        out.extend(c.nodes)
        stack.extend(c.clusters)
    return out


def block_scenes(scene: Scene) -> tuple[list[Scene], list[str]]:
    """Each top-level cluster as a scene of its own, and the keys of the placeholder boxes."""
    blocks = []
    for c in scene.clusters:
        keys = set(_inside(c))
        sub = Scene(layout=dict(scene.layout))
        sub.nodes = {k: scene.nodes[k] for k in keys}
        sub.clusters = [c]
        sub.edges = [e for e in scene.edges if e.src in keys and e.dst in keys]
        blocks.append(sub)
    return blocks, [f"\x00box {i}" for i in range(len(scene.clusters))]


def parent_scene(scene: Scene, boxes: list[str]) -> Scene:
    """The column with each top-level cluster replaced by one box (arrows redirected to it)."""
    owner = {}
    for c, box in zip(scene.clusters, boxes, strict=True):
        for k in _inside(c):
            owner[k] = box
    parent = Scene(layout=dict(scene.layout))
    for k in scene.top:
        parent.add_node(k, scene.nodes[k])
    for box in boxes:
        parent.add_node(box, Node([Row("")]))
    for e in scene.edges:
        src, dst = owner.get(e.src, e.src), owner.get(e.dst, e.dst)
        if src != dst:
            parent.edges.append(type(e)(src, dst, label=e.label, constraint=e.constraint, invisible=e.invisible))
    return parent


def _fix_sizes(text: str, ids: dict[str, tuple[float, float]]) -> str:
    """Give each placeholder box the size of its block's layout (inches), fixed."""
    def sub(m: re.Match[str]) -> str:
        w, h = ids[m.group(1)]
        return f'{m.group(1)} [shape=box, fixedsize=true, label="", width={w:.3f}, height={h:.3f}];'
    pattern = re.compile(r"^\s*(" + "|".join(map(re.escape, ids)) + r") \[.*?\];$", re.MULTILINE) if ids else None
    return pattern.sub(lambda m: "  " + sub(m), text) if pattern else text


def measure(drawing, column: int, repeat: int) -> tuple[float, float, float, float, int, float]:
    scene = drawing.columns[column][1]
    ids = drawing.fresh_ids()
    whole_text = part_dot(drawing, column, scene, ids, wrapped=True)
    blocks, boxes = block_scenes(scene)
    block_texts = [part_dot(drawing, column, b, ids, wrapped=True) for b in blocks]
    parent = parent_scene(scene, boxes)
    parent_text_0 = part_dot(drawing, column, parent, ids, wrapped=True)
    box_ids = [ids.nodes[(column, b)] for b in boxes]

    def whole() -> None:
        run_dot_many([whole_text], ("json0",), timeout=300)

    split = {"slowest": math.inf, "parent": math.inf}

    def by_blocks() -> None:
        t0 = time.perf_counter()
        outs = run_dot_many(block_texts, ("json0",), timeout=300)
        t1 = time.perf_counter()
        sizes = {}
        for ident, out in zip(box_ids, outs, strict=True):
            bb = read_layout(out[0]).bb
            sizes[ident] = (bb.width / 72, bb.height / 72)
        run_dot_many([_fix_sizes(parent_text_0, sizes)], ("json0",), timeout=300)
        t2 = time.perf_counter()
        split["slowest"] = min(split["slowest"], t1 - t0)
        split["parent"] = min(split["parent"], t2 - t1)

    # all blocks in one dot run (disconnected: dot lays each component out on its own), then
    # the parent: no process per block
    together = Scene(layout=dict(scene.layout))
    for b in blocks:
        together.nodes.update(b.nodes)
        together.clusters.extend(b.clusters)
        together.edges.extend(b.edges)
    together_text = part_dot(drawing, column, together, ids, wrapped=True)

    def batched() -> None:
        out = run_dot_many([together_text], ("json0",), timeout=300)[0][0]
        layout = read_layout(out)
        sizes = {}
        for ident, b in zip(box_ids, blocks, strict=True):
            bb = layout.clusters.get(ids.clusters[(column, b.clusters[0].key)], {}).get("bb", "0,0,72,72")
            x0, y0, x1, y1 = (float(v) for v in bb.split(","))
            sizes[ident] = ((x1 - x0) / 72, (y1 - y0) / 72)
        run_dot_many([_fix_sizes(parent_text_0, sizes)], ("json0",), timeout=300)

    best = {"whole": math.inf, "blocks": math.inf, "batched": math.inf}
    ways = {"whole": whole, "blocks": by_blocks, "batched": batched}
    for r in range(max(1, repeat)):
        for name in (list(ways) if r % 2 == 0 else list(ways)[::-1]):
            t0 = time.perf_counter()
            ways[name]()
            best[name] = min(best[name], time.perf_counter() - t0)
    return best["whole"], best["blocks"], split["slowest"], split["parent"], len(blocks), best["batched"]


def _largest_column(args: list[str], budget: int) -> tuple[int, int, int]:
    """(boxes, drawn arrows, blocks) of the picture's largest column, from the scenes ``render``
    draws (``--layout`` does not change them)."""
    from hloviz.render.layout.blocklayout import split_column
    from hloviz.render.views import ViewOptions

    options = ViewOptions(budget=budget)

    if len(args) == 1:
        from hloviz.render.views import draw_module

        scenes = [draw_module(hloviz.parse(Path(args[0]).read_text()), options=options).scene]
    else:
        folder = Path(args[0])
        pre, post = hloviz.parse(read(folder, "pre")), hloviz.parse(read(folder, "post"))
        info_path = folder / "capture.json"
        info = json.loads(info_path.read_text()) if info_path.exists() else None
        drawing = side_by_side(pre, post, analyze(pre, post, info=info), info=info, options=options).drawing
        scenes = [sc for _, sc in drawing.columns] if drawing is not None else []
    best = (0, 0, 0)
    for sc in scenes:
        split = split_column(sc)
        size = (len(sc.nodes), sum(1 for e in sc.edges if not e.invisible), len(split.blocks) if split else 0)
        best = max(best, size)
    return best


def render_both(args: list[str], repeat: int, out: Path) -> dict[str, float]:
    """Best wall time of ``hloviz render ARGS --layout MODE -o OUT/MODE.svg``, fresh processes,
    interleaved in alternating order."""
    best = {"whole": math.inf, "blocks": math.inf}
    for r in range(max(1, repeat)):
        for mode in (("whole", "blocks") if r % 2 == 0 else ("blocks", "whole")):
            argv = [sys.executable, "-m", "hloviz", "render", *args, "--layout", mode, "-o", str(out / f"{mode}.svg")]
            t0 = time.perf_counter()
            subprocess.run(argv, check=True, capture_output=True, cwd=ROOT)
            best[mode] = min(best[mode], time.perf_counter() - t0)
    return best


def render_main(a: argparse.Namespace) -> int:
    jobs = [(f.name, [str(f), "--stage", "both"]) for f in sorted(CAPTURES.iterdir())
            if (f / "capture.json").exists() and (a.model is None or f.name in a.model)]
    jobs += [(p.name, [str(p)]) for p in a.big]
    jobs = [(f"{name} --budget {b}" if b != 300 else name, [*args, "--budget", str(b)], b)
            for b in a.budget for name, args in jobs]
    print(f"{'picture':<28} {'boxes':>6} {'arrows':>6} {'blocks':>6} {'whole s':>8} {'blocks s':>9} {'ratio':>6} "
          f"{'cross/arrow whole':>17} {'blocks':>7}")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        for name, args, budget in jobs:
            try:
                boxes, arrows, blocks = _largest_column(args[:-2], budget)
                best = render_both(args, a.repeat, out)
            except subprocess.CalledProcessError as err:
                print(f"{name:<28} failed: {err.stderr.decode()[-200:]}", flush=True)
                continue
            cross = []
            for mode in ("whole", "blocks"):
                count, drawn = crossings((out / f"{mode}.svg").read_text())
                cross.append(count / max(drawn, 1))
            print(f"{name[:28]:<28} {boxes:6d} {arrows:6d} {blocks:6d} {best['whole']:8.2f} {best['blocks']:9.2f} "
                  f"{best['blocks'] / best['whole']:6.2f} {cross[0]:17.2f} {cross[1]:7.2f}", flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").partition("\n")[0])
    ap.add_argument("--model", nargs="*", default=None)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--big", type=Path, action="append", default=[],
                    help="an optimized-HLO file drawn alone (the 300k-instruction module of benchmarks/_gen_transformer.py)")
    ap.add_argument("--budget", type=int, nargs="*", default=[300],
                    help="with --render: render's --budget (boxes per column) to draw at, each in turn")
    ap.add_argument("--render", action="store_true",
                    help="time `hloviz render` end to end with --layout whole against --layout blocks")
    a = ap.parse_args(argv)
    if a.render:
        return render_main(a)
    a.model = a.model if a.model is not None else list(MODELS)
    print(f"{'model':<16} {'column':<7} {'blocks':>6} {'whole s':>8} {'blocks s':>9} {'ratio':>6} "
          f"{'round 1 s':>9} {'parent s':>8} {'one dot s':>9} {'ratio':>6}")
    for name in a.model:
        folder = CAPTURES / name
        if not folder.exists():
            continue
        pre, post = hloviz.parse(read(folder, "pre")), hloviz.parse(read(folder, "post"))
        info_path = folder / "capture.json"
        info = json.loads(info_path.read_text()) if info_path.exists() else None
        drawing = side_by_side(pre, post, analyze(pre, post), info=info).drawing
        assert drawing is not None
        for column, label in ((0, "pre"), (1, "post")):
            whole, blocks, slowest, parent, count, batched = measure(drawing, column, a.repeat)
            print(f"{name:<16} {label:<7} {count:6d} {whole:8.2f} {blocks:9.2f} {blocks / whole:6.2f} "
                  f"{slowest:9.2f} {parent:8.2f} {batched:9.2f} {batched / whole:6.2f}", flush=True)
    for path in a.big:
        from hloviz.render.layout.dot import to_drawing
        from hloviz.render.views import draw_module

        drawing = to_drawing(draw_module(hloviz.parse(path.read_text())).scene)
        whole, blocks, slowest, parent, count, batched = measure(drawing, 0, a.repeat)
        print(f"{path.name[:16]:<16} {'post':<7} {count:6d} {whole:8.2f} {blocks:9.2f} {blocks / whole:6.2f} "
              f"{slowest:9.2f} {parent:8.2f} {batched:9.2f} {batched / whole:6.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
