"""hloviz's FLOPs against XLA's own cost analysis, module by module (not a speed benchmark: a
check of the numbers against XLA's records, on programs the tests do not hold).

For every function a script names in ``HLOVIZ_ARGS`` (the JAX samples, the held-out models), JAX
lowers and compiles it; this prints XLA's cost analysis of the module before and after
optimization (``flops`` + ``transcendentals``, and 1 for each custom call run: XLA counts one as
-1, "unknown", and sums it in) beside the sum of hloviz's kernels' FLOPs over the same HLO
text, and the difference.

XLA keeps each of those sums in a 32-bit float (``HloCostAnalysis::Properties``), exact only up
to 2**24: above it each instruction's addition rounds to the float's spacing there (16 at 134M).
Where the total is that large, the line says how far XLA's own rounding may take it — the count
of instructions summed times half that spacing — and whether the difference is within it.

Run: ``python benchmarks/flops_vs_xla.py [SCRIPT.py ...]`` (default: the JAX samples and the
held-out JAX scripts). Figures: benchmarks/results/flops_vs_xla.txt.
"""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

DEFAULT = ["samples/jax_mlp.py", "samples/jax_scopes.py", "samples/jax_gpt_step.py", "samples/flax_model.py",
           "samples/flax_models.py", "samples/loops.py", "benchmarks/heldout/flax_remat_cnn.py",
           "benchmarks/heldout/flax_scan_lm.py", "benchmarks/heldout/jax_round5.py"]


def main(argv: list[str]) -> int:
    import jax

    from hloviz.analysis.executed import runs_of
    from hloviz.analysis.kernels import kernels
    from hloviz.capture.jax import _to_jax_arg
    from hloviz.capture.specs import parse_convention
    from hloviz.parser import parse

    def unknown(module) -> int:
        """XLA's cost analysis counts a custom call as -1 FLOP (unknown) and sums it in: how
        many there are, each once a run of its computation."""
        runs = runs_of(module.entry)
        return sum(n * sum(1 for i in module.get_computation(c).instructions if i.opcode == "custom-call")
                   for c, n in runs.items() if module.get_computation(c) is not None)

    print(f"{'script':24} {'function':24} {'stage':5} {'XLA':>14} {'hloviz':>14}  difference  (custom calls: XLA's -1 each)")
    for path in argv or DEFAULT:
        scope = runpy.run_path(str(ROOT / path))
        for name, entry in (scope.get("HLOVIZ_ARGS") or {}).items():
            specs = parse_convention(entry, where=name)
            args = [_to_jax_arg(jax, s, None) for s in specs.positional]
            kwargs = {k: _to_jax_arg(jax, s, None) for k, s in specs.keyword}
            f = scope[name]
            lowered = (f if hasattr(f, "lower") else jax.jit(f)).lower(*args, **kwargs)
            compiled = lowered.compile()
            for stage, text, cost in (("pre", lowered.as_text(dialect="hlo"), lowered.cost_analysis()),
                                      ("post", compiled.as_text(), compiled.cost_analysis())):
                cost = cost[0] if isinstance(cost, list) else cost
                module = parse(text)
                calls = unknown(module)
                xla = int((cost.get("flops") or 0) + (cost.get("transcendentals") or 0)) + calls
                ours = kernels(module).flops
                print(f"{Path(path).name:24} {name:24} {stage:5} {xla:14,} {ours:14,}  {100 * (ours - xla) / max(xla, 1):+.3f} %"
                      + (f"  ({calls} added back)" if calls else "") + _float32_note(xla, ours, module))
    return 0


def _float32_note(xla: int, ours: int, module) -> str:
    """Where XLA's float32 sums round: ``  (XLA's float32 sums: ±N; within)``; empty below 2**24."""
    import math

    if xla < 2 ** 24:
        return ""
    spacing = 2.0 ** (math.floor(math.log2(xla)) - 23)
    bound = int(module.instruction_count * spacing / 2)
    return f"  (XLA's float32 sums: ±{bound:,}; {'within' if abs(ours - xla) <= bound else 'OUTSIDE'})"


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description="hloviz's FLOPs against XLA's cost analysis, module by module.")
    parser.add_argument("scripts", nargs="*", metavar="SCRIPT.py",
                        help="scripts naming their functions in HLOVIZ_ARGS (default: the JAX samples and held-out scripts)")
    raise SystemExit(main(parser.parse_args().scripts))
