"""What the pass history adds to ``hloviz show``: time and report size.

The reference is the same dump folder without its per-pass snapshots (only XLA's
``before_optimizations`` and ``after_optimizations`` files, what a plain ``--xla_dump_to`` writes),
so both runs draw the same main pictures and explorer; the difference is reading the history
(every snapshot parsed once, neighbours compared), parsing the snapshots the report draws, and
drawing them within the explorer's bounds. Each run is ``hloviz show FOLDER -o OUT`` in a fresh
process (start-up and imports included, as a user runs it; no side inherits the other's warm
caches), the two alternating from round to round (plain first, then the history first), best of
``--repeat``; ``cpu s`` adds the CPU time of each process and its ``dot`` runs.

Run: ``python benchmarks/show_passes_bench.py [--repeat 3] [--set keras_cnn_train]`` (a set of
samples/captures/passes/).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SETS = ROOT / "samples" / "captures" / "passes"
sys.path.insert(0, str(Path(__file__).resolve().parent))

import _fair  # noqa: E402


def _show(target: Path, out: Path) -> tuple[float, float, int]:
    """``hloviz show TARGET -o OUT`` in a fresh process: wall s, CPU s, the report's size."""
    wall, cpu = _fair.run_process(["-m", "hloviz", "show", str(target), "-o", str(out)])
    return wall, cpu, (out / "report.html").stat().st_size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--set", default="keras_cnn_train")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        full, plain = Path(tmp) / "full", Path(tmp) / "plain"
        with tarfile.open(SETS / f"{args.set}.tar.xz") as tar:
            tar.extractall(full, filter="data")
        plain.mkdir()
        for p in full.iterdir():
            if "_optimizations" in p.name:
                shutil.copy2(p, plain / p.name)
        snapshots = len(list(full.iterdir())) - len(list(plain.iterdir()))
        times: dict[str, list[float]] = {"plain": [], "passes": []}
        cpus: dict[str, list[float]] = {"plain": [], "passes": []}
        sizes: dict[str, int] = {}
        for i in range(args.repeat):
            for name, folder in _fair.alternating((("plain", plain), ("passes", full)), i):
                took, cpu, size = _show(folder, Path(tmp) / f"out-{name}-{i}")
                times[name].append(took)
                cpus[name].append(cpu)
                sizes[name] = size
            print(f"  run {i + 1}: plain {times['plain'][-1]:.2f} s, with the pass history "
                  f"{times['passes'][-1]:.2f} s", flush=True)
    a, b = min(times["plain"]), min(times["passes"])
    print(f"{args.set}: {snapshots} snapshots")
    print(f"show (fresh processes, alternating), best of {args.repeat}: {a:.2f} s plain dump, {b:.2f} s with the "
          f"pass history: {b / a:.2f}×; cpu {min(cpus['plain']):.2f} s → {min(cpus['passes']):.2f} s")
    print(f"report.html: {sizes['plain'] / 1e6:.2f} MB plain, {sizes['passes'] / 1e6:.2f} MB with the history: "
          f"{sizes['passes'] / sizes['plain']:.2f}×")


if __name__ == "__main__":
    main()
