"""Real models drawn as their layers: how long the default picture takes, and how full it is.

For each saved capture (MobileNetV2, ResNet50, a Keras transformer training step) this times
what ``hloviz render --stage both`` does after reading the capture — analysis, the two views cut
to ``--budget``, DOT, and ``dot -Tsvg`` — and prints, per budget:

* the node count of each column against the budget (the budget is meant to be used);
* the share of the model's Keras layers the picture names (layers read from the pre-optimization
  HLO's op names, ``model/<layer>_N/op``);
* seconds for the analysis (``analyze``: kernels, folding, the pre→post map), the views and
  Graphviz, their total, and each one's ratio to a reference measured in the same rounds:
  parsing the two HLO texts (machines here are noisy; the ratio travels better than the
  seconds). Target: the whole picture in ≤ 10 s.

Every round, for every budget, starts from a fresh parse of both texts with hloviz's memoising
caches emptied (``_fair.clear_caches``), so the analysis and the views pay what they pay in a
user's process, not what a warm module left behind; each figure is the best of ``--repeat``.

Run: ``python benchmarks/layers_bench.py [--budget 150 300 400] [--repeat 3] [--model NAME ...]``.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TypeVar

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import _fair  # noqa: E402

import hloviz  # noqa: E402
from hloviz.analysis import analyze  # noqa: E402
from hloviz.ir import HloModule  # noqa: E402
from hloviz.render import ViewOptions  # noqa: E402
from hloviz.render.layout.sidebyside import side_by_side  # noqa: E402
from hloviz.render.pictures import _run_dot as run_dot  # noqa: E402  (with the retry hloviz uses)

CAPTURES = ROOT / "samples" / "captures"
_T = TypeVar("_T")

MODELS = ("mobilenet_v2", "resnet50", "keras_transformer")


def best(fn: Callable[[], _T], repeat: int) -> tuple[float, _T]:
    """The fastest of ``repeat`` runs of ``fn`` (at least one) in seconds, and what the last returned."""
    times: list[float] = []
    for _ in range(max(repeat, 1) - 1):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    t = time.perf_counter()
    out = fn()
    times.append(time.perf_counter() - t)
    return min(times), out


def _parse_both(pre_text: str, post_text: str) -> tuple[HloModule, HloModule]:
    return hloviz.parse(pre_text), hloviz.parse(post_text)


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
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--budget", type=int, nargs="+", default=[150, 300, 400])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--model", nargs="+", default=list(MODELS))
    args = ap.parse_args()
    for name in args.model:
        folder = CAPTURES / name
        pre_text, post_text = (_read(folder, stage) for stage in ("pre", "post"))
        info = json.loads((folder / "capture.json").read_text())
        pre, post = _parse_both(pre_text, post_text)
        if pre.entry is None or post.entry is None:
            raise SystemExit(f"{name}: a capture without an ENTRY computation")
        layers = keras_layers(pre)
        print(f"{name}: {len(pre.entry.instructions)} + {len(post.entry.instructions)} entry instructions, "
              f"{len(layers)} Keras layers")
        for budget in args.budget:
            options = ViewOptions(budget=budget)
            ref = ana = views = math.inf
            sbs = None
            for _ in range(max(args.repeat, 1)):
                _fair.clear_caches()
                t0 = time.perf_counter()
                pre, post = _parse_both(pre_text, post_text)
                t1 = time.perf_counter()
                analysis = analyze(pre, post, info=info)
                t2 = time.perf_counter()
                sbs = side_by_side(pre, post, analysis, options=options, info=info)
                t3 = time.perf_counter()
                ref, ana, views = min(ref, t1 - t0), min(ana, t2 - t1), min(views, t3 - t2)
            assert sbs is not None
            layout, _ = best(partial(run_dot, sbs.dot, "svg", 120), 1)
            cover = len(layers & (named(sbs.pre) | named(sbs.post))) / len(layers) if layers else 0.0
            total = ana + views + layout
            print(f"  --budget {budget}: nodes {sbs.pre.nodes} + {sbs.post.nodes}, layers named {cover:.0%}; "
                  f"reference (parse both) {ref:.2f} s; analysis {ana:.2f} s ({ana / ref:.1f}× parse), "
                  f"views {views:.2f} s ({views / ref:.1f}× parse), Graphviz {layout:.2f} s "
                  f"({layout / ref:.1f}× parse), total {total:.2f} s ({total / ref:.1f}× parse)")


if __name__ == "__main__":
    main()
