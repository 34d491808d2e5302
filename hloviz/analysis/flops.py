"""FLOPs of one instruction, estimated from its shapes and attributes.

In: an instruction (a ``dot``, ``convolution``, elementwise op, ``reduce``, or a library call
such as cuBLAS's GEMM with its ``backend_config``). Out: an estimated count of floating-point
operations: ``2·M·N·K`` for a dot, ``2 · output elements · (window × input features)`` for a
convolution, one per output element for an elementwise op. Its own module because the estimate
is arithmetic over one instruction's shapes, used by the kernel table (:mod:`.kernels`) and the
per-scope statistics alike, and it knows nothing of which instructions form a kernel.
"""

from __future__ import annotations

import json
import re

from ..ir import Instruction
from ..opcodes import is_bookkeeping, is_elementwise

#: Deprecated name of :data:`hloviz.opcodes.BODY_CALLERS` (``opcodes.CONTROL_FLOW`` is the wider


_INTS = re.compile(r"-?\d+")


def _ints(text: str | None) -> list[int]:
    return [int(x) for x in _INTS.findall(text or "")]


def flops(inst: Instruction) -> int:
    """Estimated floating-point (or integer) operations of one instruction, from shapes."""
    op = inst.opcode
    if is_elementwise(op):
        return inst.shape.element_count if inst.shape.is_array else 0
    if op == "dot" and len(inst.operands) >= 2:
        return 2 * inst.shape.element_count * _contracted(inst.operands[0], inst.attributes.get("lhs_contracting_dims"))
    if op == "convolution" and len(inst.operands) >= 2:
        return _convolution_flops(inst)
    if op == "reduce" and inst.operands:
        return inst.operands[0].shape.element_count * _reducer_ops(inst)
    if op == "reduce-window" and inst.operands:
        window = _window_sizes(inst.attributes.get("window"))
        size = 1
        for s in window:
            size *= s
        return _first_leaf(inst).element_count * size * _reducer_ops(inst)
    if op == "custom-call":
        return _gemm_flops(inst)
    return 0


def _first_leaf(inst: Instruction):
    return next(iter(inst.shape.leaves()))


def _contracted(lhs: Instruction, dims_text: str | None) -> int:
    k = 1
    for d in _ints(dims_text):
        if 0 <= d < lhs.shape.rank:
            k *= max(lhs.shape.dims[d], 0)
    return k


def _reducer_ops(inst: Instruction) -> int:
    n = sum(1 for c in inst.called_computations for i in c.instructions if not is_bookkeeping(i.opcode))
    return max(n, 1)


def _window_sizes(text: str | None) -> list[int]:
    m = re.search(r"size=([\dx]+)", text or "")
    return [int(x) for x in m.group(1).split("x") if x] if m else []


def _convolution_flops(inst: Instruction) -> int:
    """2 · output elements · (rhs elements / output features): each output element is a dot
    product over the kernel window and the input features of its group."""
    rhs = inst.operands[1].shape
    labels = inst.attributes.get("dim_labels", "")
    try:
        rhs_labels = labels.split("_", 1)[1].split("->", 1)[0]
        out_features = rhs.dims[rhs_labels.index("o")]
    except (IndexError, ValueError):
        return 0
    if out_features <= 0:
        return 0
    return 2 * _first_leaf(inst).element_count * (rhs.element_count // out_features)


def _gemm_flops(inst: Instruction) -> int:
    """GEMM custom calls (cuBLAS/hipBLAS, oneDNN) carry their dot dimensions in backend_config."""
    target = (inst.attributes.get("custom_call_target") or "").strip('"').lower()
    if "gemm" not in target and "matmul" not in target:
        return 0
    raw = inst.attributes.get("backend_config", "")
    if raw.startswith('"'):
        raw = raw[1:-1].replace('\\"', '"')
    try:
        config = json.loads(raw) if raw else {}
    except (ValueError, RecursionError):  # not JSON, or nested deeper than Python's JSON reader goes
        return 0
    dims = _find_key(config, "dot_dimension_numbers")
    if not isinstance(dims, dict) or not inst.operands:
        return 0
    try:  # the config is the backend's JSON: trust its shape no more than its presence
        lhs_dims = [int(d) for d in dims.get("lhs_contracting_dimensions", [])]
    except (TypeError, ValueError):
        return 0
    out = _first_leaf(inst).element_count
    return 2 * out * _contracted(inst.operands[0], ",".join(map(str, lhs_dims)))


def _find_key(obj: object, key: str) -> object:
    """The value of the first ``key`` in nested dicts (depth first, in order); walked with a stack,
    since a config can nest as deep as the JSON reader allows."""
    stack = [obj]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if key in item:
                return item[key]
            stack.extend(reversed(list(item.values())))
    return None
