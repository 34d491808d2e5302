"""Fuzz the parser with mutated real HLO and report inputs, failures and the slowest input.

Usage:  python benchmarks/fuzz_parse.py [--inputs 100000] [--seed 0] [--commands 10] [--save-failures DIR]

Each input is a mutation of a real module (XLA's conformance corpus, the samples' captures):
bytes, lines and tokens deleted, duplicated and swapped, truncation, splices of two modules,
huge numbers, deep nesting, very long names, invalid UTF-8 and NUL bytes, op names nested up to
40,000 scopes (or JAX transformations) deep, and tuples of up to 2,000 operands. Each must end
in a parsed module (which must print, re-parse, pass the self-check and go through the analyses,
the drawing and the diff) or an HloParseError whose line and column lie inside the input,
within 1 s. With ``--commands N`` every Nth input also goes through a command as a user file —
plain, gz/xz/bz2 (sometimes truncated or garbled), or a capture folder with a mutated
capture.json — in ``stats --json``, ``render -o x.dot`` or ``diff`` of its (small) seed against
it, as text, markdown or JSON, sometimes drawn: it must exit 0 (with strict JSON where JSON was
asked for), or 2 with one message, never a traceback or an internal error. Exit status 1 if any
input failed.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests import fuzzing


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--inputs", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--save-failures", type=Path)
    ap.add_argument("--commands", type=int, default=0, metavar="N",
                    help="every Nth input also through a command (0: none)")
    args = ap.parse_args()
    start = time.perf_counter()
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

    def progress(r: fuzzing.Report) -> None:
        if r.inputs % 10_000 == 0:
            rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            print(f"  {r.inputs} inputs, {len(r.failures)} failures, slowest {r.slowest:.3f} s, "
                  f"peak RSS {rss:.0f} MB", flush=True)

    report = fuzzing.run(args.inputs, seed=args.seed, on_progress=progress, commands_every=args.commands)
    elapsed = time.perf_counter() - start
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"inputs: {report.inputs}  parsed: {report.parsed}  clean errors: {report.inputs - report.parsed}  "
          f"through commands: {report.commands}  manifests: {report.manifests}  failures: {len(report.failures)}")
    print(f"slowest input: {report.slowest * 1000:.1f} ms ({len(report.slowest_input)} bytes)  "
          f"total: {elapsed:.0f} s ({elapsed / max(report.inputs, 1) * 1000:.2f} ms/input)  "
          f"peak RSS: {rss:.0f} MB (started at {rss0 / 1024:.0f} MB)")
    for message, _ in report.failures[:20]:
        print("  FAIL", message)
    if args.save_failures and report.failures:
        args.save_failures.mkdir(parents=True, exist_ok=True)
        for k, (_, data) in enumerate(report.failures):
            (args.save_failures / f"failure_{k:04d}.hlo").write_bytes(data)
    return 1 if report.failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
