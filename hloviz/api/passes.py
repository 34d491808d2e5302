"""The composition behind ``hloviz passes``: XLA's pass history of one function (part of :mod:`hloviz.api`).

A live target (``model.py:fn``) is captured in a child process with XLA's per-pass dumps into a
private temporary folder, read, and the folder removed; a dump folder that already holds the
snapshots (``XLA_FLAGS="--xla_dump_to=DIR --xla_dump_hlo_pass_re=.*"``) is read as it is. Each
distinct snapshot is parsed once and compared with the one before
(:mod:`hloviz.analysis.passes`); a snapshot identical to its neighbour is not parsed again.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..analysis.passes import HistoryBuilder, PassHistory, PassStep
from ..analysis.passes.facts import ModuleFacts, module_facts
from ..analysis.passes.focus import JourneyStop, JourneyTracker, focus_matcher
from ..capture.dumps.pass_dump import (
    PassDumpModule,
    extracted_archive,
    has_pass_snapshots,
    is_archive,
    pass_dump_capture,
    pick_pass_module,
)
from ..errors import HloParseError, HlovizError, InputError, file_in_the_way, why_unwritable
from ..ir import HloModule
from .sides import DiffSide

__all__ = ["FilmOptions", "PassesResult", "passes", "read_pass_history", "step_sides"]


@dataclass(frozen=True)
class PassesResult:
    """A pass history, what it was read from, and (with ``focus``) one op's journey."""

    history: PassHistory
    source: str
    module_label: str
    focus: str | None = None
    journey: tuple[JourneyStop, ...] = ()
    #: Where the snapshots were kept (``save``), for ``hloviz diff DIR@STEP``.
    saved_to: str | None = None

    def to_dict(self) -> dict[str, Any]:
        from ..analysis.passes.report import history_json

        data = history_json(self.history, self.journey if self.focus else None)
        data.update({"source": self.source, "dump_module": self.module_label, "focus": self.focus,
                     "saved_to": self.saved_to})
        return data

    def to_text(self, *, all_steps: bool = False, limit: int = 20) -> str:
        from ..analysis.passes.report import history_text, journey_text

        if self.focus:
            return journey_text(self.history, self.focus, self.journey)
        return history_text(self.history, all_steps=all_steps, limit=limit)


def _parse_with_text(path: Path) -> tuple[HloModule, str]:
    from ..capture.saved import read_text
    from ..parser import parse

    text = read_text(path)
    return parse(text, filename=str(path)), text


def _parse(path: Path, what: str) -> HloModule:
    return _parse_with_text(path)[0]


def read_pass_history(folder: str | Path, *, module: str | None = None, prefer: str | None = None,
                      info: dict | None = None, focus: str | None = None, source: str | None = None,
                      notify: Callable[[str], None] | None = None, film: FilmOptions | None = None) -> PassesResult:
    """The pass history of a dump folder's module (``module`` picks one, as ``--module``);
    ``film`` also writes its filmstrip page (:mod:`hloviz.api.pass_film`)."""
    from ..analysis.pre_post.folding import constant_folding
    folder = Path(folder)
    dump = pick_pass_module(folder, module, prefer=prefer)
    pre, pre_text = _parse_with_text(dump.before) if dump.before else (None, None)
    post, post_text = _parse_with_text(dump.after) if dump.after else (None, None)
    start = module_facts(pre, pre_text) if pre is not None else None
    final = module_facts(post, post_text) if post is not None else None
    builder = HistoryBuilder(dump.name, start)
    for p in dump.problems:
        builder.problem(p)
    tracker = None
    if focus:
        ops, insts = focus_matcher(focus, [f for f in (start, final) if f is not None])
        tracker = JourneyTracker(ops, insts)
        if start is not None:
            tracker.see(None, start)
    last = _walk(dump.snapshots, dump.broken, builder, tracker)
    if final is None and last is not None:
        builder.problem("the fusions credited are the last snapshot's (no optimized module to read)")
        final = last
    folding = constant_folding(pre, post, info) if pre is not None and post is not None else None
    history = builder.finish(final, folding)
    if tracker is not None and final is not None:
        tracker.see(None, final, final=True)
    if film is not None:
        _write_film(film, history, dump, source or str(folder))
    if notify is not None and history.problems:
        notify(f"the snapshots of {dump.label} are incomplete: {len(history.problems)} problem(s), listed in the report")
    return PassesResult(history, source or str(folder), dump.label, focus,
                        tuple(tracker.stops) if tracker is not None else ())


@dataclass(frozen=True)
class FilmOptions:
    """Where to write the filmstrip page, and its bounds (``-o``, ``--pictures``, ``--budget``, ``--timeout``)."""

    output: Path
    pictures: int = 12
    budget: int = 120
    timeout: float = 60.0


def _write_film(film: FilmOptions, history: PassHistory, dump: PassDumpModule, source: str) -> None:
    from ..render.page.files import write_atomic
    from .pass_film import filmstrip_html

    files = {step.index: path for step, path in dump.snapshots if path is not None}
    page = filmstrip_html(history, files, dump.after, title=f"XLA's passes on {history.module} ({source})",
                          pictures=film.pictures, budget=film.budget, timeout=film.timeout)
    write_atomic(film.output, page)


def _walk(snapshots: Sequence[tuple[PassStep, Path | None]], broken: dict[int, str], builder: HistoryBuilder,
          tracker: JourneyTracker | None) -> ModuleFacts | None:
    """Feed every snapshot to ``builder`` (and ``tracker``), parsing each distinct text once."""
    from ..capture.saved import read_text
    from ..parser import parse

    prev_text: str | None = None
    facts: ModuleFacts | None = None
    for step, path in snapshots:
        if path is None:
            builder.add(step, None, broken.get(step.index, "no file"))
            prev_text = None
            if tracker is not None:
                tracker.lost()
            continue
        try:
            text = read_text(path)
            if text != prev_text or facts is None:
                facts = module_facts(parse(text, filename=str(path)), text)
        except HloParseError as err:
            builder.add(step, None, f"{err.reason} (line {err.line}: truncated or edited?)")
            prev_text, facts = None, None
            if tracker is not None:
                tracker.lost()
            continue
        except HlovizError as err:  # named by its file name: the folder may be an archive's, gone after this
            builder.add(step, None, str(err).splitlines()[0].replace(str(path), path.name))
            prev_text, facts = None, None
            continue
        builder.add(step, facts)
        if tracker is not None:
            tracker.see(step, facts)
        prev_text = text
    return facts


def _is_live(target: str) -> bool:
    path = Path(target)
    return not os.path.lexists(path) or (os.path.isfile(path) and path.suffix == ".py")


def passes(target: str, *, args: Sequence[str] = (), device: str | None = None, verbose: bool = False,
           module: str | None = None, focus: str | None = None, save: str | Path | None = None,
           notify: Callable[[str], None] | None = None, tf: str | None = None, jax: str | None = None,
           film: FilmOptions | None = None) -> PassesResult:
    """The pass history of ``target``: a ``model.py:fn`` (captured with per-pass dumps in a child
    process; ``save`` keeps the snapshots in that folder) or a dump folder holding them."""
    path = Path(target)
    if (tf is not None or jax is not None) and not _is_live(target):
        raise InputError(f"--tf/--jax capture a model.py:function; {target} is already captured")
    if save is not None and not _is_live(target):
        raise InputError(f"--save keeps the snapshots of a live capture; {target} already holds them")
    if os.path.isdir(path):  # os.path: a name too long to look up is no folder (no OSError)
        if args or device:
            raise InputError("--arg and --device apply to model.py:function targets, not to a dump folder")
        if not has_pass_snapshots(path):
            raise InputError(f"{target} holds no per-pass snapshots (module_*.NNNN.PIPELINE.after_PASS.before_NEXT.txt)",
                             hint="a saved capture or a plain dump has only the first and last module; give hloviz "
                                  "passes the model.py:function, or dump with XLA_FLAGS=\"--xla_dump_to=DIR "
                                  "--xla_dump_hlo_pass_re=.*\"")
        return read_pass_history(path, module=module, focus=focus, notify=notify, film=film)
    if is_archive(path):
        with extracted_archive(path) as folder:
            result = read_pass_history(folder, module=module, focus=focus, source=target, notify=notify, film=film)
        return result
    if not _is_live(target):
        raise InputError(f"{target} is one HLO file; a pass history needs XLA's per-pass snapshots",
                         hint="give hloviz passes the model.py:function, or a folder dumped with "
                              "XLA_FLAGS=\"--xla_dump_to=DIR --xla_dump_hlo_pass_re=.*\"")
    if save is not None:
        _check_save(Path(save))
    with pass_dump_capture(target, args=args, device=device, verbose=verbose, notify=notify, tf=tf,
                           jax=jax) as (cap, folder):
        post = cap.post_module()
        prefer = post.name if post is not None else None
        result = read_pass_history(folder, module=module, prefer=prefer, info=cap.info, focus=focus,
                                   source=target, notify=notify, film=film)
        if save is not None:
            _save(folder, Path(save), result.module_label)
            return PassesResult(result.history, result.source, result.module_label, result.focus, result.journey,
                                str(save))
    return result


def _check_save(out: Path) -> None:
    """``--save`` names a new folder or an empty one (checked before the capture): anything else
    there — a file, a FIFO, a device, a folder with files — is the user's and is refused."""
    import stat

    try:
        mode = out.lstat().st_mode
    except FileNotFoundError:
        mode = None
    except OSError as err:  # a name too long, a file where a parent folder should be, no permission
        raise InputError(f"--save {out}: {why_unwritable(out, err)}", hint="name a new folder") from None
    if mode is None:
        if (blocker := file_in_the_way(out)) is not None:
            raise InputError(f"--save {out}: {blocker} is a file, not a folder", hint="name a new folder")
        return
    if not stat.S_ISDIR(mode):
        kind = "a FIFO" if stat.S_ISFIFO(mode) else "a symbolic link" if stat.S_ISLNK(mode) else \
            "a file" if stat.S_ISREG(mode) else "not a folder"
        raise InputError(f"--save {out}: that is {kind}; --save names a folder to keep the snapshots in",
                         hint="name a new folder")
    try:
        if any(out.iterdir()):
            raise InputError(f"--save {out}: the folder exists and is not empty", hint="name a new folder")
    except OSError as err:
        raise InputError(f"--save {out}: cannot read the folder: {err.strerror or err}") from None


def _save(folder: Path, out: Path, label: str) -> None:
    """Copy the module's text files (snapshots and stages; not LLVM IR or objects) to ``out``."""
    try:
        out.mkdir(parents=True, exist_ok=True)
        for p in folder.iterdir():
            if p.name.startswith(label + ".") and p.name.endswith(".txt"):
                shutil.copy2(p, out / p.name)
    except OSError as err:
        raise InputError(f"--save {out}: cannot write the snapshots there: {err.strerror or err}") from None


def _exists(path: str) -> bool:
    """Whether ``path`` names something; False for a name the system cannot even look up (a
    component longer than 255 bytes: ``DIR@`` and 300 digits)."""
    try:
        return os.path.lexists(path)
    except (OSError, ValueError):
        return False


def _is_dir(path: str) -> bool:
    try:
        return os.path.isdir(path)
    except (OSError, ValueError):
        return False


def _step_spec(value: Any) -> tuple[str, str, bool] | None:
    """``(base, step, live)`` for ``TARGET@STEP`` where TARGET is a dump folder with snapshots or
    a ``model.py:fn``; None for anything else (an existing path, a capture object)."""
    if not isinstance(value, str) or "@" not in value or _exists(value):
        return None
    base, _, which = value.rpartition("@")
    if _is_dir(base):
        return base, which, False
    file, colon, _ = base.rpartition(":")
    if colon and file.endswith(".py") and os.path.isfile(file):
        return base, which, True
    return None


def step_sides(a: Any, b: Any, *, args: Sequence[str] = (), device: str | None = None, module: str | None = None,
               notify: Callable[[str], None] | None = None) -> tuple[DiffSide | None, DiffSide | None]:
    """The sides of ``hloviz diff`` that name a step of a pass history (None for the others).

    ``DIR@STEP`` reads a dump folder's snapshot; ``model.py:fn@STEP`` captures with per-pass
    dumps first (once for both sides when they name the same function). ``@STEP`` as the second
    side means the first side's target. STEP is an index or the pass after which the snapshot
    was written (``fusion``, ``PIPELINE/PASS``).
    """
    if isinstance(b, str) and b.startswith("@") and _step_spec(a) is not None:
        b = a.rpartition("@")[0] + b
    specs = (_step_spec(a), _step_spec(b))
    if specs == (None, None):
        return None, None
    if specs[0] and specs[1] and specs[0][2] and specs[0][0] == specs[1][0]:  # one live target: one capture
        base = specs[0][0]
        with pass_dump_capture(base, args=args, device=device, notify=notify) as (cap, folder):
            post = cap.post_module()
            dump = pick_pass_module(folder, module, prefer=post.name if post is not None else None)
            return (_step_side(dump, base, specs[0][1], a, folder),
                    _step_side(dump, base, specs[1][1], b, folder))
    return tuple(_one_side(spec, value, args=args, device=device, module=module, notify=notify)  # type: ignore[return-value]
                 for spec, value in zip(specs, (a, b)))


def _one_side(spec: tuple[str, str, bool] | None, value: str, *, args: Sequence[str], device: str | None,
              module: str | None, notify: Callable[[str], None] | None) -> DiffSide | None:
    if spec is None:
        return None
    base, which, live = spec
    if not live:
        if not has_pass_snapshots(Path(base)):
            raise InputError(f"{base} holds no per-pass snapshots, so {value!r} names no step",
                             hint="save them with: hloviz passes model.py:function --save DIR")
        return _step_side(pick_pass_module(Path(base), module), base, which, value, Path(base))
    with pass_dump_capture(base, args=args, device=device, notify=notify) as (cap, folder):
        post = cap.post_module()
        dump = pick_pass_module(folder, module, prefer=post.name if post is not None else None)
        return _step_side(dump, base, which, value, folder)


def _step_side(dump: PassDumpModule, base: str, which: str, spec: str, folder: Path) -> DiffSide:
    step, path = _find_step(dump.snapshots, which, spec)
    if path is None:
        raise InputError(f"{spec}: snapshot {step.index} cannot be read ({dump.broken.get(step.index, 'no file')})")
    info = {"source": "pass_snapshot", "dump_folder": str(folder), "snapshot": step.to_dict()}
    return DiffSide(_parse(path, "step"), f"{base}@{step.index} ({step.label})", info)


def _cut(text: str, most: int = 60) -> str:
    return text if len(text) <= most else f"{text[:most]}… ({len(text)} characters)"


def _find_step(snapshots: Sequence[tuple[PassStep, Path | None]], which: str, spec: str
               ) -> tuple[PassStep, Path | None]:
    w = which.strip()
    if w.isdecimal() or (not w.isascii() and any(c.isdigit() for c in w) and not w.isidentifier()):
        if not (w.isascii() and w.isdecimal()):
            raise InputError(f"{_cut(spec)}: a step number is written in ASCII digits (0-9), not {_cut(w)!r}")
        number = w.lstrip("0") or "0"  # compared as digits: a number of any length is no error
        for step, path in snapshots:
            if str(step.index) == number:
                return step, path
        raise InputError(f"{_cut(spec)}: no snapshot {_cut(number)}; the indices run {snapshots[0][0].index}–"
                         f"{snapshots[-1][0].index}")
    found = [(s, p) for s, p in snapshots
             if w in (s.pass_name, f"{s.pipeline}/{s.pass_name}") and s.pass_name != "pipeline-start"]
    if len(found) == 1:
        return found[0]
    if not found:
        names = sorted({s.pass_name for s, _ in snapshots if s.pass_name != "pipeline-start"})
        raise InputError(f"{spec}: no snapshot was written after a pass named {w!r}",
                         hint="passes with snapshots: " + ", ".join(names[:40]))
    listing = ", ".join(f"{s.index} ({s.label})" for s, _ in found[:20])
    raise InputError(f"{spec}: {len(found)} snapshots were written after {w!r}; name one by index: {listing}")
