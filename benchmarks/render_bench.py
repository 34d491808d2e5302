"""How long a picture takes: hloviz against TensorFlow's own graph dump, in the same run.

1. The seed (``samples/fused_additions.py:fused_additions``, 1000 chained adds on
   f32[100000000]; its optimized module is one fusion of 1003 instructions). TensorFlow
   compiles it once (not counted); then, from the texts in hand, the same graph drawn both ways:

   * hloviz: the post-optimization HLO text → parse → view of **every instruction** (chains
     expanded, no collapsing, no layers: the 1003 nodes TF's dump has too) → DOT → ``dot -Tsvg``;
   * reference: TF's ``optimized_hlo_dot`` (``fn.experimental_get_compiler_ir(*specs)(
     stage="optimized_hlo_dot")``), the same instructions, through ``dot -Tsvg``, stopped at
     ``--bound`` seconds and then counted as "> BOUND s".

   ``--repeat`` rounds, each running both sides, the order alternating from round to round;
   best and median of each, and their ratio. The default picture (what ``hloviz render``
   draws: the chain collapsed into a handful of nodes) is timed in the same rounds and printed
   apart, as what a user waits for — it is not the same work as TF's dump, so it gets no ratio.
   Target: hloviz's full graph ≤ 2 s.

2. A large module (default overview, every step from parsed module to SVG; parsing is timed
   apart): the benchmark data's large module when ``benchmarks/_data.py`` provides
   ``ensure_large_module()``, else a synthetic model-shaped module of ~300k instructions from
   ``tests/render_samples.py`` (and the script says so). No tool draws this module to compare
   with, so these are hloviz's own times (best and median of ``--repeat``). Target: ≤ 10 s.

Run: ``python benchmarks/render_bench.py [--bound 120] [--repeat 3] [--skip-tf]``. Wall times.
"""

from __future__ import annotations

import argparse
import importlib
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import hloviz  # noqa: E402
from hloviz.render import Picture, module_picture  # noqa: E402
from hloviz.render.layout.runs.graphviz_run import find_dot  # noqa: E402
from hloviz.render.views import ViewOptions  # noqa: E402

_T = TypeVar("_T")


def timed(fn: Callable[[], _T]) -> tuple[float, _T]:
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def summary(times: list[float]) -> str:
    """Best and median of ``times`` (seconds), and every run."""
    return f"best {min(times):.2f} s, median {statistics.median(times):.2f} s  (" + \
        ", ".join(f"{t:.2f}" for t in times) + ")"


def seed_texts() -> tuple[str, str, str]:
    """The seed's pre- and post-optimization HLO and TF's optimized_hlo_dot, from one compile."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf

    sys.path.insert(0, str(ROOT / "samples"))
    sample = importlib.import_module("fused_additions")  # samples/ is on the path only from here on

    specs = [tf.TensorSpec([100_000_000], tf.float32), tf.TensorSpec([], tf.float32)]
    ir = sample.fused_additions.experimental_get_compiler_ir(*specs)
    return ir(stage="hlo"), ir(stage="optimized_hlo"), ir(stage="optimized_hlo_dot")


def tf_dot_seconds(dot_text: str, bound: float) -> float | None:
    """Seconds ``dot -Tsvg`` takes on TF's DOT, or None when it passed ``bound``."""
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "tf.dot"
        src.write_text(dot_text)
        started = time.perf_counter()
        proc = subprocess.Popen([find_dot(), "-Tsvg", str(src), "-o", str(Path(tmp) / "tf.svg")],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            proc.wait(timeout=bound)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            proc.wait()
            return None
        return time.perf_counter() - started


def bench_seed(bound: float, repeat: int) -> None:
    print("== seed: samples/fused_additions.py:fused_additions (post-optimization picture)")
    t = time.perf_counter()
    pre_text, post_text, tf_dot = seed_texts()
    print(f"   TensorFlow import + compile: {time.perf_counter() - t:.1f} s (not counted)")
    tf_nodes = sum(1 for name in re.findall(r'^\s*"?([\w.]+)"?\s*\[', tf_dot, re.MULTILINE)
                   if name not in ("node", "edge", "graph"))
    print(f"   TF optimized_hlo_dot: {len(tf_dot.splitlines())} lines, {len(tf_dot) // 1024} KiB, {tf_nodes} nodes")
    every = ViewOptions(expand_chains=True, budget=10**6, layers=False)

    def full() -> Picture:
        return module_picture(hloviz.parse(post_text), options=every, timeout=bound)

    def default() -> Picture:
        return module_picture(hloviz.parse(post_text), timeout=bound)

    ours: list[float] = []
    theirs: list[float | None] = []
    usual: list[float] = []
    pic = None
    for k in range(repeat):  # interleaved, the order alternating from round to round
        for side in (("hloviz", "tf") if k % 2 == 0 else ("tf", "hloviz")):
            if side == "hloviz":
                secs, pic = timed(full)
                ours.append(secs)
                usual.append(timed(default)[0])
            else:
                theirs.append(tf_dot_seconds(tf_dot, bound))
    assert pic is not None
    drawn = pic.views[0][1].nodes
    print(f"   hloviz, every instruction (parse + view + dot -Tsvg): {summary(ours)}; {drawn} nodes, "
          f"{len(pic.data) // 1024} KiB SVG   [target <= 2 s]")
    for note in pic.notes:
        print(f"     note: {note}")
    finished = [t for t in theirs if t is not None]
    stopped = len(theirs) - len(finished)
    if drawn < tf_nodes // 2:  # Graphviz gave up on the full graph and hloviz drew a coarser one
        print(f"   hloviz's full graph did not finish either: it fell back to {drawn} nodes (see the note), so "
              "its time is not the same work as TF's and gets no ratio")
        print(f"   TF optimized_hlo_dot | dot -Tsvg: {stopped} of {len(theirs)} runs stopped at {bound:g} s"
              + (f"; the others: {summary(finished)}" if finished else ""))
    elif stopped:
        print(f"   TF optimized_hlo_dot | dot -Tsvg: {stopped} of {len(theirs)} runs stopped at {bound:g} s"
              + (f"; the others: {summary(finished)}" if finished else ""))
        print(f"   ratio: hloviz is more than {bound / statistics.median(ours):.0f}x faster (bound / hloviz's median)")
    else:
        print(f"   TF optimized_hlo_dot | dot -Tsvg: {summary(finished)}")
        print(f"   ratio TF / hloviz: {min(finished) / min(ours):.1f}x (best), "
              f"{statistics.median(finished) / statistics.median(ours):.1f}x (median)")
    print(f"   hloviz's default picture (chain collapsed; not the same work, no ratio): {summary(usual)}")
    from hloviz.analysis import analyze
    from hloviz.render import pair_picture

    def pair() -> bytes:
        pre, post = hloviz.parse(pre_text), hloviz.parse(post_text)
        return pair_picture(pre, post, analyze(pre, post), timeout=bound).data

    pairs = [timed(pair)[0] for _ in range(repeat)]
    print(f"   hloviz side by side (parse both + analysis + dot -Tsvg), what `show` draws: {summary(pairs)}")


def large_module() -> tuple[str, str]:
    """(HLO text, where it came from)."""
    try:
        sys.path.insert(0, str(ROOT / "benchmarks"))
        from _data import ensure_large_module  # type: ignore[import-not-found]
    except ImportError:
        ensure_large_module = None
    if ensure_large_module is not None:
        path = Path(ensure_large_module())
        return hloviz.parser.read_text(path), f"benchmarks/_data.py: {path.name}"
    sys.path.insert(0, str(ROOT / "tests"))
    layered_module = importlib.import_module("render_samples").layered_module  # tests/ is on the path from here on

    return layered_module(5000, with_while=True), ("SYNTHETIC (benchmarks/_data.py has no ensure_large_module): "
                                                   "tests/render_samples.py layered_module(5000)")


def bench_large(repeat: int) -> None:
    text, where = large_module()
    print(f"== large module: {where}")
    t = time.perf_counter()
    module = hloviz.parse(text)
    print(f"   {module.instruction_count} instructions; parse {time.perf_counter() - t:.2f} s (not counted)")
    runs = [timed(lambda: module_picture(module)) for _ in range(repeat)]
    pic = runs[-1][1]
    print(f"   hloviz default overview (view + dot -Tsvg): {summary([t for t, _ in runs])}, "
          f"{pic.views[0][1].nodes} nodes   [target <= 10 s]")
    for note in pic.notes:
        print(f"     note: {note}")
    sys.path.insert(0, str(ROOT / "tests"))
    flat_module = importlib.import_module("render_samples").flat_module

    flat = hloviz.parse(flat_module(21500))
    runs = [timed(lambda: module_picture(flat)) for _ in range(repeat)]
    print(f"== flat module (pre-optimization shape, no fusions): {flat.instruction_count} instructions")
    print(f"   hloviz default overview (view + dot -Tsvg): {summary([t for t, _ in runs])}, "
          f"{runs[-1][1].views[0][1].nodes} nodes   [target <= 10 s]")


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").partition("\n")[0])
    ap.add_argument("--bound", type=float, default=120.0, help="stop TF's picture after this many seconds")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--skip-tf", action="store_true", help="only the large-module part")
    args = ap.parse_args()
    if not args.skip_tf:
        bench_seed(args.bound, args.repeat)
    bench_large(args.repeat)


if __name__ == "__main__":
    main()
