"""The pass history in ``hloviz show``'s report (part of :mod:`hloviz.api`).

``show`` puts XLA's pass history into report.html when its target holds the per-pass snapshots
(a dump folder written with ``--xla_dump_hlo_pass_re=.*``, or a tar of one), and with
``--passes`` for a live ``model.py:function``: captured as ``hloviz passes`` captures it, with
per-pass dumps in a child process into a private temporary folder that is removed before the
report is drawn. The history is read by :func:`hloviz.api.passes.read_pass_history`, the
function behind ``hloviz passes``, so the report's credits are those of ``passes --json``.

The snapshots worth a picture (:func:`hloviz.render.page.explorer.steps.steps_to_draw`) are parsed
while the folder exists and kept as modules, no more instructions in all than the explorer's
:attr:`~hloviz.render.page.explorer.Bounds.max_walk`; the folder itself never outlives this step.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import HloParseError, HlovizError, InputError

if TYPE_CHECKING:
    from ..analysis.passes import PassHistory
    from ..capture import Capture
    from ..ir import HloModule
    from ..render.page.html import ReportContent

__all__ = ["ShowPasses", "capture_for_show", "capture_with_passes", "passes_told", "report_section", "report_steps",
           "summary_line"]

#: Pictures of steps a report holds at most (the biggest changes; ``hloviz passes -o`` has ``--pictures``).
REPORT_PICTURES = 12


@dataclass
class ShowPasses:
    """A pass history for the report, with the snapshots to draw already parsed."""

    history: PassHistory
    source: str
    module_label: str
    #: Snapshot index → its module and text (only the steps the report draws).
    snapshots: dict[int, tuple[HloModule, str]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    def load(self, index: int) -> tuple[HloModule, str | None] | None:
        return self.snapshots.get(index)



def _is_live(target: Any) -> bool:
    if not isinstance(target, (str, Path)):
        return False
    path = Path(target)
    return not os.path.lexists(path) or (os.path.isfile(path) and path.suffix == ".py")


def capture_with_passes(target: Any, *, passes: bool, pre: Any, post: Any, args: Sequence[str],
                        device: str | None, module: str | None, verbose: bool,
                        notify: Callable[[str], None] | None, max_walk: int = 400_000,
                        pictures: int = REPORT_PICTURES) -> tuple[Capture, ShowPasses] | None:
    """The capture and its pass history when ``target`` holds per-pass snapshots or ``passes``
    asks for them (see the module docstring); None when neither (``show`` then captures as
    always)."""
    from ..capture.dumps.pass_dump import extracted_archive, has_pass_snapshots, is_archive, pass_dump_capture

    if pre is not None or post is not None:
        if passes:
            raise InputError("--passes reads XLA's per-pass snapshots; --pre/--post files have only two stages",
                             hint="give show the model.py:function, or a folder dumped with "
                                  "XLA_FLAGS=\"--xla_dump_to=DIR --xla_dump_hlo_pass_re=.*\"")
        return None
    if not isinstance(target, (str, Path)) or not str(target):
        if passes:
            raise InputError("--passes needs a model.py:function or a dump folder with per-pass snapshots")
        return None
    text, path = str(target), Path(target)
    if os.path.isdir(path):  # os.path: a name too long to look up is no folder (no OSError)
        if not has_pass_snapshots(path):
            if passes:
                raise InputError(f"{text} holds no per-pass snapshots (module_*.NNNN.PIPELINE.after_PASS.before_NEXT.txt)",
                                 hint="give show --passes the model.py:function, or dump with XLA_FLAGS=\""
                                      "--xla_dump_to=DIR --xla_dump_hlo_pass_re=.*\"")
            return None
        return _from_folder(path, text, module=module, args=args, device=device, notify=notify,
                            max_walk=max_walk, pictures=pictures)
    if is_archive(path):
        with extracted_archive(path) as folder:
            if not has_pass_snapshots(folder):
                raise InputError(f"{text} holds no per-pass snapshots (module_*.NNNN.PIPELINE.after_PASS.before_NEXT.txt)",
                                 hint="show reads a tar archive only as a dump folder written with "
                                      "XLA_FLAGS=\"--xla_dump_to=DIR --xla_dump_hlo_pass_re=.*\"; unpack other "
                                      "archives yourself")
            return _from_folder(folder, text, module=module, args=args, device=device, notify=notify,
                                max_walk=max_walk, pictures=pictures, archive=path)
    if not passes:
        return None
    if not _is_live(target):
        raise InputError(f"{text} is one HLO file; --passes needs XLA's per-pass snapshots",
                         hint="give show --passes the model.py:function, or a folder dumped with "
                              "XLA_FLAGS=\"--xla_dump_to=DIR --xla_dump_hlo_pass_re=.*\"")
    if module is not None:
        raise InputError("--module picks a module of a dump folder; this target is a model.py:function")
    with pass_dump_capture(text, args=args, device=device, verbose=verbose, notify=notify) as (cap, folder):
        post_m = cap.post_module()
        shown = _history(folder, text, module=None, prefer=post_m.name if post_m is not None else None,
                         info=cap.info, notify=notify, max_walk=max_walk, pictures=pictures)
    return cap, shown


def capture_for_show(target: Any, *, passes: bool, otherwise: Callable[[], Capture], **options
                     ) -> tuple[Capture, ShowPasses | None]:
    """:func:`capture_with_passes`, or ``otherwise()`` (the capture ``show`` makes without a
    history) with no history."""
    found = capture_with_passes(target, passes=passes, **options)
    return found if found is not None else (otherwise(), None)


def passes_told(shown: ShowPasses | None, lines: list[str], notes: list[str]) -> PassHistory | None:
    """Add what ``show`` says of the history to its summary ``lines`` and ``notes``; the history."""
    if shown is None:
        return None
    lines.append(summary_line(shown))
    notes += shown.problems
    return shown.history


def _from_folder(folder: Path, source: str, *, module: str | None, args: Sequence[str], device: str | None,
                 notify: Callable[[str], None] | None, max_walk: int, pictures: int,
                 archive: Path | None = None) -> tuple[Capture, ShowPasses]:
    from ..capture import load_target

    cap = load_target(str(folder), module=module, args=args, device=device, notify=notify)
    if archive is not None:  # the unpacked folder is gone after this step: name the archive instead
        info = dict(cap.info)
        for key in ("dump_folder", "pre_file", "post_file"):
            if info.get(key):
                info[key] = f"{archive}:{Path(str(info[key])).name}" if key != "dump_folder" else str(archive)
        cap = replace(cap, info=info, pre_filename=info.get("pre_file"), post_filename=info.get("post_file"))
        try:  # XLA's buffer assignment is read from the dump's files: now, while they exist (it is kept)
            cap.xla_memory()
        except HlovizError as err:
            if notify is not None:
                notify(f"XLA's buffer assignment in {archive} cannot be read ({str(err).splitlines()[0]}); "
                       "the memory section estimates")
            cap = replace(cap, memory=None)
    post_m = cap.post_module()
    prefer = post_m.name if post_m is not None else None
    shown = _history(folder, source, module=module, prefer=prefer, info=cap.info, notify=notify, max_walk=max_walk,
                     pictures=pictures)
    return cap, shown


def _history(folder: Path, source: str, *, module: str | None, prefer: str | None, info: dict,
             notify: Callable[[str], None] | None, max_walk: int, pictures: int) -> ShowPasses:
    """Read the history (as ``hloviz passes`` does) and parse the snapshots the report draws."""
    from ..capture.dumps.pass_dump import pick_pass_module
    from ..capture.saved import read_text
    from ..parser import parse
    from ..render.page.explorer.steps import steps_to_draw
    from .passes import read_pass_history

    result = read_pass_history(folder, module=module, prefer=prefer, info=info, source=source, notify=notify)
    files = {step.index: path for step, path in pick_pass_module(folder, module, prefer=prefer).snapshots
             if path is not None}
    shown = ShowPasses(result.history, source, result.module_label)
    walked = 0
    for s in steps_to_draw(result.history, pictures):
        path = files.get(s.step.index)
        n = s.instructions or 0
        if path is None or walked + n > max_walk:
            continue
        try:
            text = read_text(path)
            shown.snapshots[s.step.index] = (parse(text, filename=str(path)), text)
        except (HloParseError, HlovizError) as err:
            shown.problems.append(f"snapshot {s.step.index} not drawn: {str(err).splitlines()[0]}")
            continue
        walked += n
    return shown


def report_steps(shown: ShowPasses, *, final_side: str, seconds: float, timeout: float):
    """The explorer's part of the history (:func:`hloviz.render.page.explorer.steps.pass_steps`),
    drawn within ``seconds`` of the command's Graphviz budget."""
    from ..render.page.explorer import Bounds
    from ..render.page.explorer.steps import pass_steps

    bounds = Bounds(timeout=max(0.05, min(timeout, Bounds.timeout)), seconds=max(0.0, min(seconds, Bounds.seconds)))
    return pass_steps(shown.history, shown.load, final_side=final_side, bounds=bounds,
                      pictures=REPORT_PICTURES, source=shown.source)


def report_section(shown: ShowPasses | None, content: ReportContent, *, left: float, timeout: float, explorer: bool,
                   say: Callable[[str], None] = lambda _m: None):
    """Draw the history's steps and put the report's "XLA's passes" section in ``content``; the
    steps (:class:`~hloviz.render.page.explorer.steps.PassSteps`) go on to the explorer (None without
    a history). The steps get half of what the main pictures ``left`` of the command's
    ``--timeout`` (none without the explorer, whose picture would show them); the explorer's own
    pictures get the rest."""
    from ..render.page.pass_section import pass_section_html

    if shown is None:
        return None
    say("drawing the pass history")

    steps = report_steps(shown, final_side="post", seconds=left / 2 if explorer else 0.0, timeout=timeout)
    content.passes_html = pass_section_html(steps.data, explorer=explorer)
    return steps


def summary_line(shown: ShowPasses) -> str:
    """What ``show`` prints of the history: its size and how many fusions and folds it credits."""
    h = shown.history
    credited = sum(f.step is not None for f in h.fusions)
    folds = sum(f.step is not None for f in h.folded)
    line = (f"pass history: {len(h.steps)} snapshots, {len(h.changed_steps)} changed the module; "
            f"{credited} of {len(h.fusions)} fusions and {folds} of {len(h.folded)} folded constants credited to a pass")
    return line + (f" ({len(h.problems)} problem(s): see the report)" if h.problems else "")
