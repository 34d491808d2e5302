"""What capturing in a child process costs: ``show`` of the seed, in-process against isolated.

The CLI runs a ``model.py:fn`` capture in a child Python (``hloviz/capture/child.py``) so that
the model cannot write into stdout at the descriptor level, end hloviz with ``os._exit`` or keep
it alive with a thread. This measures what that costs on the seed
(``samples/fused_additions.py:fused_additions``): each run is a fresh process doing what
``hloviz show`` does (``hloviz.api.show``), with live captures in-process (the reference) or in
a child, alternating so that machine noise hits both alike. Prints every run, the median and
best of each, and the ratio isolated / in-process (the reference measured in the same run).

Run: ``python benchmarks/capture_isolation_bench.py [--runs 3]``. Needs TensorFlow and dot.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET = str(ROOT / "samples" / "fused_additions.py") + ":fused_additions"

_RUN = """
import sys
from hloviz.capture import isolate_live_captures
isolate_live_captures(sys.argv[1] == "child")
from hloviz import api
api.show(sys.argv[2], sys.argv[3])
"""


def one(mode: str, out: Path) -> float:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", _RUN, mode, TARGET, str(out)], env=env, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    opts = ap.parse_args()
    times: dict[str, list[float]] = {"in-process": [], "child": []}
    with tempfile.TemporaryDirectory() as tmp:
        for k in range(opts.runs):
            for mode in (("in-process", "child") if k % 2 == 0 else ("child", "in-process")):
                t = one(mode, Path(tmp) / f"{mode}-{k}")
                times[mode].append(t)
                print(f"run {k + 1} {mode:10s} {t:6.2f} s", flush=True)
    ref, iso = times["in-process"], times["child"]
    print(f"in-process  median {statistics.median(ref):.2f} s  best {min(ref):.2f} s")
    print(f"child       median {statistics.median(iso):.2f} s  best {min(iso):.2f} s")
    print(f"ratio child / in-process: median {statistics.median(iso) / statistics.median(ref):.3f}, "
          f"best {min(iso) / min(ref):.3f}")


if __name__ == "__main__":
    main()
