"""Hostile inputs through the real commands: wall time and peak memory (RSS) of each, in a
fresh process, and the growth of each hostile shape from 10× to 100× in the same run.

Part 1 runs the cases a review of hloviz reported (its figures then: a 39 KB ``.hlo.gz`` with a
40 MB ``op_name`` took 30 s and 6.8 GB in ``render -o x.dot``; 20k/40k/80k blank lines after a
module took 4/14/84 s in ``stats --json``; one shape of 100k dimensions 56 s in ``stats``; a
1 MB ``.gz`` inflating to 1 GB was killed at 300 s; an op name 40,000 scopes deep, a 276-byte
``.gz``, took 6-8 GB in ``render``, ``show``, ``stats --by scope`` and ``diff -o``; two modules
whose ROOT tuples have 40,000 operands, half differing, took 106 s in ``diff`` where ``stats``
took 0.45 s), and 50 MB of each text of short lines
(``tests/hostile_inputs.SHORT_LINE_SHAPES``: blank, ``}`` or ``ab`` lines took up to 80 s and
10 GB before lines were split a block at a time). Each command is one process; its peak RSS
comes from ``wait4``. The reference for each is the same command on the seed capture's
``post.hlo``, measured in the same run.

Part 2 prints, for every shape of ``tests/hostile_inputs.GROWTH_SHAPES``, CPU time and peak
traced memory at 1×, 10×, 100× (in-process), and (t100 − t1) / (t10 − t1): about 11 when linear,
about 100 when quadratic.

Run: ``python benchmarks/hostile_bench.py [--scale 1.0] [--skip-commands] [--skip-growth]``;
``--scale 0.1`` makes part 1's inputs ten times smaller.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests import hostile_inputs as H  # noqa: E402


def run(args: list[str], cwd: Path) -> tuple[float, int, int]:
    """(wall seconds, peak RSS in MB, exit code) of ``python -m hloviz ARGS``."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "hloviz", *args], cwd=cwd, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return time.perf_counter() - started, usage.ru_maxrss // 1024, proc.returncode


def commands(folder: Path, scale: float) -> None:
    import gzip

    def n(x: float) -> int:
        return max(1, int(x * scale))

    cases: list[tuple[str, list[str]]] = []
    ref = folder / "seed.hlo"
    ref.write_bytes((H.SEED / "post.hlo").read_bytes())
    cases.append(("reference: seed post.hlo, stats --json", ["stats", "--json", str(ref)]))
    cases.append(("reference: seed post.hlo, render -o x.dot", ["render", str(ref), "-o", str(folder / "r.dot")]))
    op = folder / "op_name.hlo.gz"
    op.write_bytes(gzip.compress(H.long_op_name(n(40_000_000)).encode(), 9))
    cases.append((f"{op.stat().st_size // 1024} KB .gz, {n(40):g} MB op_name: render -o x.dot",
                  ["render", str(op), "-o", str(folder / "x.dot")]))
    line = folder / "line.hlo"
    line.write_text(H.long_line(n(10_000_000)))
    for cmd in (["stats"], ["render", "-o", str(folder / "l.dot")]):
        cases.append((f"{n(10):g} MB line: {cmd[0]}", [cmd[0], str(line), *cmd[1:]]))
    for k in (20_000, 40_000, 80_000):
        blank = folder / f"blank{k}.hlo"
        blank.write_text(H.nested_calls(3).replace(", is_scheduled=true", "") + "\n" * n(k))
        cases.append((f"{n(k)} blank lines: stats --json", ["stats", "--json", str(blank)]))
    dims = folder / "dims.hlo"
    dims.write_text(H.big_shape(n(100_000), size=2, scheduled=True))
    cases.append((f"{n(100_000)} dimensions of 2 (refused: over int64): stats", ["stats", str(dims)]))
    ones = folder / "ones.hlo"
    ones.write_text(H.rank_of_ones(n(100_000)))
    cases.append((f"{n(100_000)} dimensions of 1: stats", ["stats", str(ones)]))
    bomb = H.bomb(folder / "bomb.hlo.gz", n(1_000_000_000))
    cases.append((f"{bomb.stat().st_size // 1024} KB .gz inflating to {n(1000):g} MB: stats (refused at the limit)",
                  ["stats", str(bomb)]))
    small_bomb = H.bomb(folder / "bomb100.hlo.gz", n(100_000_000))
    cases.append(((f"{small_bomb.stat().st_size // 1024} KB .gz inflating to {n(100):g} MB (under the limit): "
                   "stats --pre"), ["stats", "--pre", str(small_bomb)]))
    for name, build in H.SHORT_LINE_SHAPES.items():
        short = folder / f"short_{name}.hlo"
        short.write_text(build(n(50_000_000)))
        cases.append((f"{n(50):g} MB of {name.replace('_', ' ')}: stats --json", ["stats", "--json", str(short)]))
    for deep in (("fusions", H.nested_fusions(1000)), ("calls", H.nested_calls(1000)),
                 ("whiles", H.nested_calls(1000, "while"))):
        path = folder / f"deep_{deep[0]}.hlo"
        path.write_text(deep[1])
        cases.append((f"{deep[0]} nested 1000 deep: stats --json", ["stats", "--json", str(path)]))
    deep = folder / "deep_scope.hlo.gz"
    deep.write_bytes(gzip.compress(H.deep_scope(n(40_000)).encode(), 9))
    label = f"{deep.stat().st_size} B .gz, op_name {n(40_000)} scopes deep"
    for cmd in (["render", str(deep), "-o", str(folder / "deep.html")], ["show", str(deep), "-o", str(folder / "site")],
                ["stats", str(deep), "--by", "scope"], ["diff", str(deep), str(deep), "-o", str(folder / "deep.svg")]):
        cases.append((f"{label}: {cmd[0]}{' --by scope' if '--by' in cmd else ''}", cmd))
    wide_a, wide_b = folder / "wide_a.hlo", folder / "wide_b.hlo"
    wide_a.write_text(H.wide_root(n(40_000)))
    wide_b.write_text(H.wide_root(n(40_000), differ=True))
    cases.append((f"ROOT tuple of {n(40_000)} operands: stats", ["stats", str(wide_b)]))
    cases.append((f"ROOT tuples of {n(40_000)} operands, half differing: diff", ["diff", str(wide_a), str(wide_b)]))
    print(f"{'case':72s} {'wall':>8s} {'peak RSS':>9s} {'exit':>4s}")
    for label, args in cases:
        wall, rss, code = run(args, folder)
        print(f"{label:72s} {wall:7.2f}s {rss:7d}MB {code:4d}", flush=True)


def growth(folder: Path) -> None:
    print(f"\n{'shape':18s} {'1x cpu':>8s} {'10x cpu':>8s} {'100x cpu':>9s} {'growth':>7s} {'100x peak':>10s}")
    for name in H.GROWTH_SHAPES:
        g = H.growth(name, folder)
        ratio = (g[100][0] - g[1][0]) / max(g[10][0] - g[1][0], 1e-3)
        print(f"{name:18s} {g[1][0]:7.3f}s {g[10][0]:7.3f}s {g[100][0]:8.3f}s {ratio:7.1f} "
              f"{g[100][1] / 2**20:8.1f}MB", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--skip-commands", action="store_true")
    ap.add_argument("--skip-growth", action="store_true")
    opts = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        if not opts.skip_commands:
            commands(Path(tmp), opts.scale)
        if not opts.skip_growth:
            growth(Path(tmp))


if __name__ == "__main__":
    main()
