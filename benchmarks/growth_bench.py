"""Does every command grow linearly? Each command on saved captures 1×, 4× and 16× a training step.

Usage:  python benchmarks/growth_bench.py [--base CAPTURE] [--sizes 1,4,16] [--commands stats,…]

The base is a saved capture of a real training step (default: MobileNetV3Small + Adam,
``samples/captures/mobilenet_v3_adam``, 1,308 kernels; ``--base samples/captures/keras_cnn_train``
is a quick one). A capture k times its size holds k side-by-side copies of the model in both
modules (``tests/scaling.py``: every instruction renamed, every op-name segment prefixed ``cK_``,
so k times the kernels, scopes and named parameters), with the capture's parameter names and
Keras layer scopes copied alike; the source map is left out. XLA's buffer assignment is left
out too (it describes the one compiled module): ``memory`` estimates, as on any HLO.

Each command runs in a fresh process (``python -m hloviz …``, output to /dev/null, its bytecode
cached as an install's is: :data:`PYCACHE`) and is
timed by its CPU time (user + system, this process's children: Graphviz included), which a
loaded machine disturbs far less than the wall clock. The start-up (``python -m hloviz --help``)
is measured alike and taken off before the exponent is computed: ``log(t16/t4) / log(4)`` (the
largest two sizes; 1.0 is linear, 2.0 quadratic). A command whose exponent exceeds 1.2 fails the
run (exit 1). Issue 32: no per-kernel scan of all kernels, no per-parameter search of the tree.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from hloviz.capture import load_target  # noqa: E402
from hloviz.capture.saved import write_folder  # noqa: E402
from tests.scaling import prefixed_name, scaled_parameter_names, scaled_text  # noqa: E402

DEFAULT_BASE = REPO / "samples" / "captures" / "mobilenet_v3_adam"
LIMIT = 1.2

#: name → the command's arguments after ``hloviz`` (CAP: the capture folder, OUT: a scratch folder)
COMMANDS = {
    "stats": ["stats", "CAP"],
    "stats --json": ["stats", "CAP", "--json"],
    "stats --by scope": ["stats", "CAP", "--by", "scope"],
    "memory": ["memory", "CAP"],
    "diff pre post": ["diff", "CAP/pre.hlo", "CAP/post.hlo"],
    # Graphviz's default 30 s (wall) is too short for a 16× module on a loaded machine: the CPU is measured
    "render --stage both": ["render", "CAP", "--stage", "both", "-o", "OUT/both.svg", "--timeout", "900"],
    "show": ["show", "CAP", "-o", "OUT/show", "--timeout", "900"],
}
DEFAULT_COMMANDS = "stats,stats --json,stats --by scope,memory,diff pre post,render --stage both"


def scaled_capture(base: Path, copies: int, out: Path) -> int:
    """Write the capture ``copies`` times ``base`` to ``out``; returns its instruction count."""
    cap = load_target(str(base))
    info = json.loads((base / "capture.json").read_text())
    pre, post = cap.pre_module(), cap.post_module()
    assert pre is not None and post is not None and post.entry is not None
    names = info.get("parameter_names") or {}
    scopes = info.get("layer_scopes") or {}
    scaled_info = {k: v for k, v in info.items()
                   if k not in ("source_map", "tf_ops", "tf_inputs", "tf_outputs", "memory_file")}
    scaled_info["parameter_names"] = scaled_parameter_names(names, len(post.entry.parameters), copies)
    scaled_info["layer_scopes"] = {prefixed_name(k, c): prefixed_name(v, c)
                                   for c in range(copies) for k, v in scopes.items()}
    post_text = scaled_text(post, copies)
    write_folder(out, scaled_text(pre, copies), post_text, scaled_info)
    return post_text.count("\n")


#: Where the commands' bytecode is cached: a user's install has its ``.pyc`` files, so a command
#: must not pay for compiling hloviz's sources (about 1 s of CPU) on every run, as it does where
#: ``PYTHONDONTWRITEBYTECODE`` is set (this project's shared machine sets it).
PYCACHE = REPO / "build" / "bench" / "pycache"


def command_env(root: Path = REPO) -> dict[str, str]:
    """The environment of a timed command: the hloviz under ``root`` imported, its bytecode
    cached under ``root``'s own :data:`PYCACHE`."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**env, "PYTHONPATH": str(root), "PYTHONPYCACHEPREFIX": str(root / PYCACHE.relative_to(REPO))}


def cpu_of(argv: list[str], root: Path = REPO) -> tuple[float, float]:
    """(CPU seconds of the child and its children, wall seconds) of one run of ``argv`` (with
    the hloviz under ``root``)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=root,
                          env=command_env(root))
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"error: {' '.join(argv)} failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall


def warm_up(root: Path = REPO) -> None:
    """Compile hloviz's sources under ``root`` (and what the commands import) into its
    :data:`PYCACHE` once."""
    code = "import hloviz.cli, hloviz.api, hloviz.analysis, hloviz.render, hloviz.capture, compileall; " \
           f"compileall.compile_dir({str(root / 'hloviz')!r}, quiet=1)"
    subprocess.run([sys.executable, "-c", code], env=command_env(root), cwd=root, check=True,
                   stdout=subprocess.DEVNULL)


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").partition("\n")[0])
    ap.add_argument("--base", type=Path, default=DEFAULT_BASE)
    ap.add_argument("--sizes", default="1,4,16")
    ap.add_argument("--commands", default=DEFAULT_COMMANDS, help=f"comma-separated, of: {', '.join(COMMANDS)}")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    chosen = [c.strip() for c in args.commands.split(",") if c.strip()]
    unknown = [c for c in chosen if c not in COMMANDS]
    if unknown or len(sizes) < 2:
        raise SystemExit(f"error: unknown command {unknown} (of {list(COMMANDS)}), or fewer than two sizes")
    hloviz = [sys.executable, "-m", "hloviz"]
    warm_up()
    start_cpu = min(cpu_of([*hloviz, "--help"])[0] for _ in range(3))
    print(f"base: {args.base}; start-up (python -m hloviz --help) {start_cpu:.2f} s CPU, taken off below")
    with tempfile.TemporaryDirectory() as tmp:
        folders = {}
        for k in sizes:
            folders[k] = Path(tmp) / f"x{k}"
            lines = scaled_capture(args.base, k, folders[k])
            print(f"  {k:>3}×: {lines:,} lines of optimized HLO")
        header = " ".join(f"{f'{k}× s CPU':>11}" for k in sizes)
        print(f"{'command':<22} {header} {'exponent':>9}   (CPU minus start-up; wall of the largest)")
        worst = 0.0
        for name in chosen:
            times = {}
            wall = 0.0
            for k in sizes:
                out = Path(tmp) / f"out{k}"
                out.mkdir(exist_ok=True)
                argv = [*hloviz, *(a.replace("CAP", str(folders[k])).replace("OUT", str(out)) for a in COMMANDS[name])]
                try:
                    cpu, wall = cpu_of(argv)
                except SystemExit as failed:  # say so and go on with the next command
                    print(f"{name:<22} failed at {k}×: {str(failed).splitlines()[-2:]}", flush=True)
                    break
                times[k] = max(cpu - start_cpu, 1e-3)
            if len(times) < len(sizes):
                worst = max(worst, float("inf"))
                continue
            a, b = sizes[-2], sizes[-1]
            exponent = math.log(times[b] / times[a]) / math.log(b / a)
            worst = max(worst, exponent)
            cells = " ".join(f"{times[k]:>11.2f}" for k in sizes)
            flag = "ok" if exponent <= LIMIT else "OVER"
            print(f"{name:<22} {cells} {exponent:>9.2f}   {flag}  (wall {wall:.1f} s)", flush=True)
    print(f"largest exponent {worst:.2f} — {'within' if worst <= LIMIT else 'OVER'} the {LIMIT} limit")
    return 0 if worst <= LIMIT else 1


if __name__ == "__main__":
    raise SystemExit(main())
