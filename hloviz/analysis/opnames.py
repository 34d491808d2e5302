"""Reading a framework's ``metadata.op_name`` as a path through the model's own structure.

TensorFlow and JAX write the structure of the user's program into every op name:

* TensorFlow: name scopes joined by ``/`` — Keras layers (``mobilenetv2_1.00_224_1/
  block_5_expand_1/convolution``), ``tf.name_scope`` blocks, TF's own op scopes (``moments``,
  ``Tensordot``). Keras 3 enters each layer's scope anew on every trace, and TensorFlow makes
  the name unique with a ``_N`` suffix (``block_0`` → ``block_0_1``). The backward pass computed
  by ``tf.GradientTape`` is named ``gradient_tape/<forward path>``; an optimizer's update ops
  sit under the optimizer's name (``adam/…``, ``SGD/…``).
* JAX: the name stack, whose segments may be transformations wrapping a name:
  ``jit(train_step)/jvp(Transformer)/Block_0/Attention/dot_general`` for the forward pass of a
  gradient, ``transpose(jvp(Transformer))/…`` for its backward pass; ``remat``/``checkpoint``,
  ``vmap(…)``, ``pjit(…)`` and nested ``jit(…)`` wrap calls; ``while/body`` is a loop's body.

:func:`parse_op_name` turns one op name into an :class:`OpPath`: the *scope path* (segments of
the forward path with transformations unwrapped, so a layer's forward and backward ops land in
one scope), the op's own last segment, and the *phase* (``forward``, ``backward``,
``optimizer``). The rules are in the docstrings below; nothing else guesses.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

#: The phases an op can belong to, in the order a training step runs them.
PHASES = ("forward", "backward", "optimizer")

#: TensorFlow's prefix for the ops ``tf.GradientTape.gradient`` adds.
GRADIENT_TAPE = "gradient_tape"
#: First segments that mark the backward pass: the tape's, and ``tf.gradients``' (TF 1 style:
#: ``gradients/dense/MatMul_grad/MatMul``).
BACKWARD_PREFIXES = frozenset({GRADIENT_TAPE, "gradients"})

#: First segments that name an optimizer's update, matched case-insensitively: Keras 2 names an optimizer
#: by its class (``RMSprop``, ``AdamW``), Keras 3 by the class in snake case, its own way (``rm_sprop``,
#: ``adam_w``, ``schedule_free_adam_w``: each optimizer class's ``name`` in Keras 3.15). A user's own
#: ``name_scope("optimizer")`` counts too, and a name ending in one of these (:func:`is_optimizer_scope`).
OPTIMIZER_SCOPES = frozenset({
    "adam", "adamw", "adam_w", "adamax", "nadam", "sgd", "rmsprop", "rm_sprop", "adagrad", "adadelta",
    "adafactor", "ftrl", "lion", "lamb", "muon", "schedule_free_adam_w", "schedulefreeadamw",
    "multi_optimizer", "loss_scale_optimizer", "optimizer", "optax", "training",
})

#: First segments that name a Keras loss: the ``name`` of each loss class of Keras 3.15 (a loss
#: called on its own, or by ``compile``, runs under its name: ``sparse_categorical_crossentropy/…``).
LOSS_SCOPES = frozenset({
    "binary_crossentropy", "binary_focal_crossentropy", "categorical_crossentropy",
    "categorical_focal_crossentropy", "categorical_generalized_cross_entropy", "categorical_hinge", "circle",
    "cosine_similarity", "ctc", "dice", "hinge", "huber_loss", "kl_divergence", "log_cosh",
    "mean_absolute_error", "mean_absolute_percentage_error", "mean_squared_error",
    "mean_squared_logarithmic_error", "poisson", "sparse_categorical_crossentropy", "squared_hinge", "tversky",
})

#: The scopes TensorFlow's control flow wraps the ops of its branches and bodies in
#: (``cond/adam/Mul``: Keras's LossScaleOptimizer updates only when the gradients are finite).
TF_CONTROL_FLOW = frozenset({"cond", "while", "case"})

#: JAX transformations that wrap a name without being one: ``jvp(f)`` is f's forward pass under
#: differentiation, ``transpose(…)`` the backward pass, the rest are calls or rewrites of f.
TRANSFORMS = frozenset({
    "jvp", "transpose", "vmap", "pmap", "xmap", "pjit", "jit", "remat", "checkpoint", "custom_jvp_call", "custom_vjp_call",
    "custom_vjp_call_jaxpr", "shard_map", "named_call", "core_call", "closed_call", "linearize", "vjp", "grad",
    "value_and_grad"})
#: Segments that only say a transformation or a call happened (JAX's ``checkpoint`` /
#: ``rematted_computation`` around a rematerialised function, ``closed_call`` around a call).
TRANSPARENT = frozenset({"remat", "checkpoint", "rematted_computation", "remat2", "closed_call", "core_call"})
#: An einsum's subscripts, which ``jnp.einsum`` writes into the name stack around its ops
#: (``jvp(vmap(BTNH,BSNH->BNTS))/dot_general``): a name of the op, not of the model's structure.
#: As a scope it gathered every layer's attention scores into one box above the model.
_EINSUM = re.compile(r"[A-Za-z.]*(?:,[A-Za-z.]*)*->[A-Za-z.]*")

#: Scope levels one op name may open. Real models nest a few dozen at most (a Keras model in a model,
#: JAX's transformations, flax's modules); deeper levels are filed in the deepest one kept, so the tree,
#: the paths kept for every scope and each picture's nested clusters stay linear in the op name's
#: length (40,000 levels of ``a/`` cost 6-8 GB when each of 40,000 scopes kept its whole path).
MAX_SCOPE_DEPTH = 64

#: Keras's numbering of a second layer of one name (``dense_1``): the name and the number.
KERAS_SUFFIX = re.compile(r"^(.+)_(\d+)$")


@dataclass(frozen=True)
class OpPath:
    """One op name, read: ``scope`` (the scope path's segments), ``op`` (the last segment),
    ``phase`` (one of :data:`PHASES`) and ``raw`` (the op name as written)."""

    scope: tuple[str, ...]
    op: str
    phase: str
    raw: str

    @property
    def scope_path(self) -> str:
        """The scope path as ``/``-joined text ("" for an op outside any scope)."""
        return "/".join(self.scope)


def split_segments(name: str) -> list[str]:
    """``a/b(c/d)/e`` → ``["a", "b(c/d)", "e"]``: split at slashes outside parentheses, since a
    JAX transformation may wrap a name holding slashes. (Only the slashes and parentheses are
    visited: a JAX name is mostly letters, and every distinct op name of a module is split.)"""
    if "(" not in name:
        return [s for s in name.split("/") if s]
    out: list[str] = []
    depth = start = 0
    for m in _SLASH_OR_PAREN.finditer(name):
        ch = m.group()
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth = max(depth - 1, 0)
        elif depth == 0:
            i = m.start()
            if i > start:
                out.append(name[start:i])
            start = i + 1
    if start < len(name):
        out.append(name[start:])
    return out


_SLASH_OR_PAREN = re.compile(r"[/()]")


def unwrap(segment: str) -> tuple[list[str], bool]:
    """The names a segment stands for once JAX's transformations are taken off, and whether a
    ``transpose`` (the backward pass) was among them: ``transpose(jvp(Block))`` → (["Block"],
    True); ``jvp(jvp(a/b))`` → (["a", "b"], False); ``remat`` → ([], False). A segment that is
    not a known transformation (``Dense_0``, ``jit(f)`` is handled by the caller) stays as is.

    A wrapper is taken off only when its ``(`` closes at the segment's end. The work is one pass
    over the segment with an explicit stack (wrappers nest as deep as a name is long: thousands
    of ``jvp(a/`` must neither recurse nor re-read the rest of the name at every level)."""
    close = _closing(segment)
    names: list[str] = []
    backward = False
    todo = [(0, len(segment))]  # ranges of the segment still to read, the next one last
    while todo:
        lo, hi = todo.pop()
        stripped = False
        while True:
            m = _WRAPPER.match(segment, lo, hi)
            if m is None or m.group(1) not in TRANSFORMS or close.get(m.end() - 1) != hi - 1:
                break
            backward = backward or m.group(1) == "transpose"
            lo, hi, stripped = m.end(), hi - 1, True
        if lo >= hi or (hi - lo <= _LONGEST_TRANSPARENT and segment[lo:hi] in TRANSPARENT) or (
                _EINSUM.fullmatch(segment, lo, hi)):
            continue
        parts = _top_level_parts(segment, lo, hi, close) if stripped else [(lo, hi)]
        if len(parts) == 1:
            names.append(segment[lo:hi])
        else:
            todo.extend(reversed(parts))
    return names, backward


_WRAPPER = re.compile(r"([A-Za-z_][\w.]*)\(")
_SLASH_OR_OPEN = re.compile(r"[/(]")
_LONGEST_TRANSPARENT = max(map(len, TRANSPARENT))


def _closing(text: str) -> dict[int, int]:
    """Position of each ``(`` → position of the ``)`` that closes it (a ``)`` with nothing open
    is ignored, as :func:`split_segments` does; an unclosed ``(`` has no entry)."""
    out: dict[int, int] = {}
    if "(" not in text:
        return out
    open_at: list[int] = []
    for m in re.finditer(r"[()]", text):
        if m.group() == "(":
            open_at.append(m.start())
        elif open_at:
            out[open_at.pop()] = m.start()
    return out


def _top_level_parts(text: str, lo: int, hi: int, close: dict[int, int]) -> list[tuple[int, int]]:
    """``text[lo:hi]`` split at slashes outside parentheses, as ranges (empty parts dropped);
    a parenthesised stretch is jumped over, so nested ranges are each read once."""
    parts: list[tuple[int, int]] = []
    start = i = lo
    while True:
        m = _SLASH_OR_OPEN.search(text, i, hi)
        if m is None:
            break
        k = m.start()
        if m.group() == "(":
            j = close.get(k)
            if j is None or j >= hi:
                break  # open to the end: no slash after it is at the top level
            i = j + 1
            continue
        if k > start:
            parts.append((start, k))
        start = i = k + 1
    if start < hi:
        parts.append((start, hi))
    return parts


@lru_cache(maxsize=65536)
def _unwrapped(segment: str) -> tuple[tuple[str, ...], bool]:
    """:func:`unwrap`, once per distinct segment: the segments of a model's op names repeat
    (``transpose(jvp(Transformer))``, ``Attention`` in each of 250 blocks' names)."""
    names, backward = unwrap(segment)
    return tuple(names), backward


@lru_cache(maxsize=4096)
def is_optimizer_scope(name: str) -> bool:
    """Whether scope ``name`` is an optimizer's own (``adam``, ``sgd_1``: :data:`OPTIMIZER_SCOPES`, Keras's ``_N``
    aside), or one its author named ending in the class's (a GAN's ``c_adam``: its update was forward work)."""
    name = _unnumbered(name.lower())
    return name in OPTIMIZER_SCOPES or any(name.endswith("_" + o) for o in OPTIMIZER_SCOPES if o != "training")


def is_loss_scope(name: str) -> bool:
    """Whether scope ``name`` is a Keras loss's own (``binary_crossentropy_1``: :data:`LOSS_SCOPES`,
    Keras's ``_N`` aside)."""
    return _unnumbered(name.lower()) in LOSS_SCOPES


def _unnumbered(scope: str) -> str:
    """A scope's name without the ``_N`` Keras appends to make it unique (``sgd_1``: the
    optimizer of a model built a second time in the process)."""
    base, sep, n = scope.rpartition("_")
    return base if sep and base and n.isdigit() else scope


#: The first segment of the ops of a function TensorFlow called (``PartitionedCall_3``).
_CALL = re.compile(r"^(?:Stateful)?PartitionedCall(?:_\d+)?$")


@lru_cache(maxsize=65536)
def parse_op_name(op_name: str, op_type: str = "") -> OpPath:
    """Read one op name (see the module docstring). TF's names of merged ops
    (``Cos;PartitionedCall/Cos``) are read by their first part.

    * ``gradient_tape/<path>`` (or ``gradients/<path>``) → scope ``<path>``, phase ``backward``; so is
      ``gradient_tape/gradient_tape/<path>``, a tape's gradient of another's (the work is ``<path>``'s);
    * a first segment in :data:`OPTIMIZER_SCOPES` → phase ``optimizer`` (the scope stays), TensorFlow's
      ``_N`` suffix ignored (``sgd_1``, the optimizer of a model built a second time);
    * JAX segments are unwrapped (:func:`unwrap`), a ``transpose`` among them making the op
      ``backward``; the first segment ``jit(f)`` is kept as written: it is the function;
    * a top-level TF ``AddN`` (how the tape sums the gradients of a value used twice) is
      ``backward`` when ``op_type`` says so;
    * the scope keeps its first :data:`MAX_SCOPE_DEPTH` levels (the op stays the last segment).
    """
    first = op_name.split(";", 1)[0]
    segments = split_segments(first)
    phase = "forward"
    if not segments:
        return OpPath((), "", phase, op_name)
    if segments[0] in BACKWARD_PREFIXES and len(segments) > 1:
        phase = "backward"
        while segments[0] in BACKWARD_PREFIXES and len(segments) > 1:
            segments = segments[1:]  # a gradient of a gradient (nested tapes: a PINN's ``u_xx``) is still the layer's
    elif len(segments) > 2 and _CALL.match(segments[0]) and segments[1] in BACKWARD_PREFIXES:
        # the gradient TensorFlow takes through a function it called (a grouped convolution's,
        # ``PartitionedCall_3/gradients/convolution_grad/Conv2DBackpropFilter``): named by the
        # call, not the layer, whose name the function never saw — backward work of no scope,
        # placed by data flow (as the tape's sums), not a forward scope ``PartitionedCall``
        return OpPath((), segments[-1], "backward", op_name)
    if segments[0].startswith(("jit(", "pjit(")):
        segments = _without_control_flow(segments)
    out, phase = _unwrapped_path(segments, phase)
    if not out:
        return OpPath((), "", phase, op_name)
    if phase == "forward":
        k = 1 if out[0].startswith(("jit(", "pjit(")) and len(out) > 2 else 0
        while k < len(out) - 2 and _unnumbered(out[k]) in TF_CONTROL_FLOW:
            k += 1  # ``cond/adam/Mul``: a LossScaleOptimizer applies its update in a tf.cond
        if len(out) > 1 and is_optimizer_scope(out[k]):
            phase = "optimizer"
        elif len(out) == 1 and op_type == "AddN":
            phase = "backward"
    return OpPath(tuple(out[:-1][:MAX_SCOPE_DEPTH]), out[-1], phase, op_name)


def _unwrapped_path(segments: list[str], phase: str) -> tuple[list[str], str]:
    """The path of ``segments`` with JAX's transformations taken off (:func:`unwrap`), and the phase."""
    out: list[str] = []
    entered: list[int] = []  # where in ``out`` each transformation's names end
    last = len(segments) - 1
    for i, seg in enumerate(segments):
        if i == 0 and seg.startswith(("jit(", "pjit(")) and seg.endswith(")"):
            out.append(seg)  # the traced function itself
            continue
        names, backward = _unwrapped(seg)
        if not names and i == last and (seg in TRANSPARENT or _EINSUM.fullmatch(seg)):
            names = (seg,)  # the op itself (a ``closed_call``), not a wrapper of what follows
        if backward:
            phase = "backward"
        if names and seg != "/".join(names):  # a transformation re-entering a function it is inside: remat's
            # ``transpose(jvp(Net))/jvp(Net)/checkpoint/block_0`` (read as ``Net/Net/block_0``, the blocks'
            # gradients were no block's), also below a module (``…(Net)/enc/jvp(Net)/enc/checkpoint/block1``)
            at = next((p for p in reversed(entered) if p + 1 >= len(names) and tuple(out[p + 1 - len(names):p + 1]) == names), None)
            if at is not None:
                del out[at + 1:]
                entered = [p for p in entered if p <= at]
                continue
            entered.append(len(out) + len(names) - 1)
        out.extend(names)
    return out, phase


#: What JAX writes for the computations of its control flow, after the primitive's own segment:
#: ``while/body``, ``while/cond`` and ``while/body_pred`` (``lax.scan``, ``fori_loop``,
#: ``while_loop``, ``nn.scan``), ``cond/branch_N_fun`` (``lax.cond``, ``lax.switch``).
_JAX_CONTROL_FLOW = {"while": re.compile(r"^(?:body|cond|body_pred)$"), "cond": re.compile(r"^branch_\d+_fun$")}


def _without_control_flow(segments: list[str]) -> list[str]:
    """A JAX name with its loop and branch computations taken out: ``jit(f)/ViT/while/body/
    closed_call/checkpoint/blocks/mlp/fc1/dot_general`` is the op ``dot_general`` of
    ``ViT/blocks/mlp/fc1`` (``nn.scan`` names its blocks inside the loop's body). The body of a
    loop is the loop's scope, as a called function is its caller's: a gelu→relu change of a
    scanned block is a change of ``mlp``, and the ``while`` instruction itself (``jit(f)/ViT/
    while``, the last segment: the op) stays in ``ViT``. Only JAX's names (first segment
    ``jit(…)``) are read so: TensorFlow's ``while``/``cond`` are name scopes the user gave (or
    ``tf.while_loop``/``tf.cond``'s defaults) and stay scopes."""
    if "while" not in segments and "cond" not in segments:
        return segments
    out: list[str] = []
    i, last = 0, len(segments) - 1
    while i <= last:
        seg = segments[i]
        inner = _JAX_CONTROL_FLOW.get(seg)
        if inner is not None and i + 1 < last and inner.match(segments[i + 1]):
            i += 2  # the primitive and its computation's name; what follows is the body's own
            continue
        out.append(seg)
        i += 1
    return out


def keras_layer_name(segment: str, siblings: frozenset[str] | set[str] = frozenset()) -> str:
    """The Keras layer a TF scope segment names: ``block_5_expand_1`` → ``block_5_expand``.

    Keras 3 re-enters a layer's scope on every trace and TensorFlow makes it unique with
    ``_N`` (layers ``dense``, ``dense_1`` become ``dense_1``, ``dense_1_2``). The suffix is taken
    off unless a sibling scope is called the bare name and that name has no suffix of its own
    (TF's ``einsum`` / ``einsum_1`` are two scopes, not one layer entered twice); the op name
    keeps the suffix, and lookups accept either form. A capture's ``layer_scopes`` (the Keras
    layer each scope reads its weights in) overrides this guess.
    """
    m = KERAS_SUFFIX.match(segment)
    if not m:
        return segment
    bare = m.group(1)
    if bare in siblings and not KERAS_SUFFIX.match(bare):
        return segment  # ``einsum`` beside ``einsum_1``: two scopes of TF's, not one layer
    return bare


def segment_matches(segment: str, query: str) -> bool:
    """Does a scope segment answer to ``query``: the same text, or the query plus Keras' ``_N``
    re-entry suffix (``block_5_expand`` finds ``block_5_expand_1``)?"""
    if segment == query:
        return True
    m = KERAS_SUFFIX.match(segment)
    return bool(m) and m.group(1) == query


def common_scope(op_names: Iterable[str]) -> str:
    """The layer a group of ops belongs to (a kernel's), read from their names.

    The longest scope path all of them share (``transformer/block_0/attention``); when they share
    none, their distinct top-level scopes joined by `` + `` (a fusion of a layer's gradient and the
    optimizer's update: ``model + adam``). The phase follows in parentheses unless it is the forward
    pass alone (``model/dense (backward)``, ``model/dense (forward+backward)``). "" when no op name has
    a scope. The terminal's kernel lists show it beside the source line (on a Keras model, one call).
    """
    paths: list[tuple[str, ...]] = []
    phases: set[str] = set()
    for name in op_names:
        p = parse_op_name(name)
        phases.add(p.phase)
        if p.scope:
            paths.append(p.scope)
    if not paths:
        return ""
    common = paths[0]
    for path in paths[1:]:  # the longest start they share
        common = common[:next((n for n, (a, b) in enumerate(zip(common, path)) if a != b), min(len(common), len(path)))]
        if not common:
            break
    if common:
        text = "/".join(common)
    else:
        tops = list(dict.fromkeys(p[0] for p in paths))
        text = " + ".join(tops[:3]) + (f" + {len(tops) - 3} more" if len(tops) > 3 else "")
    if phases and phases != {"forward"}:
        text += " (" + "+".join(p for p in PHASES if p in phases) + ")"
    return text
