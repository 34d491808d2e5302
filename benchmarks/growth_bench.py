"""Does cost grow linearly? Parse and render modules of 1×, 10× and 100× a real module's size.

Usage:  python benchmarks/growth_bench.py [--base PATH] [--sizes 1,10,100] [--no-render]

The base is a real optimized module (TF 2.21's transformer training step from
samples/captures/, about 3.3k instructions). A module k times its size holds k renamed copies of
every computation, with a new entry that calls each copy's entry, so its structure is the
base's, repeated. For each size the script prints time and peak memory per instruction for
parsing (each size in a fresh process, memory read from the kernel), and time per instruction
for drawing the default overview picture (SVG, Graphviz included). A quadratic path shows as
per-instruction figures that grow with size; linear cost keeps them flat.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import hloviz  # noqa: E402

DEFAULT_BASE = REPO / "samples" / "captures" / "transformer_train-tf2.21" / "post.hlo"
_NAME = re.compile(r"%([A-Za-z_][\w.\-]*)")


def scaled_text(base: hloviz.HloModule, copies: int) -> str:
    """``copies`` renamed copies of ``base``, called from one new entry computation."""
    canonical = hloviz.to_text(base)
    body = canonical.split("\n", 1)[1]  # drop the header; computations follow
    entry = base.entry
    params = [p.shape for p in entry.parameters]
    out = [f"HloModule {base.name}_x{copies}", ""]
    for k in range(copies):
        copy = _NAME.sub(lambda m, k=k: f"%{m.group(1)}.c{k}", body).replace("ENTRY %", "%")
        out.append(copy)
    lines = []
    n = 0
    results = []
    for k in range(copies):
        operands = []
        for shape in params:
            lines.append(f"  %p{n} = {shape} parameter({n})")
            operands.append(f"%p{n}")
            n += 1
        lines.append(f"  %call{k} = {entry.root.shape} call({', '.join(operands)}), to_apply=%{entry.name}.c{k}")
        results.append(f"%call{k}")
    shapes = ", ".join(str(entry.root.shape) for _ in range(copies))
    lines.append(f"  ROOT %all = ({shapes}) tuple({', '.join(results)})")
    out.append("ENTRY %main {\n" + "\n".join(lines) + "\n}\n")
    return "\n".join(out)


# Time first, then memory in a second parse under tracemalloc (which slows parsing down).
_CHILD = """
import json, sys, time, tracemalloc
sys.path.insert(0, {repo!r})
import hloviz
text = open({path!r}).read()
start = time.process_time()
module = hloviz.parse(text)
seconds = time.process_time() - start
count = module.instruction_count
del module
tracemalloc.start()
module = hloviz.parse(text)
_, peak = tracemalloc.get_traced_memory()
print(json.dumps({{"seconds": seconds, "kb": peak / 1024, "instructions": count}}))
"""


def parse_in_child(path: Path) -> dict:
    code = _CHILD.format(repo=str(REPO), path=str(path))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", type=Path, default=DEFAULT_BASE)
    ap.add_argument("--sizes", default="1,10,100")
    ap.add_argument("--no-render", action="store_true")
    args = ap.parse_args()
    base = hloviz.parse_file(args.base)
    sizes = [int(s) for s in args.sizes.split(",")]
    print(f"base: {args.base} ({base.instruction_count} instructions)")
    print(f"{'size':>5} {'instructions':>12} {'parse µs/instr':>15} {'parse KB/instr':>15} {'render µs/instr':>16}")
    with tempfile.TemporaryDirectory() as tmp:
        for k in sizes:
            path = Path(tmp) / f"x{k}.hlo"
            path.write_text(scaled_text(base, k))
            parsed = parse_in_child(path)
            n = parsed["instructions"]
            row = f"{k:>4}× {n:>12} {parsed['seconds'] / n * 1e6:>15.2f} {parsed['kb'] / n:>15.3f}"
            if not args.no_render:
                from hloviz.render.pictures import module_picture

                module = hloviz.parse_file(path)
                start = time.perf_counter()
                module_picture(module, fmt="svg")
                row += f" {(time.perf_counter() - start) / n * 1e6:>16.2f}"
            print(row, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
