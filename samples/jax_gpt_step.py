"""A GPT-2-style training step in JAX written without any ``jax.named_scope``.

Eight unrolled decoder layers (LayerNorm, causal attention, GELU MLP, width 64), the backward
pass, gradient clipping and an AdamW update — the model of ``benchmarks/_gen_transformer.py``
with its name scopes left out, so op names carry no structure (``jit(train_step)/jvp(...)/
dot_general``) and a picture has to find the layers from the graph alone (about 26k
instructions after optimization)::

    hloviz render samples/captures/jax_gpt_step --stage both -o gpt.svg

The saved capture is in ``samples/captures/jax_gpt_step`` (no JAX needed to read it).

``train_step12`` is the same step with twelve layers (GPT-2 small's depth), to check that a
picture folds every layer however many there are::

    hloviz dump samples/jax_gpt_step.py:train_step12 -o samples/captures/jax_gpt_step12
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

from _gen_transformer import build_step  # the benchmark's model, with its scopes off

LAYERS, WIDTH, HEADS, SEQ, BATCH, VOCAB = 8, 64, 4, 16, 2, 256
#: ``train_step12``'s depth
LAYERS12 = 12

_step, _args = build_step(LAYERS, WIDTH, HEADS, SEQ, BATCH, VOCAB, "gpt2", scopes=False)
_step12, _args12 = build_step(LAYERS12, WIDTH, HEADS, SEQ, BATCH, VOCAB, "gpt2", scopes=False)


def _spec(leaf) -> str:
    kind = {"float32": "f32", "int32": "s32"}[str(leaf.dtype)]
    return f"{kind}[{','.join(map(str, leaf.shape))}]"


def _specs(tree):
    if isinstance(tree, dict):
        return {k: _specs(v) for k, v in tree.items()}
    if isinstance(tree, list):
        return [_specs(v) for v in tree]
    return _spec(tree)


HLOVIZ_ARGS = {"train_step": [_specs(a) for a in _args], "train_step12": [_specs(a) for a in _args12]}


def train_step(params, m, v, tokens, targets, t):
    """One step: loss and gradients, clipping, AdamW; returns new params, moments and the loss."""
    return _step(params, m, v, tokens, targets, t)


def train_step12(params, m, v, tokens, targets, t):
    """:func:`train_step` with :data:`LAYERS12` layers instead of :data:`LAYERS`."""
    return _step12(params, m, v, tokens, targets, t)
