"""How long the analysis under a module's picture takes: the scope tree, the layers each optimizer
instruction updates, the layers of each fusion.

For an optimized HLO file (default: the 300k-instruction module ``benchmarks/_gen_transformer.py
--layers 250 --arch llama`` writes to ``build/bench/``) this times, in one process and
interleaved over ``--repeat`` rounds (best kept; each round on a fresh parse with hloviz's
memoising caches emptied first, ``_fair.clear_caches``, so no round is warmer than a user's
process), what ``render`` runs before it draws:
``build_scope_tree(module, stage="pre")``, ``update_targets(tree)`` and ``tree.layers_of`` for
every fusion. The reference, timed the same way in the same run, is parsing the text (these
machines are noisy: the ratio travels better than seconds).

Run: ``python benchmarks/analysis_bench.py [PATH.hlo] [--repeat N]``.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import _fair  # noqa: E402

import hloviz  # noqa: E402
from hloviz.analysis.scopes import build_scope_tree  # noqa: E402
from hloviz.analysis.updates import update_targets  # noqa: E402

BIG = ROOT / "build" / "bench" / "transformer-llama-L250-w64.hlo"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").partition("\n")[0])
    ap.add_argument("path", type=Path, nargs="?", default=BIG)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args(argv)
    text = a.path.read_text()
    best = dict.fromkeys(("parse", "scope tree", "update targets", "fusion layers"), math.inf)
    counts = {}
    for _ in range(max(a.repeat, 1)):
        _fair.clear_caches()
        t0 = time.perf_counter()
        module = hloviz.parse(text)
        t1 = time.perf_counter()
        tree = build_scope_tree(module, stage="pre")
        t2 = time.perf_counter()
        targets = update_targets(tree)
        t3 = time.perf_counter()
        fusions = [i for c in module.computations for i in c.instructions if i.opcode == "fusion"]
        t4 = time.perf_counter()
        for f in fusions:
            tree.layers_of(f)
        t5 = time.perf_counter()
        for key, s in (("parse", t1 - t0), ("scope tree", t2 - t1), ("update targets", t3 - t2),
                       ("fusion layers", t5 - t4)):
            best[key] = min(best[key], s)
        counts = {"instructions": sum(len(c.instructions) for c in module.computations),
                  "optimizer instructions": len(targets), "fusions": len(fusions)}
        del module, tree, targets, fusions
    print(", ".join(f"{v:,} {k}" for k, v in counts.items()))
    print(f"{'step':<16} {'best s':>7} {'ratio':>6}")
    for key, s in best.items():
        print(f"{key:<16} {s:7.2f} {s / best['parse']:6.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
