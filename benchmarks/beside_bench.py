"""What drawing the post-optimization column in a forked copy saves (:mod:`hloviz.render.beside`).

For each saved capture this runs ``hloviz render CAPTURE --stage both -o x.svg`` as a user does
(a fresh process, timed wall-clock), with the copy (the default) and with ``HLOVIZ_PROCESSES=1``
(one process: the reference), alternating, ``--runs`` times each, and checks that both wrote the
same SVG. Prints each capture's median of both, and their ratio (with / without).

Run: ``python benchmarks/beside_bench.py [--runs 3] [--model DIR ...]`` (default: the overview
benchmark's models).
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
sys.path.insert(0, str(ROOT / "benchmarks"))

from overview_bench import CAPTURES, MODELS  # noqa: E402


def one(capture: str, out: Path, *, alone: bool) -> float:
    env = {k: v for k, v in os.environ.items() if k != "HLOVIZ_PROCESSES"}
    if alone:
        env["HLOVIZ_PROCESSES"] = "1"
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "hloviz", "render", capture, "--stage", "both", "-o", str(out)],
                   env=env, check=True, capture_output=True)
    return time.perf_counter() - started


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--model", action="extend", nargs="+", default=None)
    a = ap.parse_args()
    models = a.model or [str(CAPTURES / m) for m in MODELS]
    print(f"{'capture':44} {'one process':>12} {'forked':>8} {'ratio':>6}  same SVG")
    with tempfile.TemporaryDirectory() as tmp:
        for capture in models:
            alone, forked = [], []
            for _ in range(a.runs):
                alone.append(one(capture, Path(tmp) / "alone.svg", alone=True))
                forked.append(one(capture, Path(tmp) / "forked.svg", alone=False))
            same = (Path(tmp) / "alone.svg").read_bytes() == (Path(tmp) / "forked.svg").read_bytes()
            m1, m2 = statistics.median(alone), statistics.median(forked)
            name = capture.removeprefix(str(CAPTURES) + "/")
            print(f"{name:44} {m1:11.2f}s {m2:7.2f}s {m2 / m1:6.2f}  {'yes' if same else 'NO'}", flush=True)


if __name__ == "__main__":
    main()
