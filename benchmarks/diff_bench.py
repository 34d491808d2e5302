"""What ``hloviz diff`` costs against starting Python and parsing both modules in full, measured
in the same run; and the diff of two 300k modules.

    python benchmarks/diff_bench.py            # two-version transformer captures (TF 2.17 vs 2.21)
    python benchmarks/diff_bench.py --large    # two ~300k-instruction modules: time and peak RSS
    python benchmarks/diff_bench.py A B        # any two capture folders / HLO files
    python benchmarks/diff_bench.py --check    # exit 1 when a target is missed

Default input: the oldest and newest ``samples/captures/transformer_train-tf*`` capture (a small
transformer training step captured under two TensorFlow versions with ``hloviz versions
samples/transformer_train.py:transformer_train --tf 2.17 --tf 2.21``).

What is timed, each in a fresh process, the two alternating (A B A B …, ``--repeats`` of each),
wall clock from ``fork`` to exit:

- **the command**: ``python -m hloviz diff A B`` exactly as a user runs it (its report to
  /dev/null): Python's start, the imports (Typer included), reading both sides (capture.json
  too), the diff and its report;
- **the reference**: ``python -c`` that imports hloviz and parses both optimized modules *in
  full*: every instruction's attributes and metadata and every computation's signature read
  (hloviz defers those; XLA's parser reads them eagerly, and the diff reads most of them);
- and, for comparison, start + the lazy parse alone (``parse_file`` of both, nothing read).

It prints the best and the median of each and command/reference of the best. In the same
process it also times ``diff_modules`` alone against the full parse of both modules (best of
``--repeats``, alternating), to tell the diff's own cost from the command's.

``--large`` diffs the benchmark's 250-layer transformer module against the same model at another
width (benchmarks/_data.py generates both once, with JAX) in a fresh process, reporting the
time and the peak RSS the diff adds on top of the two parsed modules.

Targets: ``hloviz diff`` ≤ 3× start + full parse (issue 19); two 300k-instruction modules diff
in under a minute, in bounded memory (issue 5). Only ratios of one run mean anything on a noisy
machine.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _data
from _parse_child import peak_rss, reset_peak, rss_now

RATIO_TARGET, LARGE_SECONDS_TARGET = 3.0, 60.0
_T = TypeVar("_T")


def _import_diff():
    """``diff_modules`` or None while the diff is not written yet."""
    sys.path.insert(0, str(_data.REPO))
    try:
        from hloviz.analysis.diff import diff_modules
    except ImportError:
        return None
    return diff_modules


def _post(p: Path) -> Path:
    return p / "post.hlo" if p.is_dir() else p


#: What the parser defers, read: every instruction's attributes and metadata, every
#: computation's declared signature (what XLA's parser builds eagerly). The reference process
#: runs this text; this process execs the same text, so both read the same.
_READ_EVERYTHING = """
def read_everything(module):
    n = 0
    for comp in module.computations:
        if comp.declared_signature is not None:
            n += 1
        for inst in comp.instructions:
            n += len(inst.attributes)
            if inst.metadata.op_name:
                n += 1
    return n
"""

#: The reference process: start, import hloviz, parse both modules and read everything in them.
_FULL_PARSE = "import sys\nimport hloviz\n" + _READ_EVERYTHING + """
for path in sys.argv[1:]:
    read_everything(hloviz.parse_file(path))
"""

#: The lazy reference: start, import hloviz, parse both modules (attributes left unsplit).
_LAZY_PARSE = "import sys\nimport hloviz\nfor path in sys.argv[1:]:\n    hloviz.parse_file(path)\n"

_namespace: dict = {}
exec(_READ_EVERYTHING, _namespace)  # our own text, above: the same code in both processes
read_everything = _namespace["read_everything"]


def _env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=os.pathsep.join([str(_data.REPO), os.environ.get("PYTHONPATH", "")]))


def _wall(cmd: list[str]) -> tuple[float, float]:
    """Run ``cmd``; its wall-clock seconds and its CPU seconds (user + system, from ``wait4``:
    the figure that holds on a machine other jobs are loading)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, env=_env())
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise _data.BenchError(f"{' '.join(cmd[:4])} … exited with {proc.returncode}")
    return wall, usage.ru_utime + usage.ru_stime


def run_command(a: Path, b: Path, repeats: int) -> bool:
    """``hloviz diff A B`` against start + full parse of both optimized modules, alternating."""
    py = sys.executable
    command = [py, "-m", "hloviz", "diff", str(a), str(b)]
    reference = [py, "-c", _FULL_PARSE, str(_post(a)), str(_post(b))]
    lazy = [py, "-c", _LAZY_PARSE, str(_post(a)), str(_post(b))]
    for cmd in (reference, lazy, command):  # warm the file cache and the .pyc files for each
        _wall(cmd)
    runs: dict[str, list[tuple[float, float]]] = {"full": [], "lazy": [], "diff": []}
    for _ in range(repeats):
        runs["full"].append(_wall(reference))
        runs["lazy"].append(_wall(lazy))
        runs["diff"].append(_wall(command))
    names = {"full": "start + full parse of both", "lazy": "start + lazy parse of both", "diff": "hloviz diff A B"}
    print(f"fresh processes, alternating, {repeats} each: best (median) seconds")
    print(f"{'':28} {'wall':>15} {'CPU':>15}")
    for key, what in names.items():
        wall, cpu = [w for w, _ in runs[key]], [c for _, c in runs[key]]
        print(f"{what:28} {min(wall):7.3f} ({statistics.median(wall):.3f}) {min(cpu):7.3f} ({statistics.median(cpu):.3f})")

    def ratio(key: str, column: int) -> float:
        return min(r[column] for r in runs["diff"]) / min(r[column] for r in runs[key])

    ok = ratio("full", 0) <= RATIO_TARGET
    print(f"\nhloviz diff / (start + full parse): wall {ratio('full', 0):.2f}, CPU {ratio('full', 1):.2f}   "
          f"target <= {RATIO_TARGET:.0f}  {'ok' if ok else 'MISSED'}")
    print(f"hloviz diff / (start + lazy parse): wall {ratio('lazy', 0):.2f}, CPU {ratio('lazy', 1):.2f}")
    return ok


def _timed(fn: Callable[[], _T]) -> tuple[float, _T]:
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def _describe_diff(d) -> str:
    s = d.summary
    return (f"unchanged {s.unchanged:,}, changed {s.changed:,}, added {s.added:,}, removed {s.removed:,}; "
            f"kernels {s.kernels.before:,} -> {s.kernels.after:,}")


def run_pair(a: Path, b: Path, repeats: int) -> None:
    """In this process: ``diff_modules`` alone against the full parse of both modules, alternating."""
    import hloviz

    a, b = _post(a), _post(b)
    for p in (a, b):
        size, lines = _data.describe(p)
        print(f"{p}: {_data.mb(size)}, {lines:,} instruction lines")
    diff_modules = _import_diff()
    assert diff_modules is not None

    def full_parse():
        ma, mb_ = hloviz.parse_file(a), hloviz.parse_file(b)
        read_everything(ma)
        read_everything(mb_)
        return ma, mb_

    parse_t, diff_t = [], []
    d = None
    for _ in range(repeats):
        gc.collect()
        secs, (ma, mb_) = _timed(full_parse)
        parse_t.append(secs)
        gc.collect()
        secs, d = _timed(lambda: diff_modules(ma, mb_))  # noqa: B023 - called at once
        diff_t.append(secs)
    print(f"in-process, best of {repeats}: full parse of both {min(parse_t):.3f} s, "
          f"diff_modules {min(diff_t):.3f} s ({min(diff_t) / min(parse_t):.2f}×)   {_describe_diff(d)}")


def child_large(a: Path, b: Path) -> int:
    """In a fresh process: parse both, then diff with the peak RSS mark reset just before."""
    import hloviz

    diff_modules = _import_diff()
    base = rss_now()
    t0 = time.perf_counter()
    ma, mb_ = hloviz.parse_file(a), hloviz.parse_file(b)
    t_parse = time.perf_counter() - t0
    gc.collect()
    before = rss_now()
    out = {"parse_seconds": t_parse, "modules_rss": before - base,
           "instructions": [sum(len(c.instructions) for c in m.computations) for m in (ma, mb_)]}
    if diff_modules is not None:
        can_reset = reset_peak()
        t0 = time.perf_counter()
        d = diff_modules(ma, mb_)
        out["diff_seconds"] = time.perf_counter() - t0
        out["diff_peak_added"] = (peak_rss() - before) if can_reset else None
        out["result"] = _describe_diff(d)
    print(json.dumps(out))
    return 0


def run_large() -> bool:
    a, b = _data.ensure_large_module(), _data.ensure_second_large_module()
    for p in (a, b):
        size, lines = _data.describe(p)
        print(f"{p.relative_to(_data.REPO)}: {_data.mb(size)}, {lines:,} instruction lines")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(_data.REPO), os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, __file__, "--child-large", str(a), str(b)], env=env,
                          stdout=subprocess.PIPE, text=True)
    if done.returncode != 0:
        print(f"the large diff failed (exit {done.returncode})")
        return False
    r = json.loads(done.stdout.strip().splitlines()[-1])
    print(f"parse both: {r['parse_seconds']:.1f} s, the two modules hold {_data.mb(r['modules_rss'])} of RSS")
    if "diff_seconds" not in r:
        print("diff not available yet (hloviz.analysis.diff.diff_modules is missing)")
        return True
    peak = r["diff_peak_added"]
    print(f"diff: {r['diff_seconds']:.1f} s, peak RSS added by the diff: "
          f"{_data.mb(peak) if peak is not None else 'unknown (no /proc/self/clear_refs)'}")
    print(f"      {r['result']}")
    ok = r["diff_seconds"] <= LARGE_SECONDS_TARGET
    print(f"\ndiff time: target < {LARGE_SECONDS_TARGET:.0f} s  {'ok' if ok else 'MISSED'}; "
          f"diff/parse {r['diff_seconds'] / r['parse_seconds']:.2f}")
    return ok


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").partition("\n")[0])
    ap.add_argument("files", nargs="*", type=Path, help="two HLO files or capture folders")
    ap.add_argument("--large", action="store_true", help="diff two ~300k-instruction modules")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    ap.add_argument("--child-large", nargs=2, type=Path, help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child_large:
        return child_large(*a.child_large)
    if not _data.have_hloviz():
        print("hloviz is missing: nothing to measure")
        return 2
    if a.large:
        ok = run_large()
    else:
        if a.files:
            if len(a.files) != 2:
                raise _data.BenchError("give two files (or none for the transformer captures)")
            pair = list(a.files)
        else:
            caps = _data.transformer_captures()
            if len(caps) < 2:
                raise _data.BenchError("need two samples/captures/transformer_train-tf*/ folders; "
                                       "make them with hloviz versions (samples/README.md)")
            pair = [caps[0].parent, caps[-1].parent]
        for p in pair:
            if not _post(p).is_file():
                raise _data.BenchError(f"{_post(p)}: no such file")
        run_pair(pair[0], pair[1], a.repeats)
        ok = run_command(pair[0], pair[1], a.repeats)
    return 1 if a.check and not ok else 0


if __name__ == "__main__":
    sys.exit(main())
