"""FLOPs of one instruction, estimated from its shapes and attributes.

In: an instruction (a ``dot``, ``convolution``, elementwise op, ``reduce``, or a library call
such as cuBLAS's GEMM with its ``backend_config`` or a cuDNN convolution). Out: an estimated
count of floating-point operations: ``2·M·N·K`` for a dot, two per input and kernel element
that meet for a convolution (padding and dilation's gaps excluded, as XLA's cost analysis
counts; a cuDNN call as the convolution it replaced), one per output element for an
elementwise op. Its own module because the estimate
is arithmetic over one instruction's shapes, used by the kernel table (:mod:`.kernels`) and the
per-scope statistics alike, and it knows nothing of which instructions form a kernel.
"""

from __future__ import annotations

import json
import re

from ..ir import Instruction, Shape
from ..opcodes import COUNTED_BY_XLAS_FORMULA, is_bookkeeping, is_elementwise

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
        return _convolution_flops(inst, inst.operands[0].shape, inst.operands[1].shape, _first_leaf(inst))
    if op == "reduce" and inst.operands:
        # n values reduced to one take n − 1 applications of the reducer (as XLA counts them)
        reduced = inst.operands[0].shape.element_count - _first_leaf(inst).element_count
        return max(reduced, 0) * _reducer_ops(inst)
    if op == "reduce-window" and inst.operands:
        return _first_leaf(inst).element_count * max(_window_size(inst) - 1, 0) * _reducer_ops(inst)
    if op == "select-and-scatter" and len(inst.operands) >= 2:
        # each source element picks one of its window's elements (window − 1 selections) and
        # adds itself there (one scatter): a max pool's gradient
        select, scatter = (_reducer_ops(inst, name) for name in ("select", "scatter"))
        return inst.operands[1].shape.element_count * ((_window_size(inst) - 1) * select + scatter)
    if op == "scatter" and len(inst.operands) >= 3:
        # each update element combined into its place once (operands: inputs, indices, updates);
        # a combiner that returns the update (``.at[].set``) does no work, as XLA counts it
        return inst.operands[(len(inst.operands) - 1) // 2 + 1].shape.element_count * _reducer_ops(inst, least=0)
    if op in COUNTED_BY_XLAS_FORMULA:
        return _by_xlas_formula(inst)
    if op == "sort" and inst.operands:
        # a comparison sort: n·⌈log2 n⌉ for n elements of the first operand, as XLA's cost
        # analysis counts it (whatever the other operands, the dimension sorted)
        n = inst.operands[0].shape.element_count
        return n * max(n - 1, 0).bit_length()
    if op == "custom-call":
        return _gemm_flops(inst) or _library_convolution_flops(inst)
    return 0


def _by_xlas_formula(inst: Instruction) -> int:
    """The FLOPs XLA's cost analysis gives ops whose work their shapes do not say alone (its
    ``flops`` and ``transcendentals`` summed, as everywhere here):

    * an all-reduce: one combination per element of its result (XLA supposes two devices,
      whatever their number); a reduce-scatter, an all-gather and a permute move data, none;
    * an ``fft``: 8 per element of its input for each factor ⌊log2 n⌋ of its ``fft_length``
      (four complex multiply-adds);
    * an ``rng``, an ``rng-bit-generator``: one per element made (its new state's included).

    (XLA:CPU makes a ``cholesky`` or a ``triangular-solve`` a LAPACK call before its cost is
    read: no CPU program shows XLA's count of them, and none is made up here.)
    """
    op, operands = inst.opcode, inst.operands
    if op in ("rng", "rng-bit-generator", "all-reduce", "all-reduce-start"):
        return sum(leaf.element_count for leaf in inst.shape.leaves() if leaf.is_array)
    if not operands:
        return 0
    first = next(iter(operands[0].shape.leaves()))
    if op == "fft":
        factors = 1
        for n in _ints(inst.attributes.get("fft_length")):
            factors *= max(n, 1).bit_length() - 1
        return 8 * factors * first.element_count
    return 0


def _first_leaf(inst: Instruction):
    return next(iter(inst.shape.leaves()))


def _contracted(lhs: Instruction, dims_text: str | None) -> int:
    k = 1
    for d in _ints(dims_text):
        if 0 <= d < lhs.shape.rank:
            k *= max(lhs.shape.dims[d], 0)
    return k


def _reducer_ops(inst: Instruction, attribute: str | None = None, least: int = 1) -> int:
    """The work of one application of what ``inst`` calls (its reducer; with ``attribute``, the
    computation it names so: a select-and-scatter's ``select=``, ``scatter=``): its
    instructions doing work, at least ``least``."""
    name = (inst.attributes.get(attribute) or "").lstrip("%") if attribute else None
    n = sum(1 for c in inst.called_computations if name is None or c.name == name
            for i in c.instructions if not is_bookkeeping(i.opcode))
    return max(n, least)


def _window_size(inst: Instruction) -> int:
    """How many elements a ``window={size=…}`` covers (1 where it names none)."""
    m = re.search(r"size=([\dx]+)", inst.attributes.get("window") or "")
    size = 1
    for x in m.group(1).split("x") if m else ():
        size *= int(x) if x else 1
    return size


def _convolution_flops(inst: Instruction, lhs: Shape, rhs: Shape, out: Shape) -> int:
    """2 multiply-adds' worth per pair of an input element and a kernel element that meet: for
    each output feature, each input feature of its group and each batch element of its group,
    the product over spatial dimensions of the (output position, kernel position) pairs that
    land on a real input element — not on padding, nor between the elements a base dilation
    spreads. Counted so, as XLA's own cost analysis counts it: a weight-gradient convolution
    (window the size of the activation, padded by one) does 16 % fewer than its full window
    (an unseen Flax CNN's step was 10.6 % over XLA's figure). ``lhs``, ``rhs``, ``out``: the
    shapes ``dim_labels`` names, the input, the kernel and the output of the convolution."""
    try:
        lhs_labels, rest = inst.attributes.get("dim_labels", "").split("_", 1)
        rhs_labels, out_labels = rest.split("->", 1)
        batch, in_features = lhs.dims[lhs_labels.index("b")], lhs.dims[lhs_labels.index("f")]
        out_features = out.dims[out_labels.index("f")]
        spatial = [(lhs.dims[lhs_labels.index(d)], rhs.dims[rhs_labels.index(d)], out.dims[out_labels.index(d)])
                   for d in sorted(c for c in lhs_labels if c.isdigit())]
    except (IndexError, ValueError):
        return 0
    window = _window(inst.attributes.get("window"), len(spatial))
    groups = max(_int_attr(inst, "feature_group_count"), 1)
    batch_groups = max(_int_attr(inst, "batch_group_count"), 1)
    fma = (in_features // groups) * out_features * (batch // batch_groups)
    for (size_in, size_k, size_out), dim in zip(spatial, window, strict=True):
        fma *= _meeting_pairs(size_in, size_k, size_out, *dim)
    return 2 * fma


def _library_convolution_flops(inst: Instruction) -> int:
    """A convolution XLA handed to cuDNN (or MIOpen): its ``window`` and ``dim_labels`` are the
    forward convolution's, and which of operands and result play its input, kernel and output
    depends on the call — a filter gradient reads the input and the output's gradient and
    writes the kernel's; an input gradient reads the output's gradient and the kernel and writes
    the input's. Each does the forward convolution's multiply-adds, the count of the HLO
    ``convolution`` it replaced (a GPU training step's convolutions counted no work at all)."""
    target = (inst.attributes.get("custom_call_target") or "").strip('"').lower()
    if not target.startswith(("__cudnn$conv", "__miopen$conv")) or len(inst.operands) < 2 \
            or "dim_labels" not in inst.attributes:
        return 0
    first, second, result = inst.operands[0].shape, inst.operands[1].shape, _first_leaf(inst)
    if "backwardfilter" in target:
        return _convolution_flops(inst, first, result, second)
    if "backwardinput" in target:
        return _convolution_flops(inst, result, second, first)
    return _convolution_flops(inst, first, second, result)


def _int_attr(inst: Instruction, name: str) -> int:
    text = inst.attributes.get(name)
    return int(text) if text and text.isdecimal() else 1


def _window(text: str | None, rank: int) -> list[tuple[int, int, int, int]]:
    """Per spatial dimension of a convolution's ``window={…}``: (stride, padding before, base
    dilation, window dilation); absent fields are 1, 0, 1, 1."""
    fields = dict(re.findall(r"(\w+)=([\d_x-]+)", text or ""))

    def each(name: str, default: int) -> list[int]:
        values = [int(v) for v in fields[name].split("x")] if name in fields else []
        return values if len(values) == rank else [default] * rank

    pads = [p.split("_")[0] for p in fields["pad"].split("x")] if "pad" in fields else []
    low = [int(p) for p in pads] if len(pads) == rank else [0] * rank
    return list(zip(each("stride", 1), low, each("lhs_dilate", 1), each("rhs_dilate", 1), strict=True))


def _meeting_pairs(size_in: int, size_k: int, size_out: int, stride: int, pad_low: int, base_dilation: int,
                   window_dilation: int) -> int:
    """How many (output position, kernel position) pairs of one spatial dimension read a real
    input element: at ``o·stride − pad_low + k·window_dilation``, a multiple of the base
    dilation, inside the (dilated) input."""
    stride, base_dilation = max(stride, 1), max(base_dilation, 1)
    last = (size_in - 1) * base_dilation  # the last real element, in dilated coordinates
    count = 0
    for k in range(size_k):
        start = k * window_dilation - pad_low  # the input position of output 0
        if base_dilation == 1:  # the outputs o with 0 <= o·stride + start <= last: a range
            first = max(0, -(start // stride) if start < 0 else 0)
            end = min(size_out - 1, (last - start) // stride) if last >= start else -1
            count += max(0, end - first + 1)
        else:
            count += sum(1 for o in range(size_out)
                         if 0 <= o * stride + start <= last and (o * stride + start) % base_dilation == 0)
    return count


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
