"""The memory estimate against XLA's total on every program of the corpus, as a Markdown table.

    python benchmarks/memory_corpus_bench.py            # tests/data/memory_corpus (samples/memory_corpus.py)

For each program: which half it is in (``tune``: looked at while the rules were written;
``check``: only measured), XLA's total (its ``*-buffer-assignment.txt``: the sum of its
allocations), hloviz's estimate from the optimized HLO alone, the error, and the time the estimate
took; then the worst and median error of each half and of all.
"""

from __future__ import annotations

import gzip
import json
import re
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
CORPUS = ROOT / "tests" / "data" / "memory_corpus"


def _read(path: Path) -> str:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return f.read()


def main() -> int:
    import hloviz
    from hloviz.analysis.memory import memory_report

    rows = []
    for folder in sorted(p for p in CORPUS.iterdir() if (p / "post.hlo.gz").is_file()):
        meta = json.loads((folder / "stats.json").read_text(encoding="utf-8"))
        text = _read(folder / "buffer-assignment.txt.gz")
        xla = sum(int(m) for m in re.findall(r"^allocation \d+: size (\d+)", text, re.MULTILINE))
        module = hloviz.parse(_read(folder / "post.hlo.gz"))
        t = time.perf_counter()
        est = memory_report(module).total_bytes
        secs = time.perf_counter() - t
        rows.append((folder.name, meta["split"], meta["in_place"], xla, est, 100 * (est - xla) / xla, secs))
    print("| program | half | donated / in place | XLA's total | estimate | error | estimate took |")
    print("|---|---|---|---|---|---|---|")
    for name, split, in_place, xla, est, err, secs in rows:
        said = "same" if est == xla else f"{err:+.3f}% ({est - xla:+,} B)"
        print(f"| {name} | {split} | {'yes' if in_place else ''} | {xla:,} B | {est:,} B | {said} | {secs:.2f} s |")
    print()
    for label, part in (("tune", [r for r in rows if r[1] == "tune"]), ("check", [r for r in rows if r[1] == "check"]),
                        ("all", rows)):
        errs = [abs(r[5]) for r in part]
        exact = sum(1 for r in part if r[3] == r[4])
        print(f"{label}: {len(part)} programs, {exact} to the byte, worst {max(errs):.3f}%, "
              f"median {statistics.median(errs):.3f}%, most over {max(r[5] for r in part):+.3f}%")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
