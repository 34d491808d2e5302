"""Where ``show``'s time goes on a saved capture: the explorer's views, kind by kind.

Usage:  python benchmarks/show_breakdown_bench.py [CAPTURE …]   (default: efficientnet_b0)

``show`` is ``render --stage both`` plus the report's tables and the explorer, which lays out
many more pictures than the one ``render`` draws: the first view fitted to a screen, a picture
of each closed layer, each closed block opened in place, each big fusion's body
(hloviz/render/page/explorer/build.py). Issue 32's goal is ``show`` ≤ 2× ``render --stage both``;
this prints, for one run of ``show`` in this process, the Python CPU seconds of each kind of
view (the phases run one after the other, so ``time.process_time`` deltas are theirs), how many
Graphviz layouts each asked for, and the CPU of the ``dot`` processes (all phases together:
the long-running ones are reaped at the end). Beside it, ``render --stage both`` of the same
capture in this process, the reference. No wall time: the machine is shared.
"""

from __future__ import annotations

import resource
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

CAPTURES = REPO / "samples" / "captures"


def _children() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def breakdown(name: str) -> None:
    import hloviz.render.layout.runs.dotserver as ds
    import hloviz.render.page.explorer as ex
    from hloviz import api

    phase = ["report"]
    cpu: dict[str, float] = defaultdict(float)
    layouts: Counter[str] = Counter()
    originals = {}

    def timed(fn_name: str):
        real = getattr(ex, fn_name)
        originals[fn_name] = real

        def wrapper(*args, **kwargs):
            outer, phase[0] = phase[0], fn_name
            start = time.process_time()
            try:
                return real(*args, **kwargs)
            finally:
                cpu[fn_name] += time.process_time() - start
                cpu[outer] -= time.process_time() - start
                phase[0] = outer

        setattr(ex, fn_name, wrapper)

    for fn_name in ("first_view", "scope_expansions", "block_expansions", "fusion_expansions"):
        timed(fn_name)

    def counted(real):
        def wrapper(*args, **kwargs):
            layouts[phase[0]] += 1
            return real(*args, **kwargs)
        return wrapper

    real_one = ds.DotServers._one
    ds.DotServers._one = counted(real_one)
    many_real = ds.DotServers.run_dot_many

    def many(self, dot_texts, *args, **kwargs):
        layouts[phase[0]] += len(dot_texts)
        return many_real(self, dot_texts, *args, **kwargs)

    ds.DotServers.run_dot_many = many
    cap = CAPTURES / name
    try:
        with tempfile.TemporaryDirectory() as tmp:
            dot_before, start = _children(), time.process_time()
            api.render(str(cap), Path(tmp) / "both.svg", stage="both")
            render_cpu, render_dot = time.process_time() - start, _children() - dot_before
            dot_before, start = _children(), time.process_time()
            api.show(str(cap), Path(tmp) / "show")
            total, dot = time.process_time() - start, _children() - dot_before
    finally:
        for fn_name, real in originals.items():
            setattr(ex, fn_name, real)
        ds.DotServers._one, ds.DotServers.run_dot_many = real_one, many_real
    cpu["report"] += total
    print(f"{name}: show {total + dot:.2f} s CPU (Python {total:.2f}, dot {dot:.2f}); "
          f"render --stage both {render_cpu + render_dot:.2f} s (Python {render_cpu:.2f}, dot {render_dot:.2f}); "
          f"ratio {(total + dot) / max(render_cpu + render_dot, 1e-9):.1f}× (target ≤ 2×)")
    labels = {"report": "the report (picture, tables)", "first_view": "first view (screen fit)",
              "scope_expansions": "layer pictures", "block_expansions": "blocks opened in place",
              "fusion_expansions": "fusion bodies"}
    for key, label in labels.items():
        print(f"  {label:<30} Python {cpu[key]:6.2f} s   layouts {layouts[key]:4d}")


def main() -> int:
    names = sys.argv[1:] or ["efficientnet_b0"]
    for name in names:
        breakdown(name)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
