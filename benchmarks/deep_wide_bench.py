"""Deep scopes and wide diffs (issue 19): each command against ``stats`` of the same input.

Usage:  python benchmarks/deep_wide_bench.py [--levels 40000] [--width 40000] [--repeat 3]

What a review measured before the fixes: an op name 40,000 scopes deep (``a/a/…/a/neg``, a
276-byte ``.hlo.gz``) cost 6-8 GB in ``render -o x.html``, ``show``, ``stats --by scope`` and
``diff -o``; two modules whose ROOT tuples have 40,000 operands, half of them different, took
106 s in ``diff`` where ``stats`` of one took 0.45 s.

Every command runs in a fresh process (``python -m hloviz``), wall time and peak RSS from
``wait4``; the reference is ``stats`` of the same input, run the same way, interleaved with the
command under test, best of ``--repeat``. A ratio near 1 for the deep cases (the scope tree is
capped at 64 levels) and near 2-3 for the diff (two modules parsed and matched, against one
parsed) is linear work; the old quadratic paths gave hundreds.
"""

from __future__ import annotations

import argparse
import gzip
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hostile_bench import run  # noqa: E402 - the same timing of one command in a fresh process

from tests import hostile_inputs as H  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--levels", type=int, default=40_000)
    ap.add_argument("--width", type=int, default=40_000)
    ap.add_argument("--repeat", type=int, default=3)
    opts = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        deep = folder / "deep.hlo.gz"
        deep.write_bytes(gzip.compress(H.deep_scope(opts.levels).encode(), 9))
        wide_a, wide_b = folder / "wide_a.hlo", folder / "wide_b.hlo"
        wide_a.write_text(H.wide_root(opts.width))
        wide_b.write_text(H.wide_root(opts.width, differ=True))
        deep_label = f"op name {opts.levels} scopes deep ({deep.stat().st_size} B .gz)"
        cases = [
            (f"{deep_label}: render -o x.html", ["render", str(deep), "-o", "x.html"], ["stats", str(deep)]),
            (f"{deep_label}: show", ["show", str(deep), "-o", "site"], ["stats", str(deep)]),
            (f"{deep_label}: stats --by scope", ["stats", str(deep), "--by", "scope"], ["stats", str(deep)]),
            (f"{deep_label}: diff -o d.svg", ["diff", str(deep), str(deep), "-o", "d.svg"], ["stats", str(deep)]),
            (f"ROOT tuples of {opts.width}, half differing: diff", ["diff", str(wide_a), str(wide_b)],
             ["stats", str(wide_b)]),
        ]
        print(f"{'case':66s} {'wall':>7s} {'RSS':>7s} {'stats':>7s} {'RSS':>7s} {'ratio':>6s} {'exit':>4s}")
        for label, args, ref in cases:
            best, best_ref = (float("inf"), 0, 0), (float("inf"), 0, 0)
            for _ in range(opts.repeat):  # interleaved: the command, then its reference
                best = min(best, run(args, folder))
                best_ref = min(best_ref, run(ref, folder))
            print(f"{label:66s} {best[0]:6.2f}s {best[1]:5d}MB {best_ref[0]:6.2f}s {best_ref[1]:5d}MB "
                  f"{best[0] / best_ref[0]:6.2f} {best[2]:4d}", flush=True)


if __name__ == "__main__":
    main()
