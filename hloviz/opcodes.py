"""What each HLO opcode is: every set of opcodes hloviz reasons with, named for what it means.

Two kinds of set live here:

* **Display categories** (:func:`category`, :data:`CATEGORIES`), the ones users of XLA's graph
  dumps already know: they drive colours (elementwise yellow, data movement green,
  dot/convolution dark blue, reduce purple, parameters orange, control flow dark green) and
  chain detection (only elementwise ops form chains). Unknown opcodes from newer XLA fall into
  ``other`` rather than failing.
* **Roles** an opcode plays in an analysis: :data:`BOOKKEEPING` (never a kernel),
  :data:`BODY_CALLERS` (runs a called computation as a body), :data:`ASYNC_TAILS`,
  :data:`INLINING_CALLERS`, :data:`PASS_THROUGH_CALLERS`, :data:`VALUE_FORWARDING_CALLERS`,
  :data:`NOT_FOLDABLE`, :data:`COMMUTATIVE`. A category answers "how is it drawn"; a role
  answers "what does this analysis do with it" — ``call`` is in the control-flow category and a
  body caller, ``async-done`` is in the control-flow category but an async tail, not a caller.

Modules import these sets instead of spelling out their own.
"""

from __future__ import annotations

ELEMENTWISE_UNARY = frozenset({
    "abs", "acos", "acosh", "asin", "asinh", "atanh", "cbrt", "ceil", "cosh", "sinh", "clz", "convert",
    "bitcast-convert", "cosine", "erf", "exponential",
    "exponential-minus-one", "floor", "imag", "is-finite", "log", "log-plus-one", "logistic", "negate",
    "not", "popcnt", "real", "reduce-precision", "round-nearest-afz", "round-nearest-even", "rsqrt",
    "sign", "sine", "sqrt", "stochastic-convert", "tan", "tanh",
})
ELEMENTWISE_BINARY = frozenset({
    "add", "and", "atan2", "complex", "compare", "divide", "maximum", "minimum", "multiply", "or", "power",
    "remainder", "shift-left", "shift-right-arithmetic", "shift-right-logical", "subtract", "xor",
})
ELEMENTWISE = ELEMENTWISE_UNARY | ELEMENTWISE_BINARY | frozenset({"clamp", "select", "map"})
#: The activations that are one instruction (``jax.nn.tanh``, ``jax.nn.sigmoid``); a ``convert`` or
#: a ``log`` after a layer is the next op's work (a global average pool's, a loss's).
ACTIVATIONS = frozenset({"tanh", "logistic"})

DATA_MOVEMENT = frozenset({
    "broadcast", "concatenate", "copy", "copy-start", "copy-done", "dynamic-slice", "dynamic-update-slice",
    "gather", "pad", "reshape", "dynamic-reshape", "reverse", "scatter", "slice", "transpose", "iota",
    "bitcast",
})
DOT = frozenset({"dot", "ragged-dot", "scaled-dot", "sparse-dot"})
CONVOLUTION = frozenset({"convolution", "fft", "triangular-solve", "cholesky"})
#: A pass's products: a loop whose body runs them both forward and backward runs micro-batches
#: (:func:`hloviz.render.tree.layers._passes_run`), not a recurrence.
PRODUCTS = DOT | CONVOLUTION
REDUCE = frozenset({"reduce", "reduce-window", "select-and-scatter", "sort", "top-k", "all-reduce",
                    "reduce-scatter", "all-reduce-start", "all-reduce-done"})
#: The "control-flow" display category: ops that run other computations, or start and finish
#: asynchronous work. For the ops whose called computations run as bodies, see BODY_CALLERS.
CONTROL_FLOW = frozenset({"while", "conditional", "call", "async-start", "async-update", "async-done"})
COLLECTIVE = frozenset({
    "all-gather", "all-gather-start", "all-gather-done", "all-to-all", "ragged-all-to-all",
    "collective-permute", "collective-permute-start", "collective-permute-done", "collective-broadcast",
    "send", "send-done", "recv", "recv-done", "partition-id", "replica-id",
})
TUPLE = frozenset({"tuple", "get-tuple-element"})
#: What a value nothing reads may be and still go into an overview's one ``unused`` box (a loop's
#: unread results, ``zeros_like`` constants, an optimizer's unread slots): no work of its own.
UNREAD_HOLDERS = TUPLE | {"constant", "parameter"}

#: Ops that move no data and run no code on their own: never kernels.
BOOKKEEPING = frozenset({
    "parameter", "constant", "tuple", "get-tuple-element", "bitcast", "after-all", "add-dependency",
    "opt-barrier", "optimization-barrier", "partition-id", "replica-id", "domain", "get-dimension-size",
    "set-dimension-size",
})

# -- roles ----------------------------------------------------------------------------------

#: Instructions that never decide which scope (layer) a fusion is drawn in: values passed along.
SCOPE_NEUTRAL = frozenset({"parameter", "constant", "get-tuple-element", "tuple", "bitcast"})
#: Unnamed instructions drawn with the layer that uses them (a layer's weights, its constants).
SCOPE_INPUTS = frozenset({"parameter", "constant", "iota"})
#: Unnamed instructions drawn with their operand's layer (layout changes and tuple plumbing).
SCOPE_PLUMBING = frozenset({"copy", "reshape", "bitcast", "get-tuple-element", "transpose"})
#: What a block of a training step's loose ops never takes in (:mod:`hloviz.render.tree.phases`):
#: the function's input, a loop, a branch: each stays a box of its own.
LOOSE_APART = frozenset({"parameter", "while", "conditional"})
#: What an entry computation that only calls another holds beside that ``call`` (a JAX function
#: calling a jitted step: its arguments passed in, closed-over arrays as constants, the results
#: taken apart and put together).
CALL_WRAPPING = frozenset({"parameter", "constant", "tuple", "get-tuple-element", "copy", "bitcast", "reshape"})
#: Ops that carry a value on to its use without computing with it: spread to a shape, laid out
#: anew, converted. A folded constant is the work of the op that uses it *through* them: XLA
#: merges equal broadcasts across layers and keeps one op name, which is no user's.
VALUE_CARRIERS = frozenset({"broadcast", "bitcast", "reshape", "convert", "copy", "transpose"})
#: What hands a weight on without computing with it: the value carriers, and a slice (a scan's
#: ``dynamic-slice`` of a stacked weight is that step's weight).
WEIGHT_CARRIERS = VALUE_CARRIERS | frozenset({"dynamic-slice", "slice"})
#: ... and a convolution's input gradient reads its kernel flipped (``reverse``): the weight still
#: (:mod:`hloviz.analysis.scopes.instances` follows a layer's reads back to its weights through these).
FLIPPED_WEIGHT_CARRIERS = WEIGHT_CARRIERS | frozenset({"reverse"})
#: Ops that run nothing themselves: an argument, an element of a tuple, a buffer's bytes read under
#: another shape (no kernel in an optimized module; a weight's ``bitcast`` is its layer's preparation).
RUNS_NOTHING = frozenset({"parameter", "get-tuple-element", "bitcast"})
#: Ops that only lay a value out anew: the same elements, another shape or order. A weight
#: gradient reads the forward activation through them (XLA transposes it for the convolution).
LAYOUT_ONLY = frozenset({"copy", "transpose", "bitcast", "reshape"})
#: Data movement driven by indices: one result element may come from anywhere in the operand.
INDEXED_MOVEMENT = frozenset({"gather", "scatter", "dynamic-slice", "dynamic-update-slice"})
#: What XLA adds without an op name to stage a value (a zero buffer broadcast from a constant,
#: its copies into a loop's carried tuple): no work of the model's, folded into its one user
#: in the overview.
STAGING = frozenset({"copy", "broadcast", "bitcast", "constant", "iota", "fusion"})
#: Ops that make a value from no data (a literal when their operands are): XLA shares them
#: between layers, so they never say which layer a kernel works for.
LITERAL_SOURCES = frozenset({"constant", "iota"})
#: Ops never placed in a layer by their data flow: the views place them (weights with their
#: users, results with their operands), or they are literals.
NOT_PLACED_BY_FLOW = SCOPE_INPUTS | TUPLE
#: A layer's own work on what it reads — a convolution, a ``dot``, an embedding's ``gather`` of
#: its rows: a training step's first layer runs it on the program's inputs, which are parameters
#: (:mod:`hloviz.render.cut.order`).
LAYER_WORK = frozenset({"convolution", "dot", "gather"})
#: Opcodes whose instructions are a fusion's heavy work, with the weight of their vote for the
#: fusion's layer (every other working opcode counts 1): a conv + batch norm + relu fusion is the
#: convolution's layer's first (:mod:`hloviz.analysis.attribution`).
HEAVY_WORK = {"convolution": 16, "dot": 16, "custom-call": 8, "reduce": 4, "reduce-window": 4, "scatter": 4,
              "gather": 2}

#: Ops whose called computations run as bodies: the body's instructions are the kernels (and are
#: drawn as a body cluster); the op itself runs nothing. Fusions are kernels of their own.
BODY_CALLERS = frozenset({"while", "conditional", "call", "async-start"})
#: Ops whose FLOPs their shapes do not say alone, counted by the formula XLA's cost analysis
#: gives each (:func:`hloviz.analysis.flops.flops`): an all-reduce, an FFT, random bits.
COUNTED_BY_XLAS_FORMULA = frozenset({"all-reduce", "all-reduce-start", "fft", "rng", "rng-bit-generator"})
#: Ops that finish work counted at their ``*-start`` partner (or only wait on it): never kernels.
ASYNC_TAILS = frozenset({
    "async-update", "async-done", "copy-done", "send-done", "recv-done", "all-reduce-done",
    "all-gather-done", "collective-permute-done",
})
#: Ops whose called computations XLA may inline, prefixing the inlined ops' names with the caller's.
INLINING_CALLERS = frozenset({"call", "conditional", "async-start"})
#: Callers whose operands flow one to one into the called computation's parameters.
PASS_THROUGH_CALLERS = frozenset({"fusion", "call", "async-start", "custom-call"})
#: Callers whose result is their single called computation's root value (and whose computation's
#: parameters are their operands): a value can be followed through them in both directions.
VALUE_FORWARDING_CALLERS = frozenset({"fusion", "call"})
#: Callers whose work is their called computations' (a fusion's, a loop body's): a diff compares
#: that work through the computations, not by the caller's own FLOPs.
CALLEE_WORK_CALLERS = BODY_CALLERS | VALUE_FORWARDING_CALLERS | {"async-done"}
#: Ops that draw random numbers: never folded. XLA expands a generator into bit arithmetic whose
#: constants (a shift by 9, a scale by 2**-23) carry its name, while the draw runs on every call.
RANDOM = frozenset({"rng", "rng-bit-generator", "rng-get-and-update-state"})
#: Ops never evaluated at compile time, even when every operand is a constant: they read state,
#: talk to other devices or the host, or run other computations.
NOT_FOLDABLE = frozenset({
    "parameter", "rng", "rng-bit-generator", "rng-get-and-update-state", "custom-call", "infeed",
    "outfeed", "recv", "recv-done", "send", "send-done", "after-all", "partition-id", "replica-id",
    "while", "conditional", "call", "fusion", "all-reduce", "all-gather", "all-to-all",
    "collective-permute", "reduce-scatter", "async-start", "async-done", "add-dependency",
})
#: Ops whose operand order does not matter (their arrows in a picture carry no operand index).
COMMUTATIVE = frozenset({"add", "multiply", "maximum", "minimum", "and", "or", "xor"})
#: Ops whose arrows in a picture carry no operand index: the order does not change the result
#: (:data:`COMMUTATIVE`), or it is XLA's own, not the user's (a fusion's operands are its fused
#: computation's parameters, in the order XLA gave them; a closed fusion's box shows none of them).
NO_OPERAND_INDEX = COMMUTATIVE | {"fusion"}

#: Ops that define no buffer of their own (XLA's dataflow analysis): they pass an operand's value
#: along (bitcast, get-tuple-element) or stand for the buffers of their bodies (while, call).
DEFINES_NO_BUFFER = frozenset({
    "bitcast", "get-tuple-element", "while", "call", "conditional", "opt-barrier", "domain", "add-dependency",
})
#: Ops that define only their top-level buffer (the tuple's pointer table); the elements are their
#: operands' buffers.
DEFINES_TOP_LEVEL_ONLY = frozenset({"tuple"})
#: Ops that update their first operand in place: the result takes over the operand's buffer.
IN_PLACE = frozenset({"dynamic-update-slice", "scatter"})
#: Ops whose called computations run once per element or window, on each thread's own stack:
#: XLA gives their values thread-local allocations (the fused computations of fusions excepted;
#: a custom call's comparator too: ``lax.top_k``'s ``TopK`` call on the CPU).
THREAD_LOCAL_CALLERS = frozenset({
    "reduce", "reduce-window", "map", "sort", "scatter", "select-and-scatter", "all-reduce", "reduce-scatter",
    "custom-call",
    "all-reduce-start",
})
#: Every opcode XLA's HLO text parser knows (xla/hlo/ir/hlo_opcode.h); anything else is a newer
#: XLA's, drawn as "other" (:func:`category`) and reported by :func:`hloviz.verify.verify`.
KNOWN = (ELEMENTWISE | DATA_MOVEMENT | DOT | CONVOLUTION | REDUCE | CONTROL_FLOW | COLLECTIVE | TUPLE
         | BOOKKEEPING | NOT_FOLDABLE | frozenset({
             "batch-norm-grad", "batch-norm-inference", "batch-norm-training", "custom-call", "fusion",
             "outfeed", "infeed", "rng", "rng-bit-generator", "rng-get-and-update-state",
             "dynamic-reshape", "all-gather-start", "all-gather-done", "collective-permute-start",
             "collective-permute-done", "ragged-all-to-all", "collective-broadcast", "async-update",
             "topk", "scan",
         }))
#: Ops that take a ``result_accuracy`` attribute: the unary transcendentals XLA may approximate.
RESULT_ACCURACY_OPS = frozenset({
    "exponential", "exponential-minus-one", "log", "log-plus-one", "logistic", "sqrt", "cbrt", "rsqrt",
    "tanh", "tan", "sine", "cosine", "erf",
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
