"""How long the scope tree takes, against parsing the same module, measured in the same run.

    python benchmarks/scope_bench.py                          # the real-model captures in samples/
    python benchmarks/scope_bench.py --file big.hlo           # any optimized HLO text (.gz too)
    python benchmarks/scope_bench.py --large                  # the benchmarks' large JAX module
    python benchmarks/scope_bench.py --layers 25              # a smaller one of the same kind

For each module: the best of ``--repeats`` rounds, each on a fresh parse with hloviz's memoising
caches emptied first (``_fair.clear_caches``: a later round is as cold as the first and as a
user's process; warm op-name caches made rounds 9-25% faster than a user sees), of parsing it (the
reference), finding its kernels, building its scope tree (op names read, weights placed, scopes ordered by data flow,
kernels attributed) and the per-scope table (``stats --by scope``'s rows), with each step's
ratio to the parse. The scope tree should cost about what parsing costs (ratio ≲ 1), so that
``--by scope`` and the layer picture add little to what every command pays already.
Machines are noisy: only the ratios of one run mean anything; nothing here is a test.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from hloviz import HloModule
    from hloviz.analysis import KernelReport, ScopeTree

_T = TypeVar("_T")

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

CAPTURES = ("mobilenet_v2", "resnet50", "keras_transformer", "jax_scopes")


def timed(fn: Callable[[], _T]) -> tuple[float, _T]:
    t = time.perf_counter()
    result = fn()
    return time.perf_counter() - t, result


def one_round(text: str) -> tuple[dict[str, float], HloModule, ScopeTree, KernelReport]:
    """Parse ``text`` afresh and run each step on it: each step's seconds, and what they made."""
    import _fair

    import hloviz
    from hloviz.analysis import build_scope_tree, kernels
    from hloviz.analysis.scopes.stats import scope_rows

    _fair.clear_caches()
    steps: dict[str, float] = {}
    steps["parse (reference)"], module = timed(lambda: hloviz.parse(text))
    steps["kernels"], report = timed(lambda: kernels(module))
    steps["scope tree"], tree = timed(lambda: build_scope_tree(module, stage="post", kernel_report=report))
    steps["scope rows"], _rows = timed(lambda: scope_rows(None, tree))
    return steps, module, tree, report


def bench(label: str, text: str, repeats: int) -> None:
    """Each round parses afresh, so each step pays for what it reads first (the parser splits an
    instruction's attributes, metadata included, only when asked): the best round of each step."""
    best, module, tree, report = one_round(text)
    for _ in range(repeats - 1):
        steps, module, tree, report = one_round(text)
        for step, secs in steps.items():
            best[step] = min(best[step], secs)
    print(f"{label}: {module.instruction_count:,} instructions, {len(tree):,} scopes, {report.count:,} kernels")
    for step, secs in best.items():
        print(f"  {step:<18} {secs * 1000:9.1f} ms   {secs / best['parse (reference)']:5.2f}× parse")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").partition("\n")[0])
    ap.add_argument("--file", type=Path, action="append", help="an optimized HLO text file (repeatable)")
    ap.add_argument("--large", action="store_true", help="the benchmarks' large module (generated once with JAX)")
    ap.add_argument("--layers", type=int, help="a JAX llama-style training step of this many layers "
                                                "(generated once into build/bench/; 250 is --large)")
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args(argv)
    from hloviz.capture.saved import read_text, stage_file

    files: list[tuple[str, Path]] = [(p.name, p) for p in a.file or ()]
    if a.large or a.layers:
        import _data

        if a.large:
            files.append(("large module", _data.ensure_large_module()))
        if a.layers:
            files.append((f"{a.layers}-layer training step", _data.ensure_module("llama", a.layers, 64)))
    if not files:
        for name in CAPTURES:
            path = stage_file(ROOT / "samples" / "captures" / name, "post.hlo")
            if path is not None:
                files.append((name, path))
    for label, path in files:
        bench(label, read_text(path), a.repeats)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
