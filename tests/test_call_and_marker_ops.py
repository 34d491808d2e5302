"""An op that calls a function is credited with the kernels of what it calls, not with every
kernel whose name is written below its own; a sharding marker computes nothing (held-out round
77, ``benchmarks/heldout/round77_jax.py``: ``siamese_topk_step``, whose loss's ``jnp.argmax``
is a ``call`` named ``jit(f)/jvp()`` — the whole forward pass is named below ``jvp()`` —, and
``nnx_cnn_lars_step``, whose dropout key NNX marks with a ``Sharding`` custom call named
``jit(f)``; JAX, XLA:CPU, ``tests/data/steps/``).

``stats`` said ``jvp()`` ran in 13 kernels (the logits' dot, the top-k, the exponential of the
softmax…) and the marker in 185, every kernel of the step, and the picture drew "1 op → 185
kernels" twice.

Oracles: the HLO text by regular expression (the call and what its callee's ops are named, the
kernels of the optimized module and the op names inside each).
"""

from __future__ import annotations

import re

from hloviz.analysis.pre_post.mapping import pre_to_post
from hloviz.parser import parse

from .step_texts import step_texts


def _computations(text: str) -> dict[str, str]:
    """Computation name → its body text."""
    return {m.group(1): m.group(2) for m in re.finditer(r"^(?:ENTRY )?%?([\w.-]+) [^\n]*\{\n(.*?)\n\}", text,
                                                         re.MULTILINE | re.DOTALL)}


def test_a_call_is_credited_with_the_kernels_of_what_it_calls():
    pre, post = step_texts("siamese_topk_step")
    op = "jit(siamese_topk_step)/jvp()"
    calls = re.findall(rf'= \S+ call\([^\n]*to_apply=([\w.-]+), metadata=\{{op_name="{re.escape(op)}"', pre)
    assert len(calls) == 1  # the situation: the op is one call
    callee_ops = set(re.findall(r'op_name="([^"/]+)"', _computations(pre)[calls[0]])) - {op}
    assert callee_ops  # (argmax's iota and reduce)
    inlined = {f"{op}/{x}" for x in callee_ops}
    comps = _computations(post)
    below = 0
    kernel_names: dict[str, set[str]] = {}
    entry = post[post.index("\nENTRY"):].split("\n}\n", 1)[0]
    for m in re.finditer(r"^\s*(?:ROOT )?%([\w.-]+) = [^\n]*$", entry, re.MULTILINE):
        line = m.group(0)
        names = set(re.findall(r'op_name="([^"]+)"', line))
        fused = re.search(r"calls=%([\w.-]+)", line)
        if fused and fused.group(1) in comps:
            names |= set(re.findall(r'op_name="([^"]+)"', comps[fused.group(1)]))
        kernel_names[m.group(1)] = names
        below += any(n.startswith(f"{op}/") for n in names)
    mapping = {m.op_name: m for m in pre_to_post(parse(pre), parse(post)).ops}
    got = mapping[op].kernels
    assert got and all(kernel_names[k] & inlined for k in got), {k: kernel_names.get(k) for k in got}
    assert len(got) < below  # (not every kernel named below jvp())


def test_a_sharding_marker_computes_nothing():
    pre, post = step_texts("nnx_cnn_lars_step")
    op = "jit(nnx_cnn_lars_step)"
    lines = re.findall(rf'^\s*[\w.-]+ = [^\n]*metadata=\{{op_name="{re.escape(op)}"[ }}]', pre, re.MULTILINE)
    assert lines and all('custom_call_target="Sharding"' in line for line in lines)  # the situation
    assert f'op_name="{op}"' not in post
    mapping = {m.op_name: m for m in pre_to_post(parse(pre), parse(post)).ops}
    assert mapping[op].status == "no_work" and mapping[op].kernels == ()
