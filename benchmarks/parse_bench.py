"""Parse speed and memory of hloviz against XLA's own C++ parser, measured in the same run.

    python benchmarks/parse_bench.py                 # the large module (generated once if missing)
    python benchmarks/parse_bench.py --repeats 5
    python benchmarks/parse_bench.py --file some.hlo # any HLO text file instead
    python benchmarks/parse_bench.py --check         # exit 1 when a target is missed

The input is the optimized HLO of a 250-layer transformer training step compiled by JAX on CPU
(≥ 300k instructions, ≥ 40 MB; see benchmarks/_data.py). Each parser runs in a fresh process
of its own, ``--repeats`` rounds that alternate the two parsers (so that load from elsewhere
falls on both alike); each parse gives its time (best and median reported) and its memory
(peak RSS added during the parse, RSS still held with only the module alive; median reported). XLA's parser is ``jaxlib._hlo.hlo_module_from_text`` and is
measured only when jaxlib is installed (``pip install 'hloviz[bench]'``).

Targets (issue 2): hloviz time ≤ 1.0× XLA's, hloviz peak memory ≤ 1.5× XLA's. Machines are
noisy, so only the ratios of one run mean anything; nothing here is a test.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _data

TIME_TARGET, MEMORY_TARGET = 1.0, 1.5


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--file", type=Path, help="HLO text file to parse (default: the large module)")
    ap.add_argument("--repeats", type=int, default=5, help="rounds, one parse per parser each (default 5)")
    ap.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    a = ap.parse_args(argv)

    path = a.file or _data.ensure_large_module()
    if not path.is_file():
        raise _data.BenchError(f"{path}: no such file")
    size, lines = _data.describe(path)
    print(f"input: {path}")
    print(f"       {_data.mb(size)}, {lines:,} instruction lines")

    parsers = []
    for parser, available, missing in (
        ("xla", _data.have_xla(), "jaxlib is not installed (pip install 'hloviz[bench]'): no XLA reference"),
        ("hloviz", _data.have_hloviz(), "hloviz is missing (no hloviz package found): nothing to compare"),
    ):
        if available:
            parsers.append(parser)
        else:
            print(f"note: {missing}")
    # Rounds alternate the parsers (xla, hloviz; then hloviz, xla; ...), each parse in a fresh
    # process, so that load from elsewhere on a shared machine falls on both alike.
    runs: dict[str, list[_data.Measured]] = {p: [] for p in parsers}
    for rnd in range(a.repeats):
        for parser in (parsers if rnd % 2 == 0 else parsers[::-1]):
            if parser not in runs:
                continue
            try:
                runs[parser].append(_data.measure_parse(parser, path, 1))
            except RuntimeError as exc:
                print(f"note: {exc}")
                del runs[parser]
    results = {p: _data.Measured.combine(r) for p, r in runs.items() if r}

    if not results:
        return 2
    print()
    print(f"{'parser':<10} {'best':>8} {'median':>8} {'MB/s':>7} {'peak added':>11} {'retained':>10}"
          f" {'computations':>13} {'instructions':>13}")
    for name, r in results.items():
        label = "XLA C++" if name == "xla" else name
        print(f"{label:<10} {r.best:>7.2f}s {r.median:>7.2f}s {size / 1e6 / r.best:>7.1f} {_data.mb(r.peak_added):>11}"
              f" {_data.mb(r.retained):>10} {r.computations:>13,} {r.instructions:>13,}")
    print(f"({a.repeats} rounds, each parse in a fresh process; memory: median of the rounds; times: " + "; ".join(
        f"{n} " + ", ".join(f"{t:.2f}" for t in r.times) for n, r in results.items()) + ")")

    if "xla" not in results or "hloviz" not in results:
        return 0
    h, x = results["hloviz"], results["xla"]
    if (h.computations, h.instructions) != (x.computations, x.instructions):
        print(f"WARNING: counts differ: hloviz {h.computations} computations / {h.instructions} instructions, "
              f"XLA {x.computations} / {x.instructions}")
    t_best, t_med = h.best / x.best, h.median / x.median
    paired = sorted(ht / xt for ht, xt in zip(h.times, x.times))  # same round: similar load
    m = h.peak_added / x.peak_added if x.peak_added > 0 else float("inf")
    ok_t, ok_m = t_best <= TIME_TARGET, m <= MEMORY_TARGET
    print()
    print(f"time   hloviz/XLA: {t_best:.2f} (best), {t_med:.2f} (median), "
          f"{paired[len(paired) // 2]:.2f} (median of the rounds' ratios)   target <= {TIME_TARGET:.1f}  "
          f"{'ok' if ok_t else 'MISSED'}")
    print(f"memory hloviz/XLA: {m:.2f} (peak added)  {h.retained / max(x.retained, 1):.2f} (retained)"
          f"   target <= {MEMORY_TARGET:.1f}  {'ok' if ok_m else 'MISSED'}")
    return 1 if a.check and not (ok_t and ok_m) else 0


if __name__ == "__main__":
    sys.exit(main())
