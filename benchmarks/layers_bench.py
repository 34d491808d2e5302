"""Real models drawn as their layers: how long the default picture takes, and how full it is.

For each saved capture (MobileNetV2, ResNet50, a Keras transformer training step) this times
what ``hloviz render --stage both`` does after reading the capture — analysis, the two views cut
to ``--budget``, DOT, and ``dot -Tsvg`` — and prints, per budget:

* the node count of each column against the budget (the budget is meant to be used);
* the share of the model's Keras layers the picture names (layers read from the pre-optimization
  HLO's op names, ``model/<layer>_N/op``);
* seconds for the views and for Graphviz, and their ratio to a reference measured in the same
  run: parsing the two HLO texts (machines here are noisy; the ratio travels better than the
  seconds). Target: the whole picture in ≤ 10 s.

Run: ``python benchmarks/layers_bench.py [--budget 150 300 400] [--repeat 3] [--model NAME ...]``.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import hloviz  # noqa: E402
from hloviz.analysis import analyze  # noqa: E402
from hloviz.render import ViewOptions  # noqa: E402
from hloviz.render.pictures import _run_dot as run_dot  # noqa: E402  (with the retry hloviz uses)
from hloviz.render.sidebyside import side_by_side  # noqa: E402

CAPTURES = ROOT / "samples" / "captures"
MODELS = ("mobilenet_v2", "resnet50", "keras_transformer")


def best(fn, repeat: int):
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), out


def _read(folder: Path, stage: str) -> str:
    plain = folder / f"{stage}.hlo"
    if plain.exists():
        return plain.read_text()
    import gzip

    return gzip.decompress((folder / f"{stage}.hlo.gz").read_bytes()).decode("utf-8")


def keras_layers(module) -> set[str]:
    out = set()
    for inst in module.instructions():
        parts = inst.metadata.op_name.split("/")
        if len(parts) >= 3 and not parts[0].startswith("XLA"):
            out.add(re.sub(r"_\d+$", "", parts[1]))
    return out


def named(view) -> set[str]:
    rows = [r.text for n in view.scene.nodes.values() for r in n.rows]
    rows += [r.text for c in view.scene.all_clusters() for r in c.rows]
    return {w for text in rows for w in re.split(r"[\s/·:,()]+", text)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--budget", type=int, nargs="+", default=[150, 300, 400])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--model", nargs="+", default=list(MODELS))
    args = ap.parse_args()
    for name in args.model:
        folder = CAPTURES / name
        pre_text, post_text = (_read(folder, stage) for stage in ("pre", "post"))
        ref, (pre, post) = best(lambda: (hloviz.parse(pre_text), hloviz.parse(post_text)), args.repeat)
        info = json.loads((folder / "capture.json").read_text())
        analysis = analyze(pre, post, info=info)
        layers = keras_layers(pre)
        print(f"{name}: {len(pre.entry.instructions)} + {len(post.entry.instructions)} entry instructions, "
              f"{len(layers)} Keras layers; reference (parse both texts): {ref:.2f} s")
        for budget in args.budget:
            options = ViewOptions(budget=budget)
            views, sbs = best(lambda: side_by_side(pre, post, analysis, options=options, info=info), args.repeat)
            layout, _ = best(lambda: run_dot(sbs.dot, "svg", 120), 1)
            cover = len(layers & (named(sbs.pre) | named(sbs.post))) / len(layers) if layers else 0.0
            print(f"  --budget {budget}: nodes {sbs.pre.nodes} + {sbs.post.nodes}, layers named {cover:.0%}; "
                  f"views {views:.2f} s ({views / ref:.1f}× parse), Graphviz {layout:.2f} s "
                  f"({layout / ref:.1f}× parse), total {views + layout:.2f} s")


if __name__ == "__main__":
    main()
