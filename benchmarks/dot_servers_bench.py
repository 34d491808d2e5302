"""The explorer page's build with ``dot`` processes kept running (:mod:`hloviz.render.layout.runs.dotserver`)
against the same build with one ``dot`` per graph (the servers switched off), in this checkout.

For each capture, rounds alternate between the two, each in a fresh process: the page is built
as ``hloviz show`` builds it (``pair_payload``) with the explorer's time limits out of the way
(``Bounds(seconds=600, timeout=300)``), so both hold the same pictures. Printed per mode: ``dot``
processes started, CPU seconds of hloviz and of its ``dot`` processes (every core; steadier than
wall time on a shared machine), wall seconds (best of the rounds), and whether the two pages
are the same bytes (sha1 of the page's data and first view).

Run: ``python benchmarks/dot_servers_bench.py [CAPTURE ...] [--repeat N]``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

_ONE = r"""
import contextlib, hashlib, json, os, resource, subprocess, sys, time
sys.path.insert(0, sys.argv[1])
from hloviz.analysis import analyze
from hloviz.capture import load_target
from hloviz.render.layout.runs import dotserver
from hloviz.render.page.explorer import Bounds, pair_payload
from hloviz.render.pictures import pair_picture

starts = 0
popen = subprocess.Popen
class Counted(popen):
    def __init__(self, *args, **kwargs):
        global starts
        starts += 1
        super().__init__(*args, **kwargs)
subprocess.Popen = Counted
if sys.argv[3] == "off":
    dotserver.dot_servers = contextlib.nullcontext
cap = load_target(sys.argv[2])
pre, post = cap.pre_module(), cap.post_module()
analysis = analyze(pre, post, info=cap.info)
picture = pair_picture(pre, post, analysis, info=cap.info, title=os.path.basename(sys.argv[2]))
before, kids, starts = time.process_time(), resource.getrusage(resource.RUSAGE_CHILDREN), 0
t0 = time.perf_counter()
payload = pair_payload(pre, post, analysis, picture, info=cap.info, bounds=Bounds(seconds=600, timeout=300))
wall = time.perf_counter() - t0
after = resource.getrusage(resource.RUSAGE_CHILDREN)
page = payload.blocks + payload.later + (payload.picture_svg or "")
print(json.dumps({"starts": starts, "cpu": time.process_time() - before, "wall": wall,
                  "dot_cpu": after.ru_utime + after.ru_stime - kids.ru_utime - kids.ru_stime,
                  "sha1": hashlib.sha1(page.encode()).hexdigest()}))
"""


def _one(capture: str, mode: str) -> dict:
    out = subprocess.run([sys.executable, "-c", _ONE, str(ROOT), str(ROOT / "samples" / "captures" / capture), mode],
                         check=True, capture_output=True, text=True, cwd=ROOT,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("captures", nargs="*", default=["densenet121", "inception_v3", "resnet50", "jax_gpt_step"])
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    print(f"{'capture':14} {'mode':7} {'dot starts':>10} {'py cpu':>7} {'dot cpu':>8} {'all cpu':>8} {'wall':>7}"
          f"   (best of {args.repeat}, alternating, fresh processes)")
    for capture in args.captures:
        runs: dict[str, list[dict]] = {"servers": [], "off": []}
        for r in range(args.repeat):
            for mode in (("on", "off") if r % 2 == 0 else ("off", "on")):
                runs["servers" if mode == "on" else "off"].append(_one(capture, mode))
        best = {}
        for mode, rs in runs.items():
            best[mode] = min(x["cpu"] + x["dot_cpu"] for x in rs)
            print(f"{capture:14} {mode:7} {rs[0]['starts']:10d} {min(x['cpu'] for x in rs):7.2f} "
                  f"{min(x['dot_cpu'] for x in rs):8.2f} {best[mode]:8.2f} {min(x['wall'] for x in rs):7.2f}")
        same = len({x["sha1"] for rs in runs.values() for x in rs}) == 1
        print(f"{capture:14} ratio   all cpu {best['servers'] / best['off']:.2f}, pages the same bytes: {same}",
              flush=True)


if __name__ == "__main__":
    main()
