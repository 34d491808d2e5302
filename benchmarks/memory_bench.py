"""How long ``hloviz memory`` takes beyond parsing, against parsing the same module, in the same run.

    python benchmarks/memory_bench.py                 # ResNet50's optimized HLO (samples/memory/resnet50)
    python benchmarks/memory_bench.py --large         # the benchmarks' ≥ 300k-instruction module
    python benchmarks/memory_bench.py --file x.hlo    # any optimized HLO text (.gz too)

For each module, the best of ``--repeats`` rounds, each on a fresh parse: parsing (the reference),
the memory estimate (dataflow, live ranges, allocations, timeline: ``memory_report``), and the
whole report as ``hloviz memory`` makes it (with each buffer's layer from the scope tree and its
source line). Targets: ResNet50 ≤ 1 s beyond parsing; the 300k-instruction module ≤ 5 s.
Machines are noisy: only the figures of one run mean anything; nothing here is a test.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

_T = TypeVar("_T")

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))


def timed(fn: Callable[[], _T]) -> tuple[float, _T]:
    t = time.perf_counter()
    result = fn()
    return time.perf_counter() - t, result


def one_round(text: str) -> dict[str, float]:
    import hloviz
    from hloviz.analysis.memory import memory_report
    from hloviz.api.memory import _namers

    steps: dict[str, float] = {}
    steps["parse (reference)"], module = timed(lambda: hloviz.parse(text))
    steps["memory estimate"], _ = timed(lambda: memory_report(module))
    fresh = hloviz.parse(text)

    def whole():
        scope_of, source_of = _namers(fresh, {})
        return memory_report(fresh, scope_of=scope_of, source_of=source_of)

    steps["hloviz memory (with layers)"], report = timed(whole)
    steps["_instructions"] = float(module.instruction_count)
    steps["_buffers at peak"] = float(len(report.buffers_at_peak))
    return steps


def bench(label: str, text: str, repeats: int) -> None:
    best = one_round(text)
    for _ in range(repeats - 1):
        for step, secs in one_round(text).items():
            best[step] = min(best[step], secs)
    print(f"{label}: {int(best.pop('_instructions')):,} instructions, "
          f"{int(best.pop('_buffers at peak')):,} buffers at the peak")
    ref = best["parse (reference)"]
    for step, secs in best.items():
        beyond = "" if step.startswith("parse") else f"   {secs:6.2f} s beyond parsing"
        print(f"  {step:<28} {secs * 1000:9.1f} ms   {secs / ref:5.2f}× parse{beyond}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").partition("\n")[0])
    ap.add_argument("--file", type=Path, action="append", help="an optimized HLO text file (repeatable)")
    ap.add_argument("--large", action="store_true", help="the benchmarks' large module (generated once with JAX)")
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args(argv)
    from hloviz.capture.saved import read_text, stage_file

    files: list[tuple[str, Path]] = [(p.name, p) for p in a.file or ()]
    if a.large:
        import _data

        files.append(("large module", _data.ensure_large_module()))
    if not files:
        path = stage_file(ROOT / "samples" / "memory" / "resnet50", "post.hlo")
        if path is not None:
            files.append(("resnet50", path))
    for label, path in files:
        bench(label, read_text(path), a.repeats)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
