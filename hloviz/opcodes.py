"""What each HLO opcode is, in the categories users of XLA's graph dumps already know.

The categories drive colours (elementwise yellow, data movement green, dot/convolution dark
blue, reduce purple, parameters orange, control flow dark green), the kernel analysis
(bookkeeping ops run nothing), and chain detection (only elementwise ops form chains).
Unknown opcodes from newer XLA fall into ``other`` rather than failing.
"""

from __future__ import annotations

ELEMENTWISE_UNARY = frozenset({
    "abs", "cbrt", "ceil", "clz", "convert", "bitcast-convert", "cosine", "erf", "exponential",
    "exponential-minus-one", "floor", "imag", "is-finite", "log", "log-plus-one", "logistic", "negate",
    "not", "popcnt", "real", "reduce-precision", "round-nearest-afz", "round-nearest-even", "rsqrt",
    "sign", "sine", "sqrt", "stochastic-convert", "tan", "tanh",
})
ELEMENTWISE_BINARY = frozenset({
    "add", "and", "atan2", "complex", "compare", "divide", "maximum", "minimum", "multiply", "or", "power",
    "remainder", "shift-left", "shift-right-arithmetic", "shift-right-logical", "subtract", "xor",
})
ELEMENTWISE = ELEMENTWISE_UNARY | ELEMENTWISE_BINARY | frozenset({"clamp", "select", "map"})

DATA_MOVEMENT = frozenset({
    "broadcast", "concatenate", "copy", "copy-start", "copy-done", "dynamic-slice", "dynamic-update-slice",
    "gather", "pad", "reshape", "dynamic-reshape", "reverse", "scatter", "slice", "transpose", "iota",
    "bitcast",
})
DOT = frozenset({"dot", "ragged-dot", "scaled-dot", "sparse-dot"})
CONVOLUTION = frozenset({"convolution", "fft", "triangular-solve", "cholesky"})
REDUCE = frozenset({"reduce", "reduce-window", "select-and-scatter", "sort", "top-k", "all-reduce",
                    "reduce-scatter", "all-reduce-start", "all-reduce-done"})
CONTROL_FLOW = frozenset({"while", "conditional", "call", "async-start", "async-update", "async-done"})
COLLECTIVE = frozenset({
    "all-gather", "all-gather-start", "all-gather-done", "all-to-all", "ragged-all-to-all",
    "collective-permute", "collective-permute-start", "collective-permute-done", "collective-broadcast",
    "send", "send-done", "recv", "recv-done", "partition-id", "replica-id",
})
TUPLE = frozenset({"tuple", "get-tuple-element"})

#: Ops that move no data and run no code on their own: never kernels.
BOOKKEEPING = frozenset({
    "parameter", "constant", "tuple", "get-tuple-element", "bitcast", "after-all", "add-dependency",
    "opt-barrier", "optimization-barrier", "partition-id", "replica-id", "domain", "get-dimension-size",
    "set-dimension-size",
})

CATEGORIES = (
    "parameter", "constant", "elementwise", "data-movement", "dot", "convolution", "reduce",
    "control-flow", "fusion", "custom-call", "collective", "tuple", "other",
)


def category(opcode: str) -> str:
    """The display category of an opcode (one of :data:`CATEGORIES`)."""
    if opcode == "parameter":
        return "parameter"
    if opcode == "constant":
        return "constant"
    if opcode == "fusion":
        return "fusion"
    if opcode == "custom-call" or opcode.startswith("custom-call"):
        return "custom-call"
    if opcode in ELEMENTWISE:
        return "elementwise"
    if opcode in DOT:
        return "dot"
    if opcode in CONVOLUTION:
        return "convolution"
    if opcode in REDUCE:
        return "reduce"
    if opcode in CONTROL_FLOW:
        return "control-flow"
    if opcode in COLLECTIVE:
        return "collective"
    if opcode in TUPLE:
        return "tuple"
    if opcode in DATA_MOVEMENT:
        return "data-movement"
    return "other"


def is_elementwise(opcode: str) -> bool:
    return opcode in ELEMENTWISE


def is_bookkeeping(opcode: str) -> bool:
    """True for ops that are not kernels: they run nothing by themselves."""
    return opcode in BOOKKEEPING
