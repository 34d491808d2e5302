"""Child process of the benchmarks: parse one file with one parser and print JSON measurements.

    python benchmarks/_parse_child.py {hloviz|hloviz-full|xla} FILE REPEATS

Runs in a fresh interpreter so that each parser's memory is measured alone. Every parser starts
from the path (reading the file is part of the work for all):

* ``xla``: reading the text and calling ``jaxlib._hlo.hlo_module_from_text`` (XLA's C++ HLO
  parser as jaxlib exposes it), which builds every instruction with all its attributes;
* ``hloviz``: ``parse_file`` alone — what hloviz leaves for later (the split of a few
  attribute values, the header signatures) is not read;
* ``hloviz-full``: ``parse_file`` and then everything read, as the commands do and more: every
  instruction's ``attributes`` and ``metadata``, every computation's ``declared_signature``.
  This is the figure to hold against XLA's, which has done all of that when it returns. Memory comes from the kernel: the peak RSS (VmHWM, reset just before the
first parse through /proc/self/clear_refs; ``getrusage`` where that is unavailable) and the
current RSS, so C++ allocations count as fully as Python ones. Time is wall time and CPU time of
the process (``time.process_time``: on a shared, busy machine it moves less than wall time).
"""

from __future__ import annotations

import gc
import json
import os
import resource
import sys
import time
from pathlib import Path

_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def rss_now() -> int:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * _PAGE
    except OSError:
        return peak_rss()


def reset_peak() -> bool:
    """Reset the kernel's peak-RSS mark (Linux ≥ 4.0); False where that is not possible."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def peak_rss() -> int:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    r = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return r if sys.platform == "darwin" else r * 1024


def load_parser(name: str):
    """``(parse(path) -> module, counts(module) -> (computations, instructions))``."""
    if name in ("hloviz", "hloviz-full"):
        import hloviz

        def counts(m):
            return len(m.computations), sum(len(c.instructions) for c in m.computations)

        if name == "hloviz":
            return hloviz.parse_file, counts

        def parse_and_read(path):
            module = hloviz.parse_file(path)
            for computation in module.computations:
                computation.declared_signature  # noqa: B018 - read for its cost
                for inst in computation.instructions:
                    inst.attributes  # noqa: B018 - read for its cost
                    inst.metadata  # noqa: B018 - read for its cost
            return module

        return parse_and_read, counts
    if name == "xla":
        from jaxlib import _hlo  # pyright: ignore[reportAttributeAccessIssue]  # private extension module, absent from jaxlib's stubs

        def parse(path):
            with open(path, encoding="utf-8") as f:
                text = f.read()
            return _hlo.hlo_module_from_text(text)

        def counts(m):
            comps = m.computations()
            return len(comps), sum(len(c.instructions()) for c in comps)

        return parse, counts
    raise SystemExit(f"unknown parser {name!r} (hloviz, hloviz-full or xla)")


def main() -> int:
    name, path, repeats = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3])
    parse, counts = load_parser(name)
    gc.collect()
    before = rss_now()
    can_reset = reset_peak()
    peak_before = peak_rss()
    t0, c0 = time.perf_counter(), time.process_time()
    module = parse(path)
    times, cpu = [time.perf_counter() - t0], [time.process_time() - c0]
    peak = peak_rss()
    gc.collect()
    retained = rss_now() - before
    peak_added = peak - before if can_reset else max(0, peak - max(before, peak_before))
    n_comps, n_instr = counts(module)
    for _ in range(repeats - 1):
        del module
        gc.collect()
        t0, c0 = time.perf_counter(), time.process_time()
        module = parse(path)  # noqa: F841 - held (as in the first round) until the next round frees it
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    print(json.dumps({"parser": name, "times": times, "cpu_times": cpu, "peak_added": peak_added, "retained": retained,
                      "computations": n_comps, "instructions": n_instr, "baseline": before}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
