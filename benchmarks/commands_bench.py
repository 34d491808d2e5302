"""Every command on every saved sample capture: within 3 s, and ``show`` within 2× ``render``.

Usage:  python benchmarks/commands_bench.py [--captures a,b,…] [--show a,b,…] [--repeat 1]
        [--passes a,b,…] [--diffs A:B,…] [--only LABEL,…]

Each command runs as a user runs it, ``python -m hloviz …`` in a fresh process with its output
to /dev/null, on a capture folder under ``samples/captures/``; the figure is its CPU time (user
+ system, the process and what it starts: Graphviz included), which a loaded machine disturbs far
less than the wall clock (the wall clock is printed too). Best of ``--repeat``.

Targets (issue 32): ``stats`` in every form, ``memory`` and ``render --stage both`` ≤ 3 s on each
capture; ``show`` ≤ 2× ``render --stage both`` of the same capture (``--show`` picks the
captures it runs on: it draws the explorer's every view, minutes on a loaded machine). The
reference printed beside each command is its target. Exit 1 when a target is missed.

``passes`` runs on each saved pass history of ``samples/captures/passes/`` (``--passes`` picks
them; each archive is unpacked once into a temporary folder before timing), and ``diff`` on
each pair of ``--diffs`` (``A:B``, capture folder names; default: the pairs of captures made
of one function under two versions or settings); both have the same 3 s target. ``--only``
times only the commands of those labels (e.g. ``--only "render --stage both,diff"``).

``--before DIR`` (a source tree of an earlier hloviz, e.g. ``git worktree add /tmp/before
<commit>``, or ``git archive <commit> hloviz | tar -x -C /tmp/before``) times each command with
that tree too, the two runs interleaved (before, after, before, after … for ``--repeat``), the
same capture and arguments, each in a fresh process with its own cached bytecode; the columns
then add the earlier CPU time and after/before.
"""

from __future__ import annotations

import argparse
import sys
import tarfile
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "benchmarks"))

from growth_bench import cpu_of, warm_up  # noqa: E402

CAPTURES = REPO / "samples" / "captures"
DEFAULT = "keras_cnn_train,inception_v3,densenet121,efficientnet_b0,jax_gpt_step12,mobilenet_v3_adam"
LIMIT_S = 3.0
SHOW_RATIO = 2.0
PASSES = CAPTURES / "passes"
DEFAULT_PASSES = ",".join(sorted(p.name.removesuffix(".tar.xz") for p in PASSES.glob("*.tar.xz")))
DEFAULT_DIFFS = ("fused_additions-tf2.17:fused_additions-tf2.21,matmul_chain-tf2.17:matmul_chain-tf2.21,"
                 "transformer_train-tf2.17:transformer_train-tf2.21,widen_64:widen_96,"
                 "resblock_relu:resblock_gelu,loops_vit:loops_vit_relu,mobilenet_train_sgd:mobilenet_train_adam")

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
    ap.add_argument("--before", type=Path, default=None,
                    help="an earlier hloviz source tree, timed interleaved with this one")
    ap.add_argument("--passes", default=DEFAULT_PASSES, help="saved pass histories to time `passes` on")
    ap.add_argument("--diffs", default=DEFAULT_DIFFS, help="capture pairs A:B to time `diff` on")
    ap.add_argument("--only", default="", help="time only these command labels (comma-separated)")
    args = ap.parse_args()
    only = {o.strip() for o in args.only.split(",") if o.strip()}
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
        jobs: list[tuple[str, str, list[str]]] = []  # (row name, label, argv)
        for name in [c for c in args.captures.split(",") if c]:
            cap = CAPTURES / name
            commands = dict(COMMANDS)
            if name in args.show.split(","):
                commands["show"] = ["show", "CAP", "-o", "OUT/show"]
            jobs += [(name, label, [a.replace("CAP", str(cap)).replace("OUT", tmp) for a in argv])
                     for label, argv in commands.items()]
        for name in [c for c in args.passes.split(",") if c] if not only or "passes" in only else []:
            folder = Path(tmp) / "passes" / name
            folder.mkdir(parents=True)
            with tarfile.open(PASSES / f"{name}.tar.xz") as archive:
                archive.extractall(folder, filter="data")
            jobs.append((name, "passes", ["passes", str(folder)]))
        for pair in [d for d in args.diffs.split(",") if d]:
            a, _, b = pair.partition(":")
            jobs.append((pair, "diff", ["diff", str(CAPTURES / a), str(CAPTURES / b)]))
        times: dict[tuple[str, str], float] = {}
        for name, label, argv in jobs:
            if only and label not in only:
                continue
            full = [*hloviz, *argv]
            try:
                cpu, wall, earlier = best(full, args.repeat, args.before)
            except SystemExit as failed:  # the command failed (exit 2): say so, go on
                missed.append(f"{name}: {label} failed")
                print(f"{name:<20} {label:<24} failed: {str(failed).splitlines()[-2:]}", flush=True)
                times[name, label] = float("inf")
                continue
            times[name, label] = cpu
            if label == "show":
                limit = SHOW_RATIO * times.get((name, "render --stage both"), float("nan"))
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
