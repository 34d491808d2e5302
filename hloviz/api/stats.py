"""``hloviz stats`` and ``hloviz dump``: the facts of a target, and saving a capture."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Sequence

from ..ir import ModuleSummary, summarize

if TYPE_CHECKING:
    from ..analysis import Analysis
    from ..capture import Capture


@dataclass(frozen=True)
class Stats:
    """What ``hloviz stats`` reports for one target: the :class:`~hloviz.analysis.Analysis`,
    where it came from (``label``, the capture's ``info``) and notes for the reader."""

    label: str
    info: dict
    analysis: "Analysis"
    notes: tuple[str, ...] = ()
    #: The :class:`hloviz.capture.Capture` analysed (its parsed modules: ``pre_module()``…).
    capture: object = field(default=None, repr=False, compare=False)

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
        modules = {"pre": cap.pre_module(), "post": cap.post_module()}  # type: ignore[attr-defined]
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
        return {**head, **to_dict(self.analysis, self.source if self.info.get("source_map") else None), **tail}


def stats(target: "str | Capture | None" = None, *, pre: str | Path | None = None, post: str | Path | None = None,
          args: Sequence[str] = (), device: str | None = None, module: str | None = None,
          verbose: bool = False, notify: Callable[[str], None] | None = None) -> Stats:
    """Capture or read ``target`` (anything :func:`hloviz.capture.load_target` accepts, or a
    :class:`~hloviz.capture.Capture` it returned, e.g. under ``tf="2.17"``) and analyze it:
    counts, kernels, folded constants, pre→post mapping and the verdict."""
    from ..analysis import analyze
    from ..capture import Capture, load_target

    cap = target if isinstance(target, Capture) else load_target(
        target, pre=pre, post=post, args=args, device=device, verbose=verbose, module=module, notify=notify)
    analysis = analyze(cap.pre_module(), cap.post_module(), info=cap.info)
    info = cap.info
    if not info.get("source_map"):  # HLO files and dumps: newer XLA prints stack-frame tables
        from ..capture.jax import source_map_from_text

        smap = {}
        for text in (cap.post_text, cap.pre_text):
            if text and "StackFrames" in text:
                smap = {**source_map_from_text(text), **smap}
        if smap:
            info = {**info, "source_map": smap}
    return Stats(cap.label, info, analysis, _stats_notes(info), cap)


def _stats_notes(info: dict) -> tuple[str, ...]:
    """What the numbers mean when the function as written does not use XLA."""
    if info.get("jit_compile") is not False:
        return ()
    from ..analysis.mapping import NO_WORK_TYPES

    ops = [t for t in (info.get("tf_ops") or {}).values() if t not in NO_WORK_TYPES]
    listed = f" ({', '.join(ops)})" if ops and len(ops) <= 8 else ""
    return (f"as written (no jit_compile=True) TensorFlow runs this graph's {len(ops)} ops that do work{listed} "
            f"one TensorFlow kernel each, without XLA; the kernels below are what XLA makes of it with "
            f"jit_compile=True",)


def dump(target: "str | Capture | None", out_dir: str | Path, *, pre: str | Path | None = None,
         post: str | Path | None = None, args: Sequence[str] = (), device: str | None = None,
         module: str | None = None, verbose: bool = False,
         notify: Callable[[str], None] | None = None) -> Path:
    """Capture or read ``target`` and save it as a capture folder (``pre.hlo``, ``post.hlo``,
    ``capture.json``), atomically: an interruption leaves no half-written folder."""
    from ..capture import Capture, load_target, save_capture

    cap = target if isinstance(target, Capture) else load_target(
        target, pre=pre, post=post, args=args, device=device, verbose=verbose, module=module, notify=notify)
    return save_capture(cap, out_dir)
