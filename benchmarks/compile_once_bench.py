"""What XLA's buffer assignment costs a TensorFlow capture: a dump of the one compile, or a second compile.

Usage:  python benchmarks/compile_once_bench.py [--cases cnn,mnv3] [--repeat 3]

Three ways to get what a capture records from ``experimental_get_compiler_ir``, each run in a
fresh process (rounds interleave them), timed by the CPU time (user + system) of the stage calls
alone — TensorFlow's import and the model file's are left out:

* ``ref``: ``stage="hlo"`` and ``stage="optimized_hlo"`` — the least any tool asks for;
* ``dump``: the same two, with ``--xla_dump_to`` set before the compile by
  :class:`hloviz.capture.dumps.compile_dump.CompileDump`, as hloviz's capture child does (a folder in
  ``/dev/shm`` where there is one), the buffer assignment read from the dump and the folder
  removed — all inside the timed part;
* ``proto``: the same two, then ``stage="optimized_hlo_proto_serialized"`` for the
  ``HloProto`` holding the buffer assignment — a second compile (what hloviz did before).

Cases: ``cnn`` (the small Keras CNN's Adam training step, ``samples/keras_models.py``) and
``mnv3`` (MobileNetV3Small + Adam, ``samples/keras_train_steps.py``, about 1,300 kernels: minutes
per run on a loaded machine). Target (issue 32): ``dump`` ≤ 1.05× ``ref`` (medians).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODES = ("ref", "dump", "proto")
TARGET = 1.05


def _child(mode: str, case: str) -> None:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    sys.path.insert(0, str(ROOT))
    from hloviz.capture.dumps.compile_dump import CompileDump

    dump = CompileDump() if mode == "dump" else None  # exactly as hloviz's capture child asks
    import tensorflow as tf

    sys.path.insert(0, str(ROOT / "samples"))
    if case == "cnn":
        import keras_models as m  # noqa: PLC0415

        fn, specs = m.cnn_train_step, [tf.TensorSpec([32, 28, 28, 1], tf.float32), tf.TensorSpec([32], tf.int32)]
    else:
        import keras_train_steps as m  # noqa: PLC0415

        fn, specs = m.mobilenet_v3_adam, [tf.TensorSpec([8, 32, 32, 3], tf.float32), tf.TensorSpec([8], tf.int32)]
    usage = resource.getrusage(resource.RUSAGE_SELF)
    start = usage.ru_utime + usage.ru_stime
    ir = fn.experimental_get_compiler_ir(*specs)
    ir(stage="hlo")
    post = ir(stage="optimized_hlo")
    if mode == "proto":
        ir(stage="optimized_hlo_proto_serialized")
    if dump is not None:  # reading the record and removing the folder count too
        if dump.buffer_assignment(post, tf.__version__) is None:
            raise SystemExit("error: no buffer assignment in the dump")
        dump.close()
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(f"{usage.ru_utime + usage.ru_stime - start:.3f}", flush=True)
    os._exit(0)


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").partition("\n")[0])
    ap.add_argument("--cases", default="cnn")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        _child(*args.child)
        return 0
    worst = 0.0
    print("CPU seconds of the stage calls, fresh processes, modes interleaved")
    for case in args.cases.split(","):
        cpu: dict[str, list[float]] = {m: [] for m in MODES}
        for k in range(args.repeat):
            for mode in MODES[k % 3:] + MODES[:k % 3]:  # the order rotates round by round
                out = subprocess.run([sys.executable, __file__, "--child", mode, case], capture_output=True,
                                     text=True, cwd=ROOT, start_new_session=True)
                if out.returncode != 0:
                    raise SystemExit(f"error: {mode} {case} failed:\n{out.stderr[-2000:]}")
                cpu[mode].append(float(out.stdout.strip().splitlines()[-1]))
        ref = statistics.median(cpu["ref"])
        for mode in MODES:
            med = statistics.median(cpu[mode])
            runs = ", ".join(f"{t:.2f}" for t in cpu[mode])
            print(f"{case:<5} {mode:<6} median {med:7.2f} s  {med / ref:5.2f}× ref   ({runs})", flush=True)
        worst = max(worst, statistics.median(cpu["dump"]) / ref)
    print(f"dump / ref (medians) at worst {worst:.2f}× — {'within' if worst <= TARGET else 'OVER'} the {TARGET}× target")
    return 0 if worst <= TARGET else 1


if __name__ == "__main__":
    raise SystemExit(main())
