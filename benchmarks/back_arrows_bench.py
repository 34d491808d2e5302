"""Arrows against program order in the default picture of inference models (issue 33, goal 2).

An inference function has no backward pass, so no arrow of its overview can rightly run back
up the page; each one ``render`` writes as a ``←``/``→`` row "against program order" is a box
drawn above what it reads. For each capture this runs ``hloviz render CAPTURE --stage both`` as
a user does and adds up those rows from the command's own notes; ``--before DIR`` runs a copy
of another tree's ``hloviz/`` package the same way, interleaved.

Run: ``python benchmarks/back_arrows_bench.py [--before DIR] [CAPTURE ...]`` (a name under
samples/captures or a folder).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT = ["inception_v3", "densenet121", "mobilenet_v2", "mobilenet_v3_small", "efficientnet_b0", "resnet50",
           "convnext_tiny", "keras_autonamed", "resblock_relu"]


def back_arrows(tree: Path, capture: str) -> int:
    path = Path(capture) if "/" in capture else ROOT / "samples" / "captures" / capture
    with tempfile.TemporaryDirectory() as tmp:
        done = subprocess.run([sys.executable, "-m", "hloviz", "render", str(path), "--stage", "both", "-o",
                               str(Path(tmp) / "x.svg")], cwd=tree, env=dict(os.environ, PYTHONPATH=str(tree)),
                              capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise SystemExit(f"render {capture} failed in {tree}: {done.stderr[-500:]}")
    return sum(int(n) for n in re.findall(r"(\d+) against program order", done.stderr))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("captures", nargs="*", default=DEFAULT)
    ap.add_argument("--before", type=Path, help="a folder holding another hloviz/ package")
    args = ap.parse_args()
    print(f"{'capture':<32} {'before':>7} {'after':>7}" if args.before else f"{'capture':<32} {'arrows':>7}")
    for capture in args.captures:
        after = back_arrows(ROOT, capture)
        if args.before:
            print(f"{capture:<32} {back_arrows(args.before, capture):>7} {after:>7}")
        else:
            print(f"{capture:<32} {after:>7}")


if __name__ == "__main__":
    main()
