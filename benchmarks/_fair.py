"""Helpers that keep a benchmark's two sides honest (CONTRIBUTING.md, "Benchmarks").

* :func:`clear_caches` empties every memoising cache in the imported ``hloviz`` modules
  (``functools.lru_cache``/``cache`` functions: op names read once per distinct string, …), so
  a round timed after another starts as cold as the first round and as a fresh process: a
  benchmark whose rounds share a warm cache flatters hloviz against a reference that cannot
  cache (a fresh parse). Call it before each round.
* :func:`alternating` yields the sides of a round in A, B order on even rounds and B, A on odd
  ones, so neither side always runs second in a warmer process.
* :func:`run_process` times one command line in a fresh process (wall and CPU seconds,
  children included): what a user's command costs, start-up and imports included.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TypeVar

_T = TypeVar("_T")
ROOT = Path(__file__).resolve().parent.parent


def clear_caches() -> int:
    """Empty the ``cache_clear``-able functions of every imported ``hloviz`` module; how many."""
    cleared = 0
    for name, module in list(sys.modules.items()):
        if module is None or not (name == "hloviz" or name.startswith("hloviz.")):
            continue
        for value in list(vars(module).values()):
            clear = getattr(value, "cache_clear", None)
            if callable(clear) and getattr(value, "__module__", None) == name:
                clear()
                cleared += 1
    return cleared


def alternating(sides: Sequence[_T], round_number: int) -> Iterator[_T]:
    """``sides`` in order on even rounds, reversed on odd ones."""
    yield from (sides if round_number % 2 == 0 else list(sides)[::-1])


def run_process(argv: Sequence[str], *, cwd: Path = ROOT) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the process and its children) of ``python ARGV`` with this
    checkout first on the path; raises on a failing command."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, *argv], check=True, capture_output=True, cwd=cwd, env=env)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
