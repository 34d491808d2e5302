"""XLA's per-pass snapshots in a dump folder, and a live capture that makes them.

``XLA_FLAGS="--xla_dump_to=DIR --xla_dump_hlo_pass_re=.*"`` makes XLA write, next to
``module_N.NAME.before_optimizations.txt`` and ``…after_optimizations.txt``, one file per
snapshot (see :mod:`hloviz.analysis.passes` for when XLA writes one)::

    module_0001.NAME.0016.HLO_passes_after_layout_assignment.after_fusion.before_fusion-wrapper.txt
                     ^^^^ ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^       ^^^^^^        ^^^^^^^^^^^^^^
                     index pipeline                               the pass      the next pass
    module_0001.NAME.0019.copy-insertion.after_adding_copies_to_resolve_interference.txt
                          (a step written inside a pass: PASS.STEP)

:func:`list_pass_modules` reads the names (never the contents); :func:`pass_dump_capture`
captures a live target in a child process with those flags into a private temporary folder
that is removed when the ``with`` block ends — normally, on an error, on Ctrl-C or SIGTERM.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from hloviz.analysis.passes import PassStep
from hloviz.capture.dumps.module_choice import PLATFORM_PREFIX, pick
from hloviz.errors import HlovizError, InputError

if TYPE_CHECKING:
    from hloviz.capture import Capture

__all__ = ["ARCHIVE_SUFFIXES", "PassDumpModule", "XLA_PASS_FLAGS", "extracted_archive", "has_pass_snapshots",
           "is_archive", "list_pass_modules", "pass_dump_capture", "pick_pass_module", "xla_flags_with_dump"]

_TEXT = r"\.txt(?:\.gz|\.xz|\.bz2)?$"
#: After ``module_N.NAME.``: the index and the rest of a snapshot's name.
_INDEXED = re.compile(r"^(\d{4,})\.(.+?)" + _TEXT)
#: A snapshot of a module without stage files: NAME is then read up to the last index that is
#: followed by a snapshot's parts (a TF name may itself end in a number: ``…_1005__.2008``):
#: ``PIPELINE.after_PASS.before_NEXT`` (between passes) or ``PASS.STEP`` (inside one).
_SNAPSHOT = re.compile(r"^module_(\d+)\.(.+)\.(\d{4,})\.([^.]+\.(?:after_[^.]+\.before_[^.]+|[^.]+))" + _TEXT)
_BETWEEN = re.compile(r"^([^.]+)\.after_([^.]+)\.before_([^.]+)$")
_DURING = re.compile(r"^([^.]+)\.([^.]+)$")
_BEFORE = re.compile(r"^module_(\d+)\.(?:(.+)\.)?before_optimizations" + _TEXT)
_AFTER = re.compile(r"^module_(\d+)\.(?:(.+?)\.)?(?:" + PLATFORM_PREFIX + r")?after_optimizations" + _TEXT)
#: A file whose name XLA shortened: ``module_0000.0028.HLO_passes….txt``, the module's name left
#: out. XLA (``FilenameFor`` in xla/service/dump.cc) drops the name from any file name that would
#: be longer than 255 characters, one file at a time: with a long TF name (``a_inference_<function>
#: _18__XlaMustCompile_true_config_proto_…``) the long pass names lose it and the short ones keep
#: it, so one module's snapshots come in both forms.
_SHORTENED = re.compile(r"^module_(\d+)\.(\d{4,})\.(.+?)" + _TEXT)

#: The XLA flags a live capture runs under (``--xla_dump_to`` is added with the folder).
XLA_PASS_FLAGS = ("--xla_dump_hlo_pass_re=.*",)
#: Flags of the user's own XLA_FLAGS that would send the dump elsewhere or change what is dumped.
_OURS = ("--xla_dump_to", "--xla_dump_hlo_pass_re", "--xla_dump_hlo_module_re", "--xla_dump_hlo_as_proto",
         "--xla_dump_hlo_as_text")


@dataclass
class PassDumpModule:
    """One module's snapshots (in index order), its two stage files, and what looked wrong."""

    number: str
    name: str
    snapshots: list[tuple[PassStep, Path | None]] = field(default_factory=list)
    before: Path | None = None
    after: Path | None = None
    #: Snapshot index → why it cannot be used (two files claim it, a name hloviz cannot read).
    broken: dict[int, str] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        return f"module_{self.number}.{self.name}"


def _step(index: int, rest: str, file: str) -> PassStep | None:
    m = _BETWEEN.match(rest)
    if m:
        return PassStep(index, m.group(1), m.group(2), m.group(3), None, file)
    m = _DURING.match(rest)
    if m:
        return PassStep(index, None, m.group(1), None, m.group(2), file)
    return None


def _snapshot_name(file: str, names: dict[str, str]) -> tuple[str, str, int, str] | None:
    """(module number, module name, index, rest) of a snapshot's file name; None for other files."""
    if not file.startswith("module_") or "_optimizations" in file:
        return None
    number = file[7:].split(".", 1)[0]
    name = names.get(number)
    short = _SHORTENED.match(file)  # the name left out (see _SHORTENED): the number says the module
    if short is not None and _step(int(short.group(2)), short.group(3), file) is not None:
        return number, name or "", int(short.group(2)), short.group(3)
    if name:
        prefix = f"module_{number}.{name}."
        m = _INDEXED.match(file[len(prefix):]) if file.startswith(prefix) else None
        return (number, name, int(m.group(1)), m.group(2)) if m else None
    m = _SNAPSHOT.match(file)
    return (m.group(1), m.group(2), int(m.group(3)), m.group(4)) if m else None


def list_pass_modules(folder: Path) -> list[PassDumpModule]:
    """The modules of ``folder`` that have per-pass snapshots, by number; reads names only."""
    modules: dict[str, PassDumpModule] = {}
    stages: dict[str, dict[str, Path]] = {}
    claimed: dict[tuple[str, int], list[tuple[PassStep, Path]]] = {}
    try:
        entries = sorted(p for p in folder.iterdir() if p.is_file())
    except OSError as err:
        raise InputError(f"cannot read the folder {folder}: {err.strerror or err}") from None
    names: dict[str, str] = {}  # module number → its name, from the stage files (exact)
    for p in entries:
        for which, pattern in (("before", _BEFORE), ("after", _AFTER)):
            m = pattern.match(p.name)
            if m:
                stages.setdefault(m.group(1), {}).setdefault(which, p)
                if m.group(2):  # not a shortened name (module_0000.before_optimizations.txt)
                    names[m.group(1)] = m.group(2)
    for p in entries:
        found = _snapshot_name(p.name, names)
        if found is None:
            continue
        number, name, index, rest = found
        mod = modules.setdefault(number, PassDumpModule(number, name))
        mod.name = mod.name or name
        step = _step(index, rest, p.name)
        if step is None:
            mod.broken[index] = f"hloviz cannot read the file name {p.name}"
            continue
        claimed.setdefault((number, index), []).append((step, p))
    for (number, index), files in sorted(claimed.items(), key=lambda kv: (kv[0][0], kv[0][1])):
        mod = modules[number]
        if len({f[0].label for f in files}) > 1:  # not one snapshot in two forms (.txt and .txt.gz)
            listed = ", ".join(f[1].name for f in files)
            mod.broken[index] = f"{len(files)} files claim this snapshot: {listed}"
            mod.snapshots.append((files[0][0], None))
            continue
        plain = [f for f in files if f[1].suffix == ".txt"]
        step, path = (plain or files)[0]
        mod.snapshots.append((step, path))
    for number, mod in modules.items():
        _finish(mod, stages.get(number, {}))
    return [modules[n] for n in sorted(modules, key=int)]


def _finish(mod: PassDumpModule, found: dict[str, Path]) -> None:
    """Give ``mod`` its stage files, its name if no file name carried it, its unreadable
    snapshots as placeholders, its snapshots in index order and what is missing."""
    mod.before, mod.after = found.get("before"), found.get("after")
    if not mod.name:  # every file name shortened: the module's name is its text's first line
        mod.name = _name_inside(mod.before or mod.after or next((p for _s, p in mod.snapshots if p), None))
    for index, why in mod.broken.items():
        if all(s.index != index for s, _ in mod.snapshots):
            mod.snapshots.append((PassStep(index, None, "(a file name hloviz cannot read)", file=why), None))
    mod.snapshots.sort(key=lambda sp: sp[0].index)
    if not mod.before:
        mod.problems.append(f"no {mod.label}.before_optimizations.txt: the first snapshot is the start")
    if not mod.after:
        mod.problems.append(f"no {mod.label}.*after_optimizations.txt: the fusions, folds and eliminated ops "
                            "of the optimized module cannot be credited")


def _name_inside(path: Path | None) -> str:
    """The module's name as its dump's first line says it (``HloModule NAME, …``); "" when
    unreadable. Only for a module all of whose file names XLA shortened (one line of one file)."""
    if path is None or path.suffix != ".txt":
        return ""
    try:
        with path.open("r", encoding="utf-8", errors="replace") as f:
            first = f.readline(64 * 1024)
    except OSError:
        return ""
    m = re.match(r"HloModule\s+([^\s,]+)", first)
    return m.group(1) if m else ""


def has_pass_snapshots(folder: Path) -> bool:
    """Whether ``folder`` holds at least one per-pass snapshot file."""
    try:
        return folder.is_dir() and any(_SNAPSHOT.match(p.name) or _SHORTENED.match(p.name) for p in folder.iterdir())
    except OSError:
        return False


def pick_pass_module(folder: Path, choice: str | None, *, prefer: str | None = None) -> PassDumpModule:
    """The module ``choice`` names (name, number or pattern, as ``--module`` elsewhere); without
    one, the only module, else the one named ``prefer`` (a live capture's module)."""
    modules = list_pass_modules(folder)
    if not modules:
        raise InputError(f"{folder} holds no per-pass snapshots (module_*.NNNN.PIPELINE.after_PASS.before_NEXT.txt)",
                         hint="make them with XLA_FLAGS=\"--xla_dump_to=DIR --xla_dump_hlo_pass_re=.*\", or give "
                              "hloviz passes a model.py:function to capture with them")
    listing = "\n".join(f"  {m.label}  ({len(m.snapshots)} snapshots)" for m in modules)
    if choice is None:
        if len(modules) == 1:
            return modules[0]
        named = [m for m in modules if prefer is not None and m.name == prefer]
        if len(named) == 1:
            return named[0]
        if prefer is not None and named:
            return max(named, key=lambda m: int(m.number))  # the last compilation of that module
        raise InputError(f"{folder} holds snapshots of {len(modules)} modules; pick one with --module NAME "
                         f"(a name, number or pattern):\n{listing}")
    return pick(modules, choice, folder=folder, listing=listing, what="module with snapshots")


_WS = " \t\r\n"
_NAME_CHARS = frozenset("-_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
#: The most of a flags file (XLA_FLAGS naming a file) hloviz reads.
_FLAGS_FILE_LIMIT = 1 << 20


def _xla_words(text: str) -> list[tuple[str, str | None]]:
    """XLA_FLAGS as XLA itself splits it (``ParseArgvFromString`` in xla/parse_flags_from_env.cc):
    words start with ``-`` and end at whitespace, except a value written ``--name="…"`` or
    ``--name='…'`` (a backslash inside double quotes takes the next character as it is), which
    runs to its closing quote or the end. XLA stops at the first word not starting with ``-``.
    Each word is ``(word, None)``, or ``("--name", value)`` for a quoted value."""
    words: list[tuple[str, str | None]] = []
    n, i = len(text), 0
    while i < n and text[i] in _WS:
        i += 1
    while i < n and text[i] == "-":
        j = i
        while j < n and text[j] in _NAME_CHARS:
            j += 1
        if j + 1 < n and text[j] == "=" and text[j + 1] in "'\"":
            quote, k, value = text[j + 1], j + 2, []
            while k < n and text[k] != quote:
                if quote == '"' and text[k] == "\\" and k + 1 < n:
                    k += 1
                value.append(text[k])
                k += 1
            words.append((text[i:j], "".join(value)))
            i = k + 1
        else:
            k = j
            while k < n and text[k] not in _WS:
                k += 1
            words.append((text[i:k], None))
            i = k
        while i < n and text[i] in _WS:
            i += 1
    return words


def _quoted(name: str, value: str) -> str:
    """``--name="value"`` as XLA reads it back: the value's backslashes and double quotes escaped."""
    return f'{name}="' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _users_flags(existing: str | None) -> str:
    """The user's XLA_FLAGS text; when it names a file (it does not start with ``-``), as XLA
    reads it then, the file's text."""
    text = existing or ""
    if not text.strip(_WS) or text.lstrip(_WS).startswith("-"):
        return text
    try:
        with open(text, "rb") as f:
            return f.read(_FLAGS_FILE_LIMIT).decode("utf-8", "replace")
    except OSError as err:
        raise InputError(f"XLA_FLAGS names a file of flags that cannot be read ({err.strerror or err}): {text[:200]!r}",
                         hint="XLA reads XLA_FLAGS as a file name when it does not start with --; fix or unset it") from None


def xla_flags_with_dump(existing: str | None, folder: Path) -> str:
    """The user's XLA_FLAGS without dump flags of their own, plus ours, written so that XLA reads
    each flag as one: ``--xla_dump_to="FOLDER"`` keeps a TMPDIR with spaces, quotes or
    backslashes whole (unquoted, XLA would dump to the part before a space and drop every flag
    after it)."""
    kept = []
    for word, value in _xla_words(_users_flags(existing)):
        name = word.split("=", 1)[0]
        if name in _OURS:
            continue
        kept.append(word if value is None else _quoted(word, value))
    return " ".join([*kept, _quoted("--xla_dump_to", str(folder)), *XLA_PASS_FLAGS])


@contextmanager
def pass_dump_capture(target: str, *, args: Sequence[str] = (), device: str | None = None, verbose: bool = False,
                      notify: Callable[[str], None] | None = None, tf: str | None = None,
                      jax: str | None = None) -> Iterator[tuple[Capture, Path]]:
    """Capture ``target`` in a child process with per-pass dumps; yields the capture and the
    dump folder, a private temporary folder (mode 0700) removed when the block ends, however it
    ends. XLA reads XLA_FLAGS once per process, so the capture always runs in a child (under
    the ``tf`` / ``jax`` release's managed environment when one is given: it inherits them too)."""
    from hloviz.capture import load_target

    folder = Path(tempfile.mkdtemp(prefix="hloviz-passes-"))
    try:
        previous = os.environ.get("XLA_FLAGS")
        os.environ["XLA_FLAGS"] = xla_flags_with_dump(previous, folder)
        try:
            capture = load_target(target, args=tuple(args), device=device, verbose=verbose, notify=notify,
                                  isolate=True, tf=tf, jax=jax)
        finally:
            if previous is None:
                os.environ.pop("XLA_FLAGS", None)
            else:
                os.environ["XLA_FLAGS"] = previous
        yield capture, folder
    except HlovizError as err:  # the folder is gone once the message is printed: name what it was
        from hloviz.capture.dumps.archive import rename_folder

        rename_folder(err, folder, f"XLA's dump of {target}", member=lambda name: name)
        raise
    finally:
        shutil.rmtree(folder, ignore_errors=True)


#: A dump folder packed as one file (how samples/captures/passes/ keeps them).
ARCHIVE_SUFFIXES = (".tar", ".tar.gz", ".tgz", ".tar.xz", ".tar.bz2")


def is_archive(path: Path) -> bool:
    return os.path.isfile(path) and path.name.endswith(ARCHIVE_SUFFIXES)  # no OSError for a name too long


@contextmanager
def extracted_archive(path: Path) -> Iterator[Path]:
    """A tar archive of a dump folder, unpacked into a private temporary folder removed when the
    block ends: regular files only, flat, no more bytes in all than ``--max-input`` allows, and
    no name that leads outside (:mod:`hloviz.capture.dumps.archive` says what is refused)."""
    from hloviz.capture.dumps.archive import unpacked_dump

    with unpacked_dump(path) as folder:
        yield folder
