"""Record XLA's own cost analysis of the convolutions and reductions ``tests/test_flops_against_xla.py`` draws,
so that a fast test (no JAX) checks hloviz's FLOPs against XLA's figures.

For each function of the test (one convolution each, or its gradient) JAX lowers and compiles
it, and this writes the HLO text before and after optimization with XLA's cost analysis of each
(``lowered.cost_analysis()``, ``compiled.cost_analysis()``: ``flops`` + ``transcendentals``)
to ``tests/data/costs/xla_costs.json``. Run: ``python scripts/record_xla_costs.py``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
OUT = ROOT / "tests" / "data" / "costs" / "xla_costs.json"


def main() -> int:
    import os

    # four CPU devices, for the collectives (an all-reduce, a reduce-scatter): set before JAX starts
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=4").strip()
    import jax

    from tests.test_flops_against_xla import cases

    records = []
    for name, (f, *args) in cases().items():
        lowered = jax.jit(f).lower(*args)
        compiled = lowered.compile()
        # before optimization too: JAX's own gradient of a grouped convolution is a
        # batch_group_count convolution there, which XLA:CPU rewrites before its cost is read
        for stage, text, cost in (("pre", lowered.as_text(dialect="hlo"), lowered.cost_analysis()),
                                  ("post", compiled.as_text(), compiled.cost_analysis())):
            cost = cost[0] if isinstance(cost, list) else cost
            records.append({"case": f"{name} ({stage})", "jax": jax.__version__, "hlo": text,
                            "xla_flops": int((cost.get("flops") or 0) + (cost.get("transcendentals") or 0))})
    OUT.write_text(json.dumps(records, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {len(records)} cases to {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
