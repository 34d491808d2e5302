"""Make the per-pass snapshot sets under samples/captures/passes/ (test data for hloviz passes).

Each set is what XLA wrote for one function with
``XLA_FLAGS="--xla_dump_to=DIR --xla_dump_hlo_pass_re=.*"`` (TensorFlow 2.21 / JAX, CPU),
captured by ``hloviz passes TARGET --save DIR``: the module's snapshots and its
before/after_optimizations texts, byte for byte as XLA wrote them, packed as one ``.tar.xz``
(consecutive snapshots differ in a few lines, which xz's window finds and gzip's does not:
the four sets take 70 KB instead of 1.3 MB as gzipped files). Buffer assignment, memory
reports and LLVM IR are left out.

Run from the project root:  python scripts/make_pass_dumps.py [NAME ...]
"""

from __future__ import annotations

import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "samples" / "captures" / "passes"
SETS = {
    "fused_additions": ["samples/fused_additions.py:fused_additions"],
    "fused_additions_const": ["samples/fused_additions.py:fused_additions_const"],
    "keras_cnn_train": ["samples/keras_models.py:cnn_train_step"],
    "jax_mlp": ["samples/jax_mlp.py:mlp"],
    # The seed under TensorFlow 2.17.1 (a managed environment, installed on first use), for
    # hloviz versions --passes against fused_additions (2.21).
    "fused_additions-tf2.17": ["samples/fused_additions.py:fused_additions", "--tf", "2.17"],
}
_LEFT_OUT = ("buffer-assignment", "memory-usage-report", "live-range")


def make(name: str, command: list[str]) -> Path:
    with tempfile.TemporaryDirectory() as tmp:
        keep = Path(tmp) / "snapshots"
        subprocess.run([sys.executable, "-m", "hloviz", "passes", *command, "--save", str(keep)], cwd=ROOT,
                       check=True, stdout=subprocess.DEVNULL)
        out = OUT / f"{name}.tar.xz"
        with tarfile.open(out, "w:xz", preset=9) as tar:
            for p in sorted(keep.iterdir()):
                if not any(x in p.name for x in _LEFT_OUT):
                    tar.add(p, arcname=p.name)
    return out


if __name__ == "__main__":
    OUT.mkdir(parents=True, exist_ok=True)
    for set_name in sys.argv[1:] or SETS:  # the names given, else all
        print(make(set_name, SETS[set_name]))
