"""Capture the two-version samples: pre- and post-optimization HLO under the running TensorFlow.

Standalone on purpose: it never imports hloviz, so it runs in any virtualenv that has
TensorFlow (for instance an old TF in a venv of its own). Run it once per TF version::

    build/venv-tf217/bin/python samples/capture_versions.py     # TF 2.17.x
    .venv/bin/python samples/capture_versions.py                # TF 2.21.x (the project venv)

Each function lands in ``samples/captures/<name>-tf<major.minor>/`` as ``pre.hlo`` (stage
``hlo``), ``post.hlo`` (stage ``optimized_hlo``) and ``capture.json``, the same layout and
JSON keys that ``hloviz dump`` writes, so every hloviz command reads these folders. See
samples/README.md, "Refreshing the two-version captures".

The functions are defined here, not imported from the other samples, so that a capture made
today and one made next year trace exactly the same Python code:

* ``matmul_chain(a, b)``: ``matmul → + sin → relu → reduce_sum`` on f32[8192,8192];
* ``fused_additions(x, delta)``: ``x + delta`` 1000 times, x f32[100000000], delta f32[];
* ``transformer_train(...)``: one training step of a small decoder-only transformer (2 layers,
  forward, backward, Adam update of tf.Variables) in raw TensorFlow (no Keras, so only TF and
  XLA differ between the two captures).

No tensor of those shapes is allocated: XLA compiles against ``tf.TensorSpec`` only.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT_ROOT = HERE / "captures"
SCRIPT = "samples/capture_versions.py"

# ---------------------------------------------------------------------------------------------
# The functions (built lazily: TensorFlow is imported by main() only)


def make_functions(tf):
    """name → (tf.function with jit_compile=True, list of tf.TensorSpec)."""

    @tf.function(jit_compile=True)
    def matmul_chain(a, b):
        x = tf.matmul(a, b)
        x = x + tf.sin(x)
        x = tf.nn.relu(x)
        return tf.reduce_sum(x)

    @tf.function(jit_compile=True)
    def fused_additions(x, delta):
        for _ in range(1000):
            x = x + delta
        return x

    n = 8192
    funcs = {
        "matmul_chain": (matmul_chain, [tf.TensorSpec([n, n], tf.float32)] * 2),
        "fused_additions": (fused_additions, [tf.TensorSpec([100_000_000], tf.float32),
                                              tf.TensorSpec([], tf.float32)]),
    }
    funcs["transformer_train"] = _transformer(tf)
    return funcs


# Transformer sizes: small enough that post.hlo stays a few MB, deep enough to have structure.
LAYERS, WIDTH, HEADS, SEQ, BATCH, VOCAB = 2, 64, 4, 16, 2, 256


def _transformer(tf):
    """One training step: embedding, LAYERS pre-LN blocks, tied LM head, cross entropy, Adam."""
    d, f, hd, n = WIDTH, 4 * WIDTH, WIDTH // HEADS, BATCH * SEQ
    init = tf.random.stateless_normal  # deterministic initial values; only shapes matter to XLA

    def var(name, shape, scale=0.02):
        return tf.Variable(init(shape, seed=[len(name), sum(map(ord, name))]) * scale, name=name)

    params = {"embed": var("embed", [VOCAB, d]), "pos": var("pos", [SEQ, d]),
              "lnf_g": tf.Variable(tf.ones([d]), name="lnf_g"),
              "lnf_b": tf.Variable(tf.zeros([d]), name="lnf_b")}
    for i in range(LAYERS):
        for w, shape in (("wqkv", [d, 3 * d]), ("wo", [d, d]), ("w1", [d, f]), ("w2", [f, d])):
            params[f"l{i}_{w}"] = var(f"l{i}_{w}", shape)
        for b, size in (("bqkv", 3 * d), ("bo", d), ("b1", f), ("b2", d), ("ln1_b", d), ("ln2_b", d)):
            params[f"l{i}_{b}"] = tf.Variable(tf.zeros([size]), name=f"l{i}_{b}")
        for g in ("ln1_g", "ln2_g"):
            params[f"l{i}_{g}"] = tf.Variable(tf.ones([d]), name=f"l{i}_{g}")
    names = list(params)
    slots_m = {k: tf.Variable(tf.zeros_like(v), name=f"m_{k}") for k, v in params.items()}
    slots_v = {k: tf.Variable(tf.zeros_like(v), name=f"v_{k}") for k, v in params.items()}
    step_var = tf.Variable(0.0, name="step")

    def layer_norm(x, g, b):
        mean, var_ = tf.nn.moments(x, axes=[-1], keepdims=True)
        return (x - mean) * tf.math.rsqrt(var_ + 1e-5) * g + b

    def block(p, i, x):
        h = layer_norm(x, p[f"l{i}_ln1_g"], p[f"l{i}_ln1_b"])
        qkv = tf.matmul(h, p[f"l{i}_wqkv"]) + p[f"l{i}_bqkv"]
        q, k, v = tf.split(qkv, 3, axis=-1)

        def heads(t):
            return tf.transpose(tf.reshape(t, [BATCH, SEQ, HEADS, hd]), [0, 2, 1, 3])

        scores = tf.matmul(heads(q), heads(k), transpose_b=True) / hd ** 0.5
        causal = tf.linalg.band_part(tf.ones([SEQ, SEQ]), -1, 0)
        attn = tf.nn.softmax(scores + (1.0 - causal) * -1e9, axis=-1)
        o = tf.reshape(tf.transpose(tf.matmul(attn, heads(v)), [0, 2, 1, 3]), [n, d])
        x = x + tf.matmul(o, p[f"l{i}_wo"]) + p[f"l{i}_bo"]
        h = layer_norm(x, p[f"l{i}_ln2_g"], p[f"l{i}_ln2_b"])
        h = tf.nn.gelu(tf.matmul(h, p[f"l{i}_w1"]) + p[f"l{i}_b1"])
        return x + tf.matmul(h, p[f"l{i}_w2"]) + p[f"l{i}_b2"]

    @tf.function(jit_compile=True)
    def transformer_train(tokens, targets):
        with tf.GradientTape() as tape:
            x = tf.gather(params["embed"], tf.reshape(tokens, [n])) + tf.tile(params["pos"], [BATCH, 1])
            for i in range(LAYERS):
                x = block(params, i, x)
            x = layer_norm(x, params["lnf_g"], params["lnf_b"])
            logits = tf.matmul(x, params["embed"], transpose_b=True)
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
                tf.reshape(targets, [n]), logits))
        grads = tape.gradient(loss, [params[k] for k in names])
        step_var.assign_add(1.0)
        b1, b2, lr = 0.9, 0.999, 1e-3
        c1, c2 = 1.0 - tf.pow(b1, step_var), 1.0 - tf.pow(b2, step_var)
        for k, g in zip(names, grads):
            m = slots_m[k].assign(b1 * slots_m[k] + (1.0 - b1) * g)
            v = slots_v[k].assign(b2 * slots_v[k] + (1.0 - b2) * tf.square(g))
            params[k].assign_sub(lr * (m / c1) / (tf.sqrt(v / c2) + 1e-8))
        return loss

    specs = [tf.TensorSpec([BATCH, SEQ], tf.int32)] * 2
    return transformer_train, specs


# ---------------------------------------------------------------------------------------------
# Capturing and writing


def _spec_text(spec) -> str:
    names = {"float32": "f32", "int32": "s32", "float16": "f16", "bfloat16": "bf16", "int64": "s64",
             "bool": "pred", "float64": "f64"}
    return f"{names.get(spec.dtype.name, spec.dtype.name)}[{','.join(str(d) for d in spec.shape)}]"


def _hloviz_version() -> str:
    """The version in the checkout this script belongs to (read as text: no import)."""
    init = HERE.parent / "hloviz" / "__init__.py"
    m = re.search(r'^__version__\s*=\s*"([^"]+)"', init.read_text(encoding="utf-8"), re.M) \
        if init.is_file() else None
    return m.group(1) if m else "unknown"


def _graph_ops(concrete) -> tuple[dict, dict]:
    """op name → type, and op name → {file, line, function} of its frame in this script."""
    types, smap = {}, {}
    me = os.path.abspath(__file__)
    for op in concrete.graph.get_operations():
        types[op.name] = op.type
        for fr in reversed(op.traceback or ()):
            if os.path.abspath(fr.filename) == me:
                smap[op.name] = {"file": SCRIPT, "line": fr.lineno, "function": getattr(fr, "name", "")}
                break
    return types, smap


def capture(tf, name: str, fn, specs) -> tuple[str, str, dict]:
    started = time.monotonic()
    generate = fn.experimental_get_compiler_ir(*specs)
    pre, post = generate(stage="hlo"), generate(stage="optimized_hlo")
    device = str(tf.zeros([]).device)
    tf_ops, smap = _graph_ops(fn.get_concrete_function(*specs))
    info = {
        "hloviz": _hloviz_version(),
        "python": platform.python_version(),
        "machine": platform.platform(),
        "time": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "source": "capture_versions",
        "target": f"{SCRIPT}:{name}",
        "function": name,
        "file": SCRIPT,
        "module": "capture_versions",
        "framework": "tensorflow",
        "tensorflow": tf.__version__,
        "device": device,
        "platform": "Host" if "CPU" in device.upper() else device.rsplit(":", 2)[-2],
        "jit_compile": True,
        "args": [_spec_text(s) for s in specs],
        "arg_source": "capture_versions.py",
        "capture_seconds": round(time.monotonic() - started, 3),
        "source_map": smap,
        "tf_ops": tf_ops,
    }
    return pre, post, info


def write_capture(out_dir: Path, pre: str, post: str, info: dict) -> None:
    """Write the folder atomically (temporary folder renamed into place)."""
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.tmp-", dir=out_dir.parent))
    try:
        (tmp / "pre.hlo").write_text(pre, encoding="utf-8")
        (tmp / "post.hlo").write_text(post, encoding="utf-8")
        (tmp / "capture.json").write_text(json.dumps(info, indent=1) + "\n", encoding="utf-8")
        os.chmod(tmp, 0o755)
        if out_dir.exists():
            shutil.rmtree(out_dir)
        os.rename(tmp, out_dir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def summary(post: str) -> str:
    """A one-line count of the entry computation's kernels, from the text itself."""
    entry = post[post.find("\nENTRY"):]
    entry = entry[:entry.find("\n}")]
    ops: dict[str, int] = {}
    for m in re.finditer(r"^\s+(?:ROOT )?%?[\w.\-]+ = .*?\s([a-z][\w\-]*)\(", entry, re.M):
        ops[m.group(1)] = ops.get(m.group(1), 0) + 1
    skip = {"parameter", "constant", "tuple", "get-tuple-element", "bitcast"}
    return ", ".join(f"{k} {v}" for k, v in sorted(ops.items(), key=lambda kv: -kv[1]) if k not in skip)


def short_version(version: str) -> str:
    """``2.17.1`` → ``2.17``: folder names carry major.minor, capture.json the exact version."""
    return ".".join(version.split(".")[:2])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Capture the two-version HLO samples under this TF.")
    ap.add_argument("names", nargs="*", help="functions to capture (default: all)")
    ap.add_argument("-o", "--out", type=Path, default=OUT_ROOT, help="parent folder of the captures")
    a = ap.parse_args(argv)
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")  # CPU captures: the same on every machine
    import tensorflow as tf

    funcs = make_functions(tf)
    unknown = [n for n in a.names if n not in funcs]
    if unknown:
        print(f"unknown function(s): {', '.join(unknown)}; choose from {', '.join(funcs)}", file=sys.stderr)
        return 2
    for name in a.names or list(funcs):
        fn, specs = funcs[name]
        pre, post, info = capture(tf, name, fn, specs)
        out = a.out / f"{name}-tf{short_version(tf.__version__)}"
        write_capture(out, pre, post, info)
        size = sum(p.stat().st_size for p in out.iterdir())
        print(f"{out}: {size / 1e6:.2f} MB; post entry: {summary(post)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
