"""A real module made k times bigger, with k times the kernels, scopes and named parameters.

Tests that pin an algorithm as linear count the calls of its inner function on a captured
module and on ``k`` copies of it (:func:`scaled_text`), and ``benchmarks/growth_bench.py`` times
each command on such copies. Copy ``c`` of the module is the original with every instruction and
computation renamed (``%add.3`` → ``%add.3.c2``) and every op-name segment prefixed (``c2_``:
``model_1/dense_1/MatMul`` → ``c2_model_1/c2_dense_1/c2_MatMul``), so that the copies are k
models side by side — k times the scopes, each layer's name its own — not one model whose
scopes hold k times the instructions. A new entry computation takes every copy's parameters
and calls each copy's entry.
"""

from __future__ import annotations

import re

import hloviz

_NAME = re.compile(r"%([A-Za-z_][\w.\-]*)")
_OP_NAME = re.compile(r'op_name="([^"]*)"')


def copy_prefix(copy: int) -> str:
    return f"c{copy}_"


def prefixed_name(name: str, copy: int) -> str:
    """An op name or a parameter path as copy ``copy`` writes it (each ``/``-segment prefixed)."""
    return "/".join(copy_prefix(copy) + s if s else s for s in name.split("/"))


def scaled_text(base: hloviz.HloModule, copies: int) -> str:
    """``copies`` renamed copies of ``base`` (see the module docstring), one new entry calling each."""
    canonical = hloviz.to_text(base)
    body = canonical.split("\n", 1)[1]  # drop the header; computations follow
    entry = base.entry
    root = entry.root if entry is not None else None
    if entry is None or root is None:
        raise ValueError(f"{base.name} has no ENTRY computation with a ROOT to call")
    out = [f"HloModule {base.name}_x{copies}", ""]
    for k in range(copies):
        copy = _NAME.sub(lambda m, k=k: f"%{m.group(1)}.c{k}", body).replace("ENTRY %", "%")
        copy = _OP_NAME.sub(lambda m, k=k: f'op_name="{prefixed_name(m.group(1), k)}"', copy)
        out.append(copy)
    lines = []
    results = []
    n = 0
    for k in range(copies):
        operands = []
        for p in entry.parameters:
            lines.append(f"  %p{n} = {p.shape} parameter({n})")
            operands.append(f"%p{n}")
            n += 1
        lines.append(f"  %call{k} = {root.shape} call({', '.join(operands)}), to_apply=%{entry.name}.c{k}")
        results.append(f"%call{k}")
    shapes = ", ".join(str(root.shape) for _ in range(copies))
    lines.append(f"  ROOT %all = ({shapes}) tuple({', '.join(results)})")
    out.append("ENTRY %main {\n" + "\n".join(lines) + "\n}\n")
    return "\n".join(out)


def scaled_parameter_names(names: dict[str, str], base_parameters: int, copies: int) -> dict[str, str]:
    """A capture's ``parameter_names`` (entry parameter number → name) for :func:`scaled_text`'s
    module: copy ``c``'s parameter ``j`` is number ``c * base_parameters + j``, its name prefixed."""
    return {str(c * base_parameters + int(j)): prefixed_name(name, c)
            for c in range(copies) for j, name in names.items()}
