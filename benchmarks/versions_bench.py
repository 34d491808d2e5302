"""What a ``--tf VERSION`` capture costs on top of a plain one, once its environment exists.

    python benchmarks/versions_bench.py               # TF 2.21: --tf 2.21 against the installed 2.21
    python benchmarks/versions_bench.py --repeats 3

Reference, measured in the same run: ``hloviz dump samples/fused_additions.py:fused_additions``
with the TensorFlow installed here (the project venv's 2.21). Measured: the same command with
``--tf <that version>``, which captures in the managed environment (built first if missing, and
that build is timed apart, not counted). Both are the same command line in a fresh process,
timed the same way (wall time, start to exit), ``--repeats`` runs each, in rounds that alternate
which side goes first, so that a noisy minute falls on both; best and median of each side and
their ratios are printed: what the isolated capture adds — a second interpreter, and hloviz and
TensorFlow imported there. Also timed: :meth:`EnvManager.ensure` on the existing environment
(the per-run check), 100 calls.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TARGET = "samples/fused_additions.py:fused_additions"


def _dump(extra: list[str], out: Path) -> float:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "hloviz", "dump", TARGET, "-o", str(out), *extra], cwd=REPO,
                          env=env, capture_output=True, text=True)
    took = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"hloviz dump {' '.join(extra)} failed:\n{done.stderr}")
    return took


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").partition("\n")[0])
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    sys.path.insert(0, str(REPO))
    import importlib.util
    from importlib.metadata import version

    if importlib.util.find_spec("tensorflow") is None:
        raise SystemExit("the reference capture needs TensorFlow installed here (pip install 'hloviz[tf]')")

    tf_version = ".".join(version("tensorflow-cpu" if _has("tensorflow-cpu") else "tensorflow").split(".")[:2])
    from hloviz.capture.releases.envs import EnvManager

    manager = EnvManager()
    with tempfile.TemporaryDirectory() as tmp:
        if manager.find("tensorflow", tf_version) is None:
            took = _dump(["--tf", tf_version], Path(tmp) / "build")
            print(f"built the environment for TF {tf_version} first (not counted): {took:.1f} s")
        times: dict[str, list[float]] = {"plain": [], "isolated": []}
        for k in range(a.repeats):
            order = ("plain", "isolated") if k % 2 == 0 else ("isolated", "plain")
            for side in order:  # interleaved, the order alternating
                extra = [] if side == "plain" else ["--tf", tf_version]
                times[side].append(_dump(extra, Path(tmp) / f"{side}{k}"))
    started = time.perf_counter()
    for _ in range(100):
        manager.ensure("tensorflow", tf_version)
    check = (time.perf_counter() - started) / 100
    plain, isolated = times["plain"], times["isolated"]
    print(f"hloviz dump {TARGET}, {a.repeats} runs each, alternating (wall seconds: best, median):")
    print(f"  reference (TF {tf_version} installed here)   {min(plain):7.2f} {statistics.median(plain):7.2f}   "
          + ", ".join(f"{t:.2f}" for t in plain))
    print(f"  --tf {tf_version} (managed environment)     {min(isolated):7.2f} {statistics.median(isolated):7.2f}   "
          + ", ".join(f"{t:.2f}" for t in isolated))
    print(f"  ratio: {min(isolated) / min(plain):.2f} (best), "
          f"{statistics.median(isolated) / statistics.median(plain):.2f} (median)")
    print(f"  EnvManager.ensure on the existing environment: {check * 1e3:.2f} ms")
    return 0


def _has(dist: str) -> bool:
    from importlib.metadata import PackageNotFoundError, version

    try:
        version(dist)
        return True
    except PackageNotFoundError:
        return False


if __name__ == "__main__":
    sys.exit(main())
