"""How long ``hloviz memory`` takes beyond parsing, against parsing the same module, in the same run.

    python benchmarks/memory_bench.py                 # ResNet50's capture (samples/memory/resnet50)
    python benchmarks/memory_bench.py --large         # the benchmarks' >= 300k-instruction module
    python benchmarks/memory_bench.py --file x.hlo    # any optimized HLO text (.gz too)

For each module, the best of ``--repeats`` rounds, each on a fresh parse with hloviz's memoising
caches emptied first (``_fair.clear_caches``: no round warmer than a user's process): parsing
(the reference), and the report as ``hloviz memory`` makes it from the parsed module — from XLA's
own buffer assignment where the capture kept one (``memory.json``: the path the command takes for
every saved capture and dump; reading the record is timed with it), else the estimate — with
each buffer's layer and source line. The estimate alone is timed too where there is a record
(``--file`` and ``--large`` have none: the estimate is the command's path there).
Targets: ResNet50 <= 1 s beyond parsing; the 300k-instruction module <= 5 s.
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


def one_round(text: str, info: dict, record: dict | None) -> dict[str, float]:
    import _fair

    import hloviz
    from hloviz.analysis.memory import XlaAssignment, memory_report
    from hloviz.api.memory import _namers

    _fair.clear_caches()
    steps: dict[str, float] = {}
    steps["parse (reference)"], module = timed(lambda: hloviz.parse(text))

    def command():  # api.memory.memory_of, on the module parsed above
        xla = XlaAssignment.from_dict(record) if record is not None else None
        scope_of, source_of = _namers(module, info)
        return memory_report(module, xla, scope_of=scope_of, source_of=source_of)

    label = "hloviz memory (XLA's record)" if record is not None else "hloviz memory (estimate)"
    steps[label], report = timed(command)
    if record is not None:
        fresh = hloviz.parse(text)
        _fair.clear_caches()
        steps["estimate alone"], _ = timed(lambda: memory_report(fresh))
    steps["_instructions"] = float(module.instruction_count)
    steps["_buffers at peak"] = float(len(report.buffers_at_peak))
    return steps


def bench(label: str, text: str, repeats: int, info: dict | None = None, record: dict | None = None) -> None:
    best = one_round(text, info or {}, record)
    for _ in range(repeats - 1):
        for step, secs in one_round(text, info or {}, record).items():
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
    import json

    from hloviz.capture.saved import read_text, stage_file

    files: list[tuple[str, Path, dict | None, dict | None]] = [(p.name, p, None, None) for p in a.file or ()]
    if a.large:
        import _data

        files.append(("large module", _data.ensure_large_module(), None, None))
    if not files:
        folder = ROOT / "samples" / "memory" / "resnet50"
        path = stage_file(folder, "post.hlo")
        if path is not None:
            files.append(("resnet50", path, json.loads((folder / "capture.json").read_text()),
                          json.loads((folder / "memory.json").read_text())))
    for label, path, info, record in files:
        bench(label, read_text(path), a.repeats, info, record)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
