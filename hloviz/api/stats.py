"""``hloviz stats`` and ``hloviz dump``: the facts of a target, and saving a capture."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from ..ir import ModuleSummary, summarize

if TYPE_CHECKING:
    from ..analysis import Analysis
    from ..analysis.memory import MemoryReport
    from ..analysis.scopes import ScopeTree
    from ..analysis.scopes.stats import ScopeRow
    from ..capture import Capture

#: What ``stats --by`` can group by.
GROUPINGS = ("kernel", "scope")


@dataclass(frozen=True)
class Stats:
    """What ``hloviz stats`` reports for one target: the :class:`~hloviz.analysis.Analysis`,
    where it came from (``label``, the capture's ``info``) and notes for the reader."""

    label: str
    info: dict
    analysis: Analysis
    notes: tuple[str, ...] = ()
    #: The :class:`hloviz.capture.Capture` analysed (its parsed modules: ``pre_module()``…).
    capture: Capture | None = field(default=None, repr=False, compare=False)
    #: ``--by scope``: one row per scope of the model (None unless asked for).
    scopes: tuple[ScopeRow, ...] | None = None
    #: The scope trees of the pre- and post-optimization modules, when ``scopes`` was asked for.
    trees: tuple[ScopeTree | None, ScopeTree | None] | None = field(default=None, repr=False, compare=False)
    #: The optimized module's memory (:func:`hloviz.api.memory.memory_of`); None without one.
    memory: MemoryReport | None = field(default=None, repr=False, compare=False)

    def source(self, op_name: str) -> dict | None:
        """The user's ``{"file", "line"}`` for an op name, from the capture's source map."""
        from ..capture import source_for

        return source_for(op_name, self.info.get("source_map") or {})

    @property
    def summaries(self) -> dict[str, ModuleSummary]:
        """Opcode counts and fusions by kind of each module there is (``"pre"``, ``"post"``)."""
        cap = self.capture
        if cap is None:
            return {}
        pre, post = cap.modules()  # type: ignore[attr-defined]
        modules = {"pre": pre, "post": post}
        return {side: summarize(m) for side, m in modules.items() if m is not None}

    def to_dict(self) -> dict:
        """JSON-ready data: :func:`hloviz.analysis.export.to_dict` plus where it came from, and
        each module's opcode counts and fusions by kind."""
        from ..analysis.export import to_dict

        head = {"target": self.label, "source": self.info.get("source"),
                "framework": self.info.get("framework"), "device": self.info.get("device"),
                "notes": list(self.notes)}
        sums = self.summaries
        tail = {"opcodes": {side: s.opcodes for side, s in sums.items()},
                "fusions_by_kind": {side: s.fusions_by_kind for side, s in sums.items()}}
        out = {**head, **to_dict(self.analysis, self.source if self.info.get("source_map") else None), **tail}
        out["memory"] = self.memory.to_dict() if self.memory is not None else None
        params = self.parameters()
        if params:
            out["parameters"] = params
        if self.scopes is not None:
            out["scopes"] = [r.to_dict() for r in self.scopes]
        tree = self.post_tree
        if tree is not None:  # each kernel's layers, by the one rule every view follows
            from ..analysis.scopes.stats import user_path

            layer_of = self.kernel_layers()  # every kernel's at once: once, not once per kernel
            for k in out["kernels"]:
                k["scopes"] = list(dict.fromkeys(user_path(s, s.path) for s in tree.scopes_of_kernel(k["name"])))
                k["layer"] = layer_of.get(k["name"], "")
        self._name_layers(out.get("mapping"))
        runs = self.loop_runs
        for k in out["kernels"]:  # a loop body's kernel is listed once and runs this many times
            k["in_loop"] = k["computation"] in runs
            k["loop_runs"] = runs.get(k["computation"])
        return out

    def _name_layers(self, mapping: dict | None) -> None:
        """Each op of ``mapping`` gets its ``layer``: the scope the pre-optimization tree files it
        under, written as ``--by scope``'s rows write their ``scope`` (JAX: ``ViT/blocks/mlp``,
        never ``jit(…)``; TensorFlow: the op names' path, which the row's ``label`` names), so
        the two join. The key stays the op's name as the HLO writes it
        (``jit(f)/transpose(jvp(ViT))/head/dot_general``)."""
        from ..analysis.scopes import TOP_LEVEL
        from ..analysis.scopes.stats import user_path

        tree = self.pre_tree if mapping else None
        if tree is None or not mapping:
            return
        for name, entry in mapping.items():
            s = tree.scope_of_op(name, entry.get("type") or "")
            entry["layer"] = user_path(s, s.path) or TOP_LEVEL

    @cached_property
    def pre_tree(self) -> ScopeTree | None:
        """The pre-optimization module's scope tree (built on first use when ``--by scope`` did not)."""
        if self.trees is not None and self.trees[0] is not None:
            return self.trees[0]
        cap = self.capture
        pre = cap.pre_module() if cap is not None else None  # type: ignore[attr-defined]
        if pre is None:
            return None
        from ..analysis.scopes import build_scope_tree

        # read per op (:meth:`_name_layers`), never in the tree's order: left as filed
        return build_scope_tree(pre, stage="pre", layers=self.info.get("layer_scopes") or None, ordered=False)

    @cached_property
    def post_tree(self) -> ScopeTree | None:
        """The optimized module's scope tree (built on first use when ``--by scope`` did not)."""
        if self.trees is not None and self.trees[1] is not None:
            return self.trees[1]
        cap = self.capture
        post = cap.post_module() if cap is not None else None  # type: ignore[attr-defined]
        if post is None or self.analysis.kernels is None:
            return None
        from ..analysis.scopes import build_scope_tree

        # the layer column and the JSON's scopes are read per kernel, never in the tree's order:
        # the tree is left as filed (a DenseNet121 step's 106k-instruction module: 0.2 s less)
        return build_scope_tree(post, stage="post", kernel_report=self.analysis.kernels,
                                layers=self.info.get("layer_scopes") or None, ordered=False)

    @cached_property
    def loop_runs(self) -> dict[str, int | None]:
        """Computation name → how many times it runs, for those inside loops of the optimized
        module (:func:`hloviz.analysis.loops.loop_runs`: XLA's known trip counts); empty
        without an optimized module or without loops."""
        cap = self.capture
        post = cap.post_module() if cap is not None else None  # type: ignore[attr-defined]
        if post is None:
            return {}
        from ..analysis.loops import loop_runs

        return loop_runs(post)

    def kernel_layers(self) -> dict[str, str]:
        """Kernel name → its layer as a table cell (:func:`hloviz.render.page.report.kernel_layer_texts`,
        the one rule every view follows); empty without an optimized module."""
        tree = self.post_tree
        if tree is None:
            return {}
        from ..render.page.report import kernel_layer_texts

        return kernel_layer_texts(tree)

    def parameters(self) -> list[dict]:
        """The entry parameters the capture or the HLO names: ``number``, ``instruction``,
        ``name`` (the argument or variable), ``shape`` — of the optimized module if there is one."""
        from ..analysis.provenance import parameter_names

        cap = self.capture
        if cap is None:
            return []
        module = cap.post_module() or cap.pre_module()  # type: ignore[attr-defined]
        names = parameter_names(module, self.info) if module is not None else {}
        return [{"number": p.parameter_number, "instruction": p.name, "name": n,
                 "shape": p.shape.to_text(layout=False)} for p, n in names.items()]


def stats(target: str | Capture | None = None, *, pre: str | Path | None = None, post: str | Path | None = None,
          args: Sequence[str] = (), device: str | None = None, module: str | None = None,
          verbose: bool = False, notify: Callable[[str], None] | None = None,
          by: str = "kernel", depth: int | None = None) -> Stats:
    """Capture or read ``target`` (anything :func:`hloviz.capture.load_target` accepts, or a
    :class:`~hloviz.capture.Capture` it returned, e.g. under ``tf="2.17"``) and analyze it:
    counts, kernels, folded constants, pre→post mapping and the verdict.

    ``by="scope"`` adds a row per scope of the model (layers, name scopes), down to ``depth``
    (every level when None) counted from the model's own scopes — below JAX's ``jit(f)``
    (:attr:`hloviz.analysis.scopes.ScopeTree.model_depth`): :func:`hloviz.analysis.scopes.stats.scope_rows`.
    """
    from ..analysis import analyze
    from ..capture import Capture, load_target
    from ..errors import InputError

    if by not in GROUPINGS:
        raise InputError(f"--by {by!r}: expected one of {', '.join(GROUPINGS)}")
    if depth is not None and depth < 0:
        raise InputError(f"--depth {depth}: expected 0 or more (0 is the whole module, 1 its top-level scopes)")

    cap = target if isinstance(target, Capture) else load_target(
        target, pre=pre, post=post, args=args, device=device, verbose=verbose, module=module, notify=notify)
    analysis = analyze(*cap.modules(), info=cap.info)
    info = cap.info
    if not info.get("source_map"):  # HLO files and dumps: newer XLA prints stack-frame tables
        from ..capture.jax import source_map_from_text

        smap = {}
        for text in (cap.post_text, cap.pre_text):
            if text and "StackFrames" in text:
                smap = {**source_map_from_text(text), **smap}
        if smap:
            info = {**info, "source_map": smap}
    scopes = trees = None
    if by == "scope":
        trees = scope_trees(cap, info, analysis)
        from ..analysis.scopes.stats import scope_rows

        model = next((t.model_depth for t in trees if t is not None), 0)  # JAX's jit(f) is not a layer
        scopes = tuple(scope_rows(*trees, analysis.mapping, depth=None if depth is None else depth + model))
    memory, memory_note = _memory(cap)
    notes = _stats_notes(info) + ((memory_note,) if memory_note else ())
    return Stats(cap.label, info, analysis, notes, cap, scopes, trees, memory)


def _memory(cap):
    """The memory report of the optimized module, or why there is none (a note; stats stands)."""
    if not cap.has("post"):
        return None, None
    from ..errors import HlovizError
    from .memory import memory_of

    try:
        return memory_of(cap), None
    except HlovizError as err:
        return None, f"no memory report: {err.args[0] if err.args else err}"


def scope_trees(cap, info: dict, analysis: Analysis | None = None) -> tuple[ScopeTree | None, ScopeTree | None]:
    """The scope trees of a capture's pre- and post-optimization modules (either may be None),
    parameters placed by name, the post tree ordered like the pre tree, and ``updates`` (which
    layer each optimizer op updates) read from the pre tree."""
    from ..analysis.provenance import parameter_names
    from ..analysis.scopes import build_scope_tree

    pre_m, post_m = cap.modules()
    layers = info.get("layer_scopes") or None
    pre_t = build_scope_tree(pre_m, stage="pre", parameter_names=parameter_names(pre_m, info),
                             layers=layers) if pre_m is not None else None
    post_t = build_scope_tree(post_m, stage="post", parameter_names=parameter_names(post_m, info),
                              kernel_report=analysis.kernels if analysis is not None else None,
                              order_like=pre_t, layers=layers) if post_m is not None else None
    if pre_t is not None:
        from ..analysis.updates import optimizer_targets

        pre_t.updates = optimizer_targets(pre_t)
        if post_t is not None:
            post_t.updates = pre_t.updates
    return pre_t, post_t


#: What an op is when no framework graph names the ops (JAX, HLO files): the verdict's first count.
JAX_OPS_NOTE = ("an op here is one op_name, JAX's name stack for a primitive (jit(f)/dot_general): the same "
                "primitive written on two lines of one scope is one op, so count the kernels below, not the ops, "
                "to see what runs")


def _stats_notes(info: dict) -> tuple[str, ...]:
    """What the numbers mean where a user could misread them: a function as written without XLA,
    and a JAX function's ops (op names, not the lines of its code)."""
    if info.get("framework") == "jax":
        return (JAX_OPS_NOTE,)
    if info.get("jit_compile") is not False:
        return ()
    from ..analysis.pre_post.mapping import NO_WORK_TYPES

    ops = [t for t in (info.get("tf_ops") or {}).values() if t not in NO_WORK_TYPES]
    listed = f" ({', '.join(ops)})" if ops and len(ops) <= 8 else ""
    return ((f"as written (no jit_compile=True) TensorFlow runs this graph's {len(ops)} ops that do work{listed} "
             f"one TensorFlow kernel each, without XLA; the kernels below are what XLA makes of it with "
             f"jit_compile=True"),)


def dump(target: str | Capture | None, out_dir: str | Path, *, pre: str | Path | None = None,
         post: str | Path | None = None, args: Sequence[str] = (), device: str | None = None,
         module: str | None = None, verbose: bool = False,
         notify: Callable[[str], None] | None = None) -> Path:
    """Capture or read ``target`` and save it as a capture folder (``pre.hlo``, ``post.hlo``,
    ``capture.json``), atomically: an interruption leaves no half-written folder."""
    from ..capture import Capture, load_target, save_capture

    cap = target if isinstance(target, Capture) else load_target(
        target, pre=pre, post=post, args=args, device=device, verbose=verbose, module=module, notify=notify)
    return save_capture(cap, out_dir)
