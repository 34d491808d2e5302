"""Compile a deep transformer training step with JAX on CPU and write its optimized HLO text.

Run as a script (``python benchmarks/_gen_transformer.py OUT --layers N [--width D --arch A]``)
so that JAX's memory never counts against the process that later measures a parser. The model
is a decoder-only language model written out layer by layer in Python (unrolled, no
``lax.scan``): token embedding, ``layers`` pre-norm blocks (causal multi-head attention, an MLP),
a final norm, a tied LM head and softmax cross entropy; then the backward pass, global-norm
gradient clipping and an AdamW update of every parameter. Each layer runs under
``jax.named_scope`` so op_name metadata reads like a real model's
(``jit(train_step)/transpose(jvp(decoder))/layer_17/mlp/...``).

Two architectures (measured with jax 0.10.2 on CPU, width 64):

* ``llama`` (RMSNorm, RoPE, SwiGLU, no biases) — the benchmark's module. Its optimized HLO
  grows linearly: about 1250 instructions and 170 kB of text per layer (8 layers: 10.4k
  instructions; 96: 120k; 250: 312k and 42.7 MB).
* ``gpt2`` (LayerNorm, biases, GELU). XLA's CPU fusion duplicates the elementwise part of the
  residual-stream gradient into every consumer, so fused computations grow with depth and the
  module quadratically (8 layers: 27k instructions, 16: 70k); compile time explodes past ~30
  layers (LLVM on fusions of thousands of instructions). Kept as an option: a real, different
  shape of module.

The text written is exactly ``jax.jit(step).lower(...).compile().as_text()``: real XLA output,
never stitched together. A ``.json`` next to it records the settings, versions and timings.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

ARCHS = ("gpt2", "llama")

#: XLA options for the LLVM back end only: they shorten code generation (the larger part of the
#: compile at 250 layers) and run after the HLO passes, so the optimized HLO text is unchanged
#: (checked byte for byte at 64 layers against a compile without them).
BACKEND_OPTIONS = {"xla_backend_optimization_level": 0, "xla_llvm_disable_expensive_passes": True}


def build_step(layers: int, width: int, heads: int, seq: int, batch: int, vocab: int,
               arch: str = "gpt2", scopes: bool = True):
    """Return ``(step_fn, example_args)``; every argument is a ShapeDtypeStruct (no memory).

    ``scopes=False`` leaves out every ``jax.named_scope``: op names then say only what JAX
    calls the op (``jit(train_step)/jvp(...)/dot_general``), as in a step written without them.

    ``gpt2``: LayerNorm, biased projections, GELU MLP, learned positions. ``llama``: RMSNorm,
    no biases, rotary positions, SwiGLU MLP, soft-capped attention logits.
    """
    import contextlib

    import jax
    import jax.numpy as jnp

    def named_scope(name: str):
        # scopes=False: op names carry no structure (a user who never wrote a name scope)
        return jax.named_scope(name) if scopes else contextlib.nullcontext()

    if arch not in ARCHS:
        raise ValueError(f"arch must be one of {ARCHS}, not {arch!r}")
    llama = arch == "llama"
    d, f, n = width, 4 * width, batch * seq
    hd = d // heads

    def spec(*shape, dtype=jnp.float32):
        return jax.ShapeDtypeStruct(shape, dtype)

    def layer_params():
        p = {"wq": spec(d, d), "wk": spec(d, d), "wv": spec(d, d), "wo": spec(d, d),
             "w_up": spec(d, f), "w_down": spec(f, d), "attn_norm": spec(d), "mlp_norm": spec(d)}
        if llama:
            p["w_gate"] = spec(d, f)
        else:
            p.update({f"b{k}": spec(d) for k in "qkvo"})
            p.update(b_up=spec(f), b_down=spec(d), attn_norm_b=spec(d), mlp_norm_b=spec(d))
        return p

    params = {"embed": spec(vocab, d), "final_norm": spec(d),
              "layers": [layer_params() for _ in range(layers)]}
    if not llama:
        params.update(pos=spec(seq, d), final_norm_b=spec(d))

    def norm(x, p, name):
        if llama:
            return x * jax.lax.rsqrt((x * x).mean(-1, keepdims=True) + 1e-6) * p[name]
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) * jax.lax.rsqrt(var + 1e-5) * p[name] + p[name + "_b"]

    def linear(x, p, name):
        y = x @ p["w" + name]
        return y if llama else y + p["b" + name]

    def rope(t):  # rotary position embedding on [batch, heads, seq, hd]
        half = hd // 2
        freq = 10000.0 ** (-jnp.arange(half, dtype=jnp.float32) / half)
        angle = jnp.arange(seq, dtype=jnp.float32)[:, None] * freq[None, :]
        cos, sin = jnp.cos(angle), jnp.sin(angle)
        t1, t2 = t[..., :half], t[..., half:]
        return jnp.concatenate([t1 * cos - t2 * sin, t1 * sin + t2 * cos], axis=-1)

    def attention(p, x):  # x: [n, d]; activations stay 2-D between blocks
        def split_heads(t):
            return t.reshape(batch, seq, heads, hd).transpose(0, 2, 1, 3)

        q, k, v = (split_heads(linear(x, p, w)) for w in "qkv")
        if llama:
            q, k = rope(q), rope(k)
        scores = (q @ k.transpose(0, 1, 3, 2)) / jnp.sqrt(jnp.float32(hd))
        if llama:
            scores = 50.0 * jnp.tanh(scores / 50.0)  # logit soft-capping
        causal = jnp.tril(jnp.ones((seq, seq), dtype=bool))
        weights = jax.nn.softmax(jnp.where(causal, scores, -1e9), axis=-1)
        return linear((weights @ v).transpose(0, 2, 1, 3).reshape(n, d), p, "o")

    def mlp(p, x):
        if llama:  # SwiGLU
            return (jax.nn.silu(x @ p["w_gate"]) * (x @ p["w_up"])) @ p["w_down"]
        return linear(jax.nn.gelu(linear(x, p, "_up")), p, "_down")

    def loss_fn(params, tokens, targets):
        x = params["embed"][tokens]
        if not llama:
            x = x + jnp.tile(params["pos"], (batch, 1))
        with named_scope("decoder"):
            for i, p in enumerate(params["layers"]):
                with named_scope(f"layer_{i}"):
                    with named_scope("attention"):
                        x = x + attention(p, norm(x, p, "attn_norm"))
                    with named_scope("mlp"):
                        x = x + mlp(p, norm(x, p, "mlp_norm"))
        with named_scope("lm_head"):
            logits = norm(x, params, "final_norm") @ params["embed"].T
            logp = jax.nn.log_softmax(logits, axis=-1)
            return -jnp.take_along_axis(logp, targets[:, None], axis=-1).mean()

    def train_step(params, m, v, tokens, targets, t):
        loss, grads = jax.value_and_grad(loss_fn)(params, tokens, targets)
        with named_scope("optimizer"):
            norm = jnp.sqrt(sum(jnp.sum(g * g) for g in jax.tree.leaves(grads)))
            scale = jnp.minimum(1.0, 1.0 / (norm + 1e-6))
            grads = jax.tree.map(lambda g: g * scale, grads)
            b1, b2, lr, wd = 0.9, 0.999, 3e-4, 0.01
            m = jax.tree.map(lambda m, g: b1 * m + (1 - b1) * g, m, grads)
            v = jax.tree.map(lambda v, g: b2 * v + (1 - b2) * g * g, v, grads)

            def update(p, m, v):
                mhat, vhat = m / (1 - b1 ** t), v / (1 - b2 ** t)
                return p - lr * (mhat / (jnp.sqrt(vhat) + 1e-8) + wd * p)

            params = jax.tree.map(update, params, m, v)
        return params, m, v, loss

    tokens = spec(n, dtype=jnp.int32)
    return train_step, (params, params, params, tokens, tokens, spec())


def count_instructions(text: str) -> int:
    """Instruction lines of HLO text (``  name = ...`` / ``  ROOT name = ...``), all computations."""
    return sum(1 for line in text.splitlines() if line.startswith("  ") and " = " in line)


def generate(out: Path, layers: int, width: int, heads: int = 4, seq: int = 16, batch: int = 2,
             vocab: int = 256, arch: str = "gpt2") -> dict:
    """Compile once and write ``out`` (atomically) plus ``out.json``; returns the json dict."""
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import jax

    step, args = build_step(layers, width, heads, seq, batch, vocab, arch)
    t0 = time.perf_counter()
    lowered = jax.jit(step).lower(*args)
    t1 = time.perf_counter()
    compiled = lowered.compile(compiler_options=BACKEND_OPTIONS)
    t2 = time.perf_counter()
    text = compiled.as_text()
    if text is None:
        raise RuntimeError("JAX compiled the step but gave no HLO text for it")
    info = {
        "what": "optimized HLO of an unrolled transformer training step (JAX, CPU)",
        "arch": arch, "layers": layers, "width": width, "heads": heads, "seq": seq, "batch": batch, "vocab": vocab,
        "jax": jax.__version__, "python": platform.python_version(), "machine": platform.platform(),
        "compiler_options": BACKEND_OPTIONS, "lower_seconds": round(t1 - t0, 2), "compile_seconds": round(t2 - t1, 2),
        "bytes": len(text.encode()), "instructions": count_instructions(text),
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    _write_atomically(out.with_name(out.name + ".json"), json.dumps(info, indent=1) + "\n")
    _write_atomically(out, text)  # last: the .hlo existing means both files are complete
    return info


def _write_atomically(path: Path, text: str) -> None:
    """Write to a unique temporary file beside ``path``, then rename it into place."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").partition("\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--layers", type=int, required=True)
    ap.add_argument("--width", type=int, default=64)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--seq", type=int, default=16)
    ap.add_argument("--arch", choices=ARCHS, default="gpt2")
    a = ap.parse_args(argv)
    info = generate(a.out, a.layers, a.width, a.heads, a.seq, arch=a.arch)
    print(json.dumps(info))
    return 0


if __name__ == "__main__":
    sys.exit(main())
