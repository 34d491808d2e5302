"""How long ``hloviz show`` spends capturing, against a bare TensorFlow script doing the same.

A capture is what ``hloviz show model.py:fn`` does before it parses anything: import the model
file, trace the function, ask XLA for the pre- and post-optimization HLO
(``experimental_get_compiler_ir(...)(stage="hlo")`` and ``stage="optimized_hlo"``) and build the
source map (TF op → the user's line). The reference is a plain script that imports the same
file and asks for the same two stages — the least any tool can do to get that HLO. The source
map is the one step the reference does not do; its time is printed apart, so a ratio moved by a
busy machine can be told from real overhead.

Cases:

* the seed, ``samples/fused_additions.py:fused_additions`` (1000 chained adds on f32[100000000]);
* ResNet50, ``tf.keras.applications.ResNet50(weights=None)`` called on ``f32[1,224,224,3]``
  (about 170k op-traceback frames to judge for the source map).

Each run is a fresh Python process (so nothing is cached between them), hloviz and the reference
interleaved; the figure per side is the best of ``--repeat`` runs. Two times are printed: the
capture alone (from after ``import tensorflow`` to both texts in hand, which is what hloviz adds
to) and the whole process (interpreter start to exit). Target: hloviz within 1.1× the reference.

Run: ``python benchmarks/capture_bench.py [--repeat 3] [--skip-resnet]``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCH_DIR = ROOT / "build" / "bench"

RESNET_FILE = '''\
"""ResNet50 (random weights) for hloviz's capture benchmark; written by benchmarks/capture_bench.py."""
import tensorflow as tf

_model = tf.keras.applications.ResNet50(weights=None)


def resnet50(x):
    return _model(x, training=False)
'''

#: name → (target, --arg specs as HLO shapes, the same specs as TensorSpec arguments)
CASES = {
    "seed": (str(ROOT / "samples" / "fused_additions.py") + ":fused_additions",
             ["f32[100000000]", "f32[]"], [([100_000_000], "float32"), ([], "float32")]),
    "resnet50": (str(BENCH_DIR / "resnet50_model.py") + ":resnet50",
                 ["f32[1,224,224,3]"], [([1, 224, 224, 3], "float32")]),
}


def _child(side: str, case: str) -> None:
    """One measured capture; prints a JSON line of timings."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf

    target, args, specs = CASES[case]
    started = time.perf_counter()
    source_map = 0.0
    if side == "hloviz":
        sys.path.insert(0, str(ROOT))
        from hloviz.capture import load_target
        from hloviz.capture import tf as capture_tf

        build = capture_tf.source_map

        def timed(*a: object, **k: object) -> object:  # the one step the bare script does not do
            nonlocal source_map
            t = time.perf_counter()
            try:
                return build(*a, **k)  # type: ignore[arg-type]
            finally:
                source_map += time.perf_counter() - t

        capture_tf.source_map = timed  # type: ignore[assignment]
        cap = load_target(target, args=args)
        pre, post = cap.pre_text, cap.post_text
    else:
        import importlib.util

        path, _, fn_name = target.rpartition(":")
        spec = importlib.util.spec_from_file_location(Path(path).stem, path)
        mod = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
        spec.loader.exec_module(mod)  # type: ignore[union-attr]
        fn = getattr(mod, fn_name)
        if not hasattr(fn, "experimental_get_compiler_ir"):
            fn = tf.function(fn, jit_compile=True)
        ir = fn.experimental_get_compiler_ir(*[tf.TensorSpec(s, getattr(tf, d)) for s, d in specs])
        pre, post = ir(stage="hlo"), ir(stage="optimized_hlo")
    took = time.perf_counter() - started
    print(json.dumps({"capture": took, "source_map": source_map, "pre_chars": len(pre or ""),
                      "post_chars": len(post or "")}))


def _run(side: str, case: str) -> dict:
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, __file__, "--child", side, case], capture_output=True, text=True,
                          cwd=ROOT, env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"})
    wall = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"error: the {side} capture of {case} failed:\n{proc.stderr[-3000:]}")
    data = json.loads(proc.stdout.strip().splitlines()[-1])
    data["process"] = wall
    return data


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--skip-resnet", action="store_true")
    ap.add_argument("--child", nargs=2, metavar=("SIDE", "CASE"), help=argparse.SUPPRESS)
    opts = ap.parse_args()
    if opts.child:
        _child(*opts.child)
        return
    cases = ["seed"] if opts.skip_resnet else ["seed", "resnet50"]
    if "resnet50" in cases:
        BENCH_DIR.mkdir(parents=True, exist_ok=True)
        (BENCH_DIR / "resnet50_model.py").write_text(RESNET_FILE)
    print(f"capture benchmark: best of {opts.repeat} fresh processes per side (seconds)")
    print(f"{'case':<10} {'side':<10} {'capture':>8} {'process':>8}")
    worst = 0.0
    for case in cases:
        runs: dict[str, list[dict]] = {"reference": [], "hloviz": []}
        for _ in range(opts.repeat):
            for side in runs:  # interleaved: a noisy minute hits both sides
                runs[side].append(_run(side, case))
        best = {side: {k: min(r[k] for r in rs) for k in ("capture", "process", "source_map")}
                for side, rs in runs.items()}
        if runs["hloviz"][0]["post_chars"] != runs["reference"][0]["post_chars"]:
            print(f"note: {case}: post-optimization texts differ in length "
                  f"({runs['hloviz'][0]['post_chars']} vs {runs['reference'][0]['post_chars']} chars)")
        for side in ("reference", "hloviz"):
            print(f"{case:<10} {side:<10} {best[side]['capture']:8.2f} {best[side]['process']:8.2f}")
        ratio_c = best["hloviz"]["capture"] / best["reference"]["capture"]
        ratio_p = best["hloviz"]["process"] / best["reference"]["process"]
        worst = max(worst, ratio_c)
        print(f"{case:<10} {'ratio':<10} {ratio_c:7.2f}× {ratio_p:7.2f}×   (target ≤ 1.10×)")
        share = best["hloviz"]["source_map"] / best["hloviz"]["capture"]
        print(f"{case:<10} the source map (hloviz's only extra step) took {best['hloviz']['source_map']:.2f} s, "
              f"{share:.1%} of its capture")
    print(f"worst capture ratio {worst:.2f}× — {'within' if worst <= 1.1 else 'OVER'} the 1.1× target")


if __name__ == "__main__":
    main()
