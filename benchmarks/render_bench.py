"""How long a picture takes: hloviz against TensorFlow's own graph dump, in the same run.

1. The seed (``samples/fused_additions.py:fused_additions``, 1000 chained adds on
   f32[100000000]): TensorFlow compiles it once; then

   * hloviz: post-optimization HLO text → parse → view → DOT → ``dot -Tsvg`` → SVG bytes;
   * reference: TF's ``optimized_hlo_dot`` (``fn.experimental_get_compiler_ir(*specs)(
     stage="optimized_hlo_dot")``) through ``dot -Tsvg``, stopped at ``--bound`` seconds and
     then reported as "> BOUND s".

   Prints both and the ratio. Target: hloviz ≤ 2 s.

2. A large module (default overview, every step from parsed module to SVG; parsing is timed
   apart): the benchmark data's large module when ``benchmarks/_data.py`` provides
   ``ensure_large_module()``, else a synthetic model-shaped module of ~300k instructions from
   ``tests/render_samples.py`` (and the script says so). Target: ≤ 10 s.

Run: ``python benchmarks/render_bench.py [--bound 120] [--skip-tf]``. Wall times; machines are
noisy, so each hloviz figure is the best of ``--repeat`` runs.
"""

from __future__ import annotations

import argparse
import importlib
import os
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
from hloviz.render import module_picture  # noqa: E402
from hloviz.render.graphviz_run import find_dot  # noqa: E402

_T = TypeVar("_T")


def timed(fn: Callable[[], _T]) -> tuple[float, _T]:
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def best(fn: Callable[[], _T], repeat: int) -> tuple[float, _T]:
    """The fastest of ``repeat`` calls (at least one), and the last call's result."""
    secs, out = timed(fn)
    for _ in range(repeat - 1):
        more, out = timed(fn)
        secs = min(secs, more)
    return secs, out


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
    print(f"   TF optimized_hlo_dot: {len(tf_dot.splitlines())} lines, {len(tf_dot) // 1024} KiB")

    def ours() -> bytes:
        return module_picture(hloviz.parse(post_text), timeout=bound).data

    secs, svg = best(ours, repeat)
    print(f"   hloviz (parse + view + dot -Tsvg): {secs:.2f} s  -> {len(svg) // 1024} KiB SVG   [target <= 2 s]")
    from hloviz.analysis import analyze
    from hloviz.render import pair_picture

    def pair() -> bytes:
        pre, post = hloviz.parse(pre_text), hloviz.parse(post_text)
        return pair_picture(pre, post, analyze(pre, post), timeout=bound).data

    secs2, _ = best(pair, repeat)
    print(f"   hloviz side by side (parse both + analysis + dot -Tsvg), what `show` draws: {secs2:.2f} s")
    ref = tf_dot_seconds(tf_dot, bound)
    if ref is None:
        print(f"   TF optimized_hlo_dot | dot -Tsvg:  > {bound:g} s (stopped)")
        print(f"   ratio: hloviz is more than {bound / secs:.0f}x faster")
    else:
        print(f"   TF optimized_hlo_dot | dot -Tsvg:  {ref:.2f} s")
        print(f"   ratio: {ref / secs:.1f}x")


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
    secs, pic = best(lambda: module_picture(module), repeat)
    print(f"   hloviz default overview (view + dot -Tsvg): {secs:.2f} s, {pic.views[0][1].nodes} "
          f"nodes   [target <= 10 s]")
    for note in pic.notes:
        print(f"     note: {note}")
    sys.path.insert(0, str(ROOT / "tests"))
    flat_module = importlib.import_module("render_samples").flat_module

    flat = hloviz.parse(flat_module(21500))
    secs, pic = best(lambda: module_picture(flat), repeat)
    print(f"== flat module (pre-optimization shape, no fusions): {flat.instruction_count} instructions")
    print(f"   hloviz default overview (view + dot -Tsvg): {secs:.2f} s, {pic.views[0][1].nodes} nodes   "
          f"[target <= 10 s]")


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
