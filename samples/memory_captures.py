"""Capture the programs whose XLA buffer assignment the memory tests compare with (samples/memory/).

Each folder is a saved capture (``hloviz dump``) that keeps XLA's own buffer assignment beside the
HLO (``memory.json``, read from TensorFlow's ``HloProto`` or JAX's ``memory_analysis()`` during
the capture). The tests estimate memory from ``post.hlo`` alone and compare with that record.

    python samples/memory_captures.py            # all of them (a few minutes: TensorFlow compiles)
    python samples/memory_captures.py lstm mha   # some
"""

from __future__ import annotations

import gzip
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "memory"

#: name → (target, --arg specs)
PROGRAMS: dict[str, tuple[str, tuple[str, ...]]] = {
    "matmul_chain": ("samples/matmul_chain.py:matmul_chain", ()),
    "keras_lstm": ("samples/keras_models.py:lstm_forward", ("f32[8,20,16]",)),
    "keras_mha": ("samples/keras_models.py:mha_block", ("f32[4,16,64]",)),
    "keras_cnn_train": ("samples/keras_models.py:cnn_train_step", ("f32[32,28,28,1]", "s32[32]")),
    "keras_small_train_step": ("samples/keras_small.py:train_step", ("f32[2,32,32,3]", "s32[2]")),
    "jax_scopes": ("samples/jax_scopes.py:train_step", ()),
    "jax_donated": ("samples/jax_donated.py:train_step", ()),
    "resnet50": ("samples/keras_applications.py:resnet50", ("f32[1,224,224,3]",)),
    "mobilenet_v2": ("samples/keras_applications.py:mobilenet_v2", ("f32[1,224,224,3]",)),
    "keras_transformer": ("samples/keras_transformer.py:train_step", ("s32[4,32]", "s32[4,32]")),
    "flax_cnn": ("samples/flax_models.py:cnn_forward", ()),
    "flax_cnn_train": ("samples/flax_models.py:cnn_train_step", ()),
    "flax_transformer_train": ("samples/flax_models.py:transformer_train_step", ()),
}

#: HLO files above this many bytes are kept gzipped.
GZIP_OVER = 200_000


def capture(name: str) -> None:
    target, args = PROGRAMS[name]
    folder = OUT / name
    cmd = [sys.executable, "-m", "hloviz", "dump", target, "-o", str(folder)]
    for a in args:
        cmd += ["--arg", a]
    subprocess.run(cmd, check=True, cwd=HERE.parent)
    for stage in ("pre.hlo", "post.hlo"):
        path = folder / stage
        if path.is_file() and path.stat().st_size > GZIP_OVER:
            with open(path, "rb") as src, open(f"{path}.gz", "wb") as raw, \
                    gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as dst:
                shutil.copyfileobj(src, dst)
            path.unlink()


def main(names: list[str]) -> None:
    for name in names or list(PROGRAMS):
        capture(name)


if __name__ == "__main__":
    main(sys.argv[1:])
