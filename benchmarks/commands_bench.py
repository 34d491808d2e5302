"""Every command on every saved sample capture: within 3 s, and ``show`` within 2× ``render``.

Usage:  python benchmarks/commands_bench.py [--captures a,b,…] [--show a,b,…] [--commands …] [--repeat 1]

Each command runs as a user runs it, ``python -m hloviz …`` in a fresh process with its output
to /dev/null, on a capture folder under ``samples/captures/``; the figure is its CPU time (user
+ system, the process and what it starts: Graphviz included), which a loaded machine disturbs far
less than the wall clock (the wall clock is printed too). Best of ``--repeat``.

Targets (issue 32): ``stats`` in every form, ``memory`` and ``render --stage both`` ≤ 3 s on each
capture; ``show`` ≤ 2× ``render --stage both`` of the same capture (``--show`` picks the
captures it runs on: it draws the explorer's every view, minutes on a loaded machine). The
reference printed beside each command is its target. Exit 1 when a target is missed.

``--commands`` times only the commands named (labels as printed, comma-separated: ``render
--stage both,show`` for issue 32's show-vs-render row alone; ``show`` needs ``render --stage
both``, its reference).

``--before DIR`` (a source tree of an earlier hloviz, e.g. ``git worktree add /tmp/before
<commit>``, or ``git archive <commit> hloviz | tar -x -C /tmp/before``) times each command with
that tree too, the two runs interleaved (before, after, before, after … for ``--repeat``), the
same capture and arguments, each in a fresh process with its own cached bytecode; the columns
then add the earlier CPU time and after/before.
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


def best(argv: list[str], repeat: int, before: Path | None = None) -> tuple[float, float, float | None]:
    """(CPU s, wall s) of ``argv``, best of ``repeat``, and the CPU s of the ``before`` tree
    running the same ``argv`` (its runs interleaved with these), or None."""
    runs, earlier = [], []
    for _ in range(repeat):
        if before is not None:
            earlier.append(cpu_of(argv, before)[0])
        runs.append(cpu_of(argv))
    return min(r[0] for r in runs), min(r[1] for r in runs), (min(earlier) if earlier else None)


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").partition("\n")[0])
    ap.add_argument("--captures", default=DEFAULT)
    ap.add_argument("--show", default="keras_cnn_train", help="captures to time `show` on (\"\" for none)")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--commands", default="", help="only these commands (labels, comma-separated)")
    ap.add_argument("--before", type=Path, default=None,
                    help="an earlier hloviz source tree, timed interleaved with this one")
    args = ap.parse_args()
    if args.before is not None and not (args.before / "hloviz" / "__init__.py").is_file():
        raise SystemExit(f"error: {args.before} holds no hloviz/ package")
    hloviz = [sys.executable, "-m", "hloviz"]
    warm_up()  # bytecode cached, as an install has it (growth_bench.PYCACHE)
    if args.before is not None:
        warm_up(args.before)
    missed = []
    ratios: list[float] = []
    earlier_head = f" {'before':>7} {'ratio':>6}" if args.before is not None else ""
    print(f"{'capture':<20} {'command':<24} {'CPU s':>7} {'wall s':>7}{earlier_head}   reference")
    with tempfile.TemporaryDirectory() as tmp:
        for name in [c for c in args.captures.split(",") if c]:
            cap = CAPTURES / name
            times: dict[str, float] = {}
            commands = dict(COMMANDS)
            if name in args.show.split(","):
                commands["show"] = ["show", "CAP", "-o", "OUT/show"]
            if args.commands:
                wanted = {c.strip() for c in args.commands.split(",")}
                commands = {label: argv for label, argv in commands.items() if label in wanted}
            for label, argv in commands.items():
                full = [*hloviz, *(a.replace("CAP", str(cap)).replace("OUT", tmp) for a in argv)]
                try:
                    cpu, wall, earlier = best(full, args.repeat, args.before)
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
                then = ""
                if earlier is not None:
                    ratios.append(cpu / earlier)
                    then = f" {earlier:>7.2f} {cpu / earlier:>5.2f}×"
                print(f"{name:<20} {label:<24} {cpu:>7.2f} {wall:>7.1f}{then}   {ref}  {'ok' if ok else 'OVER'}",
                      flush=True)
    if ratios:
        import math

        mean = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
        print(f"after/before CPU over {len(ratios)} commands: geometric mean {mean:.2f}×, "
              f"from {min(ratios):.2f}× to {max(ratios):.2f}×")
    print(f"{len(missed)} over target" + (": " + "; ".join(missed) if missed else ""))
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
