"""Break hloviz on purpose, one named mutation at a time, and see whether its fast tests notice.

The mutations live in ``scripts/mutations.toml``: each names a file, an exact snippet of it, the
snippet that replaces it (a realistic slip: an off-by-one, a reversed sort, a dropped cache-key
field, a field read from the wrong place), the fast test files that own the module, and whether
the slip changes what hloviz prints or draws (``equivalent = "why"`` when it does not).

Nothing is changed in place: the tracked and untracked (not ignored) files of this checkout are
copied once into a temporary folder; each mutation is written there, the owning tests run there
(``PYTHONPATH`` = the copy, the markers of ``make test-fast``, ``-x``), and the file is put back
before the next one. The copy is removed at the end, also on Ctrl-C.

    python scripts/mutants.py                  # all of them; writes benchmarks/results/mutants.txt
    python scripts/mutants.py -k docs -k tree  # those whose name holds one of the words
    python scripts/mutants.py --baseline       # first check each test set passes unmutated
    python scripts/mutants.py --list           # the mutations, without running anything

Exit status: 0 when every mutation that changes output was caught, 1 otherwise, 2 on a stale
mutation (its snippet is not in the file exactly once: the code moved on, update the list).
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LIST = ROOT / "scripts" / "mutations.toml"
RESULTS = ROOT / "benchmarks" / "results" / "mutants.txt"
#: The tests `make test-fast` runs (and nothing slow or browser-bound): what a developer runs on every change.
MARKERS = "not requires_tf and not requires_jax and not requires_network and not requires_chromium and not slow"


@dataclass(frozen=True)
class Mutation:
    name: str
    file: str
    original: str
    mutated: str
    tests: tuple[str, ...]
    what: str
    equivalent: str = ""


def load(path: Path = LIST) -> list[Mutation]:
    try:
        import tomllib
    except ImportError:  # Python 3.10: the same parser as a package
        try:
            import tomli as tomllib  # type: ignore[no-redef]
        except ImportError:
            raise SystemExit("scripts/mutants.py reads TOML: use Python 3.11+, or pip install tomli") from None
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    out = []
    for m in data["mutation"]:
        out.append(Mutation(m["name"], m["file"], m["original"], m["mutated"], tuple(m["tests"]), m["what"],
                            m.get("equivalent", "")))
    names = [m.name for m in out]
    if len(names) != len(set(names)):
        raise SystemExit(f"{path}: two mutations share a name")
    return out


def _copy_tree(dest: Path) -> None:
    files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                           check=True, capture_output=True).stdout.decode().split("\0")
    for rel in filter(None, files):
        src = ROOT / rel
        if not src.is_file() or src.is_symlink():
            continue
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, target)


def _pytest(tree: Path, tests: tuple[str, ...], timeout: float) -> tuple[int, str, float]:
    env = {**os.environ, "PYTHONPATH": str(tree), "PYTHONDONTWRITEBYTECODE": "1"}
    cmd = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "-m", MARKERS, *tests]
    started = time.monotonic()
    try:
        proc = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return -1, "timed out", time.monotonic() - started
    lines = [x for x in proc.stdout.splitlines() if x.strip()]
    failed = next((x for x in lines if x.startswith(("FAILED", "ERROR"))), lines[-1] if lines else proc.stderr[-300:])
    return proc.returncode, failed, time.monotonic() - started


def verdict(m: Mutation, rc: int) -> str:
    if rc == 0:
        return "equivalent" if m.equivalent else "UNCAUGHT"
    if rc == 5:
        return "NO TESTS"
    if rc == -1:
        return "timeout"
    return "caught"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("-k", action="append", default=[], help="run the mutations whose name holds this word")
    ap.add_argument("--baseline", action="store_true", help="first run each test set on the unmutated copy")
    ap.add_argument("--list", action="store_true", help="list the mutations and stop")
    ap.add_argument("--timeout", type=float, default=900, help="seconds for one mutation's tests")
    ap.add_argument("--out", type=Path, default=RESULTS, help="where to write the results (all mutations only)")
    args = ap.parse_args(argv)
    mutations = [m for m in load() if not args.k or any(k in m.name for k in args.k)]
    if args.list:
        for m in mutations:
            print(f"{m.name:45} {m.file}  [{', '.join(m.tests)}]{'  (equivalent)' if m.equivalent else ''}")
        return 0
    stale = [m.name for m in mutations if (ROOT / m.file).read_text(encoding="utf-8").count(m.original) != 1
             or not all((ROOT / t.split("::")[0]).is_file() for t in m.tests)]
    if stale:
        print("stale mutations (the snippet is not in the file exactly once, or a test file is missing):",
              ", ".join(stale), file=sys.stderr)
        return 2
    # SIGTERM (a CI timeout, kill PID) ends the run as Ctrl-C does: the running tests are
    # stopped and the temporary copy removed
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    work = Path(tempfile.mkdtemp(prefix="hloviz-mutants-"))
    rows: list[tuple[Mutation, str, float, str]] = []
    try:
        tree = work / "tree"
        _copy_tree(tree)
        shared = ROOT.parent / "shared"
        if shared.is_dir():  # tests look for ../shared beside the checkout
            (work / "shared").symlink_to(shared)
        if args.baseline:
            for tests in dict.fromkeys(m.tests for m in mutations):
                rc, line, took = _pytest(tree, tests, args.timeout)
                print(f"baseline {' '.join(tests)}: rc={rc} {took:.0f}s {line}", flush=True)
                if rc != 0:
                    print("the unmutated tests do not pass: fix that first", file=sys.stderr)
                    return 2
        for m in mutations:
            path = tree / m.file
            before = path.read_text(encoding="utf-8")
            path.write_text(before.replace(m.original, m.mutated), encoding="utf-8")
            try:
                rc, line, took = _pytest(tree, m.tests, args.timeout)
            finally:
                path.write_text(before, encoding="utf-8")
            v = verdict(m, rc)
            rows.append((m, v, took, line))
            print(f"{v:10} {m.name:45} {took:5.0f}s  {line[:150]}", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    counts = {v: sum(1 for _, x, _, _ in rows if x == v) for v in ("caught", "equivalent", "UNCAUGHT", "NO TESTS",
                                                                   "timeout")}
    summary = ", ".join(f"{n} {v.lower()}" for v, n in counts.items() if n)
    print(f"{len(rows)} mutations: {summary}")
    if not args.k:
        _write(args.out, rows, summary)
    return 0 if counts["UNCAUGHT"] == counts["NO TESTS"] == counts["timeout"] == 0 else 1


def _write(out: Path, rows: list[tuple[Mutation, str, float, str]], summary: str) -> None:
    lines = [f"# python scripts/mutants.py  ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())})",
             f"# machine: {platform.node()} {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
             f"# tests run per mutation: the listed files, -m \"{MARKERS}\", -x",
             f"# {len(rows)} mutations: {summary}", ""]
    for m, v, took, line in rows:
        lines.append(f"{v:10} {m.name}  ({m.file}; {took:.0f}s)")
        lines.append(f"           what: {m.what}")
        if m.equivalent:
            lines.append(f"           equivalent: {m.equivalent}")
        lines.append(f"           tests: {' '.join(m.tests)}")
        if v == "caught":
            lines.append(f"           by: {line[:200]}")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
