"""Every command on every saved sample capture: within 3 s, and ``show`` within 2× ``render``.

Usage:  python benchmarks/commands_bench.py [--captures a,b,…] [--show a,b,…] [--repeat 1]

Each command runs as a user runs it, ``python -m hloviz …`` in a fresh process with its output
to /dev/null, on a capture folder under ``samples/captures/``; the figure is its CPU time (user
+ system, the process and what it starts: Graphviz included), which a loaded machine disturbs far
less than the wall clock (the wall clock is printed too). Best of ``--repeat``.

Targets (issue 32): ``stats`` in every form, ``memory`` and ``render --stage both`` ≤ 3 s on each
capture; ``show`` ≤ 2× ``render --stage both`` of the same capture (``--show`` picks the
captures it runs on: it draws the explorer's every view, minutes on a loaded machine). The
reference printed beside each command is its target. Exit 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "benchmarks"))

from growth_bench import cpu_of, warm_up  # noqa: E402

CAPTURES = REPO / "samples" / "captures"
DEFAULT = "keras_cnn_train,inception_v3,densenet121,efficientnet_b0,jax_gpt_step12,mobilenet_v3_adam"
LIMIT_S = 3.0
SHOW_RATIO = 2.0

COMMANDS = {
    "stats": ["stats", "CAP"],
    "stats --json": ["stats", "CAP", "--json"],
    "stats --by scope": ["stats", "CAP", "--by", "scope"],
    "stats --by scope --json": ["stats", "CAP", "--by", "scope", "--json"],
    "memory": ["memory", "CAP"],
    "render --stage both": ["render", "CAP", "--stage", "both", "-o", "OUT/both.svg"],
}


def best(argv: list[str], repeat: int) -> tuple[float, float]:
    runs = [cpu_of(argv) for _ in range(repeat)]
    return min(r[0] for r in runs), min(r[1] for r in runs)


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").partition("\n")[0])
    ap.add_argument("--captures", default=DEFAULT)
    ap.add_argument("--show", default="keras_cnn_train", help="captures to time `show` on (\"\" for none)")
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args()
    hloviz = [sys.executable, "-m", "hloviz"]
    warm_up()  # bytecode cached, as an install has it (growth_bench.PYCACHE)
    missed = []
    print(f"{'capture':<20} {'command':<24} {'CPU s':>7} {'wall s':>7}   reference")
    with tempfile.TemporaryDirectory() as tmp:
        for name in [c for c in args.captures.split(",") if c]:
            cap = CAPTURES / name
            times: dict[str, float] = {}
            commands = dict(COMMANDS)
            if name in args.show.split(","):
                commands["show"] = ["show", "CAP", "-o", "OUT/show"]
            for label, argv in commands.items():
                full = [*hloviz, *(a.replace("CAP", str(cap)).replace("OUT", tmp) for a in argv)]
                try:
                    cpu, wall = best(full, args.repeat)
                except SystemExit as failed:  # the command failed (exit 2): say so, go on
                    missed.append(f"{name}: {label} failed")
                    print(f"{name:<20} {label:<24} failed: {str(failed).splitlines()[-2:]}", flush=True)
                    times[label] = float("inf")
                    continue
                times[label] = cpu
                if label == "show":
                    limit = SHOW_RATIO * times["render --stage both"]
                    ref = f"≤ {SHOW_RATIO:g}× render --stage both = {limit:.2f} s"
                else:
                    limit = LIMIT_S
                    ref = f"≤ {LIMIT_S:g} s"
                ok = cpu <= limit
                if not ok:
                    missed.append(f"{name}: {label}")
                print(f"{name:<20} {label:<24} {cpu:>7.2f} {wall:>7.1f}   {ref}  {'ok' if ok else 'OVER'}", flush=True)
    print(f"{len(missed)} over target" + (": " + "; ".join(missed) if missed else ""))
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
