"""``hloviz memory``: how much memory the compiled program takes, and where it goes.

XLA's own numbers when the target carries XLA's buffer assignment (a live TensorFlow or JAX
capture, a dump folder with ``*-buffer-assignment.txt``, a saved capture that kept it: ``source``
``"xla"``), else an estimate from the optimized HLO by XLA's rules (``"estimate"``). See
:mod:`hloviz.analysis.memory`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..analysis.memory import MemoryReport
    from ..capture import Capture
    from ..ir import HloModule

__all__ = ["Memory", "memory", "memory_of"]

#: The scope of the instructions that carry no op name (arguments, results, XLA's own).
UNNAMED = "(no op name)"


@dataclass(frozen=True)
class Memory:
    """The memory report of one target (``report``), with the target's ``label``."""

    label: str
    report: MemoryReport
    capture: Capture | None = field(default=None, repr=False, compare=False)

    def to_dict(self) -> dict:
        """``hloviz memory --json``: exactly the keys of :meth:`MemoryReport.to_dict`."""
        return self.report.to_dict()


def memory(target: str | Capture | None = None, *, pre: str | Path | None = None, post: str | Path | None = None,
           args: Sequence[str] = (), device: str | None = None, module: str | None = None,
           verbose: bool = False, notify: Callable[[str], None] | None = None) -> Memory:
    """Capture or read ``target`` (anything :func:`hloviz.capture.load_target` accepts) and
    report its memory (see the module docstring)."""
    from ..capture import Capture, load_target

    cap = target if isinstance(target, Capture) else load_target(
        target, pre=pre, post=post, args=args, device=device, verbose=verbose, module=module, notify=notify)
    return Memory(cap.label, memory_of(cap), cap)


def memory_of(cap: Capture) -> MemoryReport:
    """The memory report of a capture's optimized module (XLA's record when it has one)."""
    from ..analysis.memory import memory_report
    from ..errors import InputError

    post = cap.post_module()
    if post is None:
        raise InputError(f"{cap.label} has no optimized (post-optimization) HLO; memory is decided by XLA's "
                         "buffer assignment, after optimization",
                         hint="give the after_optimizations file, or a model.py:function target")
    scope_of, source_of = _namers(post, cap.info)
    return memory_report(post, cap.xla_memory(), scope_of=scope_of, source_of=source_of)


def _namers(module: HloModule, info: dict):
    """An instruction's scope path (its layer) and its user source line.

    The scope is the op name's path as :mod:`hloviz.analysis.opnames` reads it — the path the
    scope tree files the op under (transformations unwrapped, the backward pass in its layer) —
    read for the few buffers a report names, not a whole scope tree: building one costs several
    times the parse of a large module, and the report names only the buffers at the peak.
    Weights go to the layer their name gives (``model/dense/kernel``); what carries no op name is
    :data:`UNNAMED`.
    """
    from ..analysis.kernels import SYNTHETIC_OP_NAMES
    from ..analysis.opnames import parse_op_name
    from ..analysis.provenance import instruction_user_source, parameter_names
    from ..analysis.scopes import TOP_LEVEL

    params = parameter_names(module, info)
    smap = info.get("source_map") or {}
    # a Keras weight is named by its layer path (``conv1_conv/kernel``); the capture knows the
    # op-name scope each layer ran in (``layer_scopes``: ``resnet50_1/conv1_conv_1``)
    scope_of_layer = {layer: scope for scope, layer in (info.get("layer_scopes") or {}).items()}

    def weight(name: str) -> str:
        layer, _, variable = name.rpartition("/")
        scope = scope_of_layer.get(layer)
        return f"{scope}/{variable}" if scope else name

    shown = _LayerNames(module, info.get("layer_scopes") or {})

    def scope_of(inst) -> str:
        name = params.get(inst) if inst.opcode == "parameter" else None
        op_name = weight(name) if name else inst.metadata.op_name
        if not op_name or op_name in SYNTHETIC_OP_NAMES:
            return UNNAMED
        path = parse_op_name(op_name, inst.metadata.op_type)
        if not path.scope:
            return TOP_LEVEL
        return shown.display(path.scope, path.phase)

    def source_of(inst) -> str:
        where = instruction_user_source(inst, module, smap)  # its own line first (JAX's frames)
        if where is not None:
            return f"{Path(where[0]).name}:{where[1]}"
        if inst.metadata.source_file:
            return f"{Path(inst.metadata.source_file).name}:{inst.metadata.source_line}"
        return ""

    return scope_of, source_of


class _LayerNames:
    """Scope paths by the names ``stats --by scope`` writes (:attr:`hloviz.analysis.scopes.Scope.
    display_path`), worked out from the op names alone, as the scope tree does: a gradient's
    path cut back to the forward scope it differentiates (``gradient_tape/model_1/dense_1/MatMul``
    is ``model_1/dense_1``'s work), each segment labelled by the Keras layer the capture recorded
    (``layer_scopes``) or, for TensorFlow, with Keras' ``_N`` re-entry suffix taken off."""

    def __init__(self, module: HloModule, layer_scopes: dict) -> None:
        from ..analysis.kernels import SYNTHETIC_OP_NAMES
        from ..analysis.opnames import parse_op_name

        self.forward: set[tuple[str, ...]] = set()
        seen: set[str] = set()
        for inst in module.instructions():
            name = inst.metadata.op_name
            if not name or name in seen or name in SYNTHETIC_OP_NAMES:
                continue
            seen.add(name)
            path = parse_op_name(name, inst.metadata.op_type)
            if path.phase != "backward":
                for k in range(1, len(path.scope) + 1):
                    self.forward.add(path.scope[:k])
        self.siblings: dict[tuple[str, ...], set[str]] = {}
        for parts in self.forward:
            self.siblings.setdefault(parts[:-1], set()).add(parts[-1])
        self.labels = {tuple(str(k).split("/")): str(v).rsplit("/", 1)[-1] for k, v in layer_scopes.items()}
        self.keras = not any(p[0].startswith(("jit(", "pjit(")) for p in self.forward if p)
        self.memo: dict[tuple[tuple[str, ...], str], str] = {}

    def display(self, scope: tuple[str, ...], phase: str) -> str:
        key = (scope, phase)
        hit = self.memo.get(key)
        if hit is not None:
            return hit
        from ..analysis.opnames import keras_layer_name

        parts = scope
        if phase == "backward" and self.forward:
            while parts and parts not in self.forward:
                parts = parts[:-1]
            parts = parts or scope
        out = []
        for k, seg in enumerate(parts):
            label = self.labels.get(parts[:k + 1])
            if label is None:
                label = keras_layer_name(seg, self.siblings.get(parts[:k], set())) if self.keras else seg
            out.append(label)
        if not self.keras and out and out[0].startswith(("jit(", "pjit(")) and out[0].endswith(")"):
            # JAX's traced function is no layer: its layers by their own paths (``ViT/blocks``),
            # its own ops by its name (``train_step``), as ``stats --by scope`` writes them
            out = out[1:] or [out[0][out[0].index("(") + 1:-1]]
        hit = self.memo[key] = "/".join(out)
        return hit

