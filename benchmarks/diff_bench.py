"""Diff speed against parse speed, measured in the same run; and the diff of two 300k modules.

    python benchmarks/diff_bench.py            # two-version transformer captures (TF 2.17 vs 2.21)
    python benchmarks/diff_bench.py --large    # two ~300k-instruction modules: time and peak RSS
    python benchmarks/diff_bench.py A B        # any two HLO files / capture folders (post.hlo)
    python benchmarks/diff_bench.py --check    # exit 1 when a target is missed

Default input: ``post.hlo`` of the oldest and newest ``samples/captures/transformer_train-tf*``
capture (a small transformer training step captured under two TensorFlow versions with
``hloviz versions samples/transformer_train.py:transformer_train --tf 2.17 --tf 2.21``). The script times parsing both modules and diffing them
(``hloviz.analysis.diff.diff_modules``), best of ``--repeats``, and prints diff/parse.

``--large`` diffs the benchmark's 250-layer transformer module against the same model at another
width (benchmarks/_data.py generates both once, with JAX) in a fresh process, reporting the
time and the peak RSS the diff adds on top of the two parsed modules.

Targets (issue 5): diff time ≤ 3× the time to parse both; two 300k-instruction modules diff in
under a minute, in bounded memory. Only ratios of one run mean anything on a noisy machine.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _data
from _parse_child import peak_rss, reset_peak, rss_now

RATIO_TARGET, LARGE_SECONDS_TARGET = 3.0, 60.0


def _import_diff():
    """``diff_modules`` or None while the diff is not written yet."""
    sys.path.insert(0, str(_data.REPO))
    try:
        from hloviz.analysis.diff import diff_modules
    except ImportError:
        return None
    return diff_modules


def _post(p: Path) -> Path:
    return p / "post.hlo" if p.is_dir() else p


def _best(fn, repeats: int) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(repeats):
        out = None
        gc.collect()
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def _describe_diff(d) -> str:
    s = d.summary
    return (f"unchanged {s.unchanged:,}, changed {s.changed:,}, added {s.added:,}, removed {s.removed:,}; "
            f"kernels {s.kernels.before:,} -> {s.kernels.after:,}")


def run_pair(a: Path, b: Path, repeats: int) -> bool:
    import hloviz

    for p in (a, b):
        size, lines = _data.describe(p)
        print(f"{p}: {_data.mb(size)}, {lines:,} instruction lines")
    t_a, ma = _best(lambda: hloviz.parse_file(a), repeats)
    t_b, mb_ = _best(lambda: hloviz.parse_file(b), repeats)
    parse = t_a + t_b
    print(f"parse both (best of {repeats}): {parse:.3f} s  ({t_a:.3f} + {t_b:.3f})")
    diff_modules = _import_diff()
    if diff_modules is None:
        print("diff not available yet (hloviz.analysis.diff.diff_modules is missing)")
        return True
    t_d, d = _best(lambda: diff_modules(ma, mb_), repeats)
    ratio = t_d / parse
    print(f"diff (best of {repeats}): {t_d:.3f} s   {_describe_diff(d)}")
    ok = ratio <= RATIO_TARGET
    print(f"\ndiff/parse: {ratio:.2f}   target <= {RATIO_TARGET:.0f}  {'ok' if ok else 'MISSED'}")
    return ok


def child_large(a: Path, b: Path) -> int:
    """In a fresh process: parse both, then diff with the peak RSS mark reset just before."""
    import hloviz

    diff_modules = _import_diff()
    base = rss_now()
    t0 = time.perf_counter()
    ma, mb_ = hloviz.parse_file(a), hloviz.parse_file(b)
    t_parse = time.perf_counter() - t0
    gc.collect()
    before = rss_now()
    out = {"parse_seconds": t_parse, "modules_rss": before - base,
           "instructions": [sum(len(c.instructions) for c in m.computations) for m in (ma, mb_)]}
    if diff_modules is not None:
        can_reset = reset_peak()
        t0 = time.perf_counter()
        d = diff_modules(ma, mb_)
        out["diff_seconds"] = time.perf_counter() - t0
        out["diff_peak_added"] = (peak_rss() - before) if can_reset else None
        out["result"] = _describe_diff(d)
    print(json.dumps(out))
    return 0


def run_large() -> bool:
    a, b = _data.ensure_large_module(), _data.ensure_second_large_module()
    for p in (a, b):
        size, lines = _data.describe(p)
        print(f"{p.relative_to(_data.REPO)}: {_data.mb(size)}, {lines:,} instruction lines")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(_data.REPO), os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, __file__, "--child-large", str(a), str(b)], env=env,
                          stdout=subprocess.PIPE, text=True)
    if done.returncode != 0:
        print(f"the large diff failed (exit {done.returncode})")
        return False
    r = json.loads(done.stdout.strip().splitlines()[-1])
    print(f"parse both: {r['parse_seconds']:.1f} s, the two modules hold {_data.mb(r['modules_rss'])} of RSS")
    if "diff_seconds" not in r:
        print("diff not available yet (hloviz.analysis.diff.diff_modules is missing)")
        return True
    peak = r["diff_peak_added"]
    print(f"diff: {r['diff_seconds']:.1f} s, peak RSS added by the diff: "
          f"{_data.mb(peak) if peak is not None else 'unknown (no /proc/self/clear_refs)'}")
    print(f"      {r['result']}")
    ok = r["diff_seconds"] <= LARGE_SECONDS_TARGET
    print(f"\ndiff time: target < {LARGE_SECONDS_TARGET:.0f} s  {'ok' if ok else 'MISSED'}; "
          f"diff/parse {r['diff_seconds'] / r['parse_seconds']:.2f}")
    return ok


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*", type=Path, help="two HLO files or capture folders")
    ap.add_argument("--large", action="store_true", help="diff two ~300k-instruction modules")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    ap.add_argument("--child-large", nargs=2, type=Path, help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child_large:
        return child_large(*a.child_large)
    if not _data.have_hloviz():
        print("hloviz is missing: nothing to measure")
        return 2
    if a.large:
        ok = run_large()
    else:
        if a.files:
            if len(a.files) != 2:
                raise _data.BenchError("give two files (or none for the transformer captures)")
            pair = [_post(p) for p in a.files]
        else:
            caps = _data.transformer_captures()
            if len(caps) < 2:
                raise _data.BenchError("need two samples/captures/transformer_train-tf*/ folders; "
                                       "make them with hloviz versions (samples/README.md)")
            pair = [caps[0], caps[-1]]
        for p in pair:
            if not p.is_file():
                raise _data.BenchError(f"{p}: no such file")
        ok = run_pair(pair[0], pair[1], a.repeats)
    return 1 if a.check and not ok else 0


if __name__ == "__main__":
    sys.exit(main())
