"""What ``hloviz passes`` costs: a capture with XLA's per-pass dumps against a plain capture, and
reading the snapshots against parsing each of them.

Two measurements, on ResNet50 (``samples/keras_applications.py:resnet50``, random weights,
``f32[1,224,224,3]``) by default:

1. **Capture.** ``hloviz passes TARGET --save DIR`` (a child process captures with
   ``--xla_dump_to --xla_dump_hlo_pass_re=.*``, hloviz reads the snapshots, prints the history)
   against ``hloviz dump TARGET -o DIR`` (the plain capture every other command makes). Both are
   whole ``hloviz`` processes, run interleaved, best of ``--repeat``. Goal: ≤ 2×.
2. **Reading.** :func:`hloviz.api.passes.read_pass_history` on the saved snapshots against the
   least a reader that compares neighbours must do without it: parse every snapshot file once.
   The history parses each *distinct* snapshot once (a snapshot equal to the one before is not
   parsed again) and compares neighbours only, so its time grows with the distinct snapshots.

Run: ``python benchmarks/passes_bench.py [--repeat 2] [--target samples/fused_additions.py:fused_additions]``
(``--dump DIR`` measures only the reading, of a folder kept with ``hloviz passes … --save DIR``).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT = "samples/keras_applications.py:resnet50"


def _run(cmd: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "hloviz", *cmd], cwd=ROOT, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return time.perf_counter() - started


def capture(target: str, repeat: int, keep: Path) -> tuple[float, float]:
    """Best seconds of (plain capture, capture with pass dumps), interleaved."""
    plain, passes = [], []
    for i in range(repeat):
        with tempfile.TemporaryDirectory() as tmp:
            plain.append(_run(["dump", target, "-o", str(Path(tmp) / "cap")]))
            out = keep if i == 0 else Path(tmp) / "snapshots"
            passes.append(_run(["passes", target, "--save", str(out)]))
        print(f"  run {i + 1}: plain {plain[-1]:.1f} s, with pass dumps {passes[-1]:.1f} s", flush=True)
    return min(plain), min(passes)


def reading(folder: Path, repeat: int) -> tuple[float, float, float, int, int]:
    """Best seconds of (parse every snapshot once; parse and compare every snapshot with its
    neighbour, identical or not; read the history), files, distinct texts."""
    sys.path.insert(0, str(ROOT))
    from hloviz.analysis.passes import compare_facts
    from hloviz.analysis.passes.facts import module_facts
    from hloviz.api.passes import read_pass_history
    from hloviz.capture.dumps.pass_dump import list_pass_modules
    from hloviz.parser import parse

    files = [p for m in list_pass_modules(folder) for _, p in m.snapshots if p is not None]
    texts = [p.read_text() for p in files]
    distinct = 1 + sum(texts[i] != texts[i - 1] for i in range(1, len(texts)))
    parse_all, naive, history = [], [], []
    for _ in range(repeat):
        t = time.perf_counter()
        for p in files:
            parse(p.read_text(), filename=str(p))
        parse_all.append(time.perf_counter() - t)
        t = time.perf_counter()
        prev = None
        for p in files:
            text = p.read_text()
            facts = module_facts(parse(text, filename=str(p)), text)
            if prev is not None:
                compare_facts(prev, facts)
            prev = facts
        naive.append(time.perf_counter() - t)
        t = time.perf_counter()
        read_pass_history(folder)
        history.append(time.perf_counter() - t)
    return min(parse_all), min(naive), min(history), len(files), distinct


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--target", default=DEFAULT)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--dump", type=Path, help="only measure reading this dump folder (skip the captures)")
    opts = ap.parse_args()
    if opts.dump is not None:
        _print_reading(opts.dump, max(opts.repeat, 3))
        return
    keep = Path(tempfile.mkdtemp(prefix="passes-bench-"))
    shutil.rmtree(keep)
    try:
        print(f"{opts.target}: capture, best of {opts.repeat} (interleaved, fresh processes)")
        plain, with_dumps = capture(opts.target, opts.repeat, keep)
        print(f"  plain capture (hloviz dump)        {plain:7.1f} s")
        print(f"  with pass dumps (hloviz passes)    {with_dumps:7.1f} s   {with_dumps / plain:.2f}× (goal ≤ 2×)")
        _print_reading(keep, max(opts.repeat, 3))
    finally:
        shutil.rmtree(keep, ignore_errors=True)


def _print_reading(folder: Path, repeat: int) -> None:
    parse_all, naive, history, files, distinct = reading(folder, repeat)
    size = sum(p.stat().st_size for p in folder.iterdir()) / 1e6
    print(f"reading {files} snapshots ({distinct} distinct, {size:.0f} MB of text in the folder), best of {repeat}")
    print(f"  parse every snapshot once                     {parse_all:6.2f} s")
    print(f"  parse, reduce and compare every snapshot      {naive:6.2f} s   {naive / parse_all:.2f}×")
    print(f"  read_pass_history (distinct ones only, + pre/post, folding)"
          f" {history:6.2f} s   {history / parse_all:.2f}×")


if __name__ == "__main__":
    main()
