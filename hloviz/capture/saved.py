"""Saved captures and plain HLO files: everything that works without TensorFlow.

A saved capture is a folder holding ``pre.hlo`` (before XLA's optimizations), ``post.hlo``
(after) and ``capture.json`` (where they came from); ``pre.hlo.gz`` / ``post.hlo.gz`` are read
too (big captures kept in a repository). :func:`write_folder` writes it
atomically: everything goes to a temporary folder beside the destination, which is renamed into
place only when complete, so an interrupted ``hloviz dump`` never leaves a half-written capture.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from hloviz.errors import InputError
from hloviz.inputs import read_bytes

if TYPE_CHECKING:
    from .info import CaptureInfo

PRE_NAME = "pre.hlo"
POST_NAME = "post.hlo"
INFO_NAME = "capture.json"
#: XLA's own buffer assignment, when the capture read it (see :mod:`hloviz.capture.memory`).
MEMORY_NAME = "memory.json"

# Signs that a module went through XLA's pipeline (scheduling, fusion, layout assignment).
# What only optimized HLO has. Each sign is found by str.find of a literal and a check of the
# few places it occurs: a regular expression anchored at line starts (re.M) is tried at every
# line start, and 50 MB of blank lines took seconds.
_FUSION_KINDS = ("kLoop", "kInput", "kOutput", "kCustom")


def _occurrences(text: str, literal: str) -> Iterator[int]:
    pos = text.find(literal)
    while pos >= 0:
        yield pos
        pos = text.find(literal, pos + 1)


def _word_starts(text: str, pos: int) -> bool:
    return pos == 0 or not (text[pos - 1].isalnum() or text[pos - 1] == "_")


def _scheduled(text: str) -> bool:
    """An ``HloModule`` line (at a line start) that says ``is_scheduled=true``."""
    for p in _occurrences(text, "HloModule "):
        if p == 0 or text[p - 1] == "\n":
            end = text.find("\n", p)
            line = text[p : end if end >= 0 else None]
            if any(_word_starts(line, q) for q in _occurrences(line, "is_scheduled=true")):
                return True
    return False


def _has_fusion(text: str) -> bool:
    if any(_word_starts(text, p) for p in _occurrences(text, "fusion(")):
        return True
    for p in _occurrences(text, "kind=k"):
        kind = text[p + 5 : p + 13]
        if _word_starts(text, p) and any(kind.startswith(k) and not _continues_word(text, p + 5 + len(k))
                                         for k in _FUSION_KINDS):
            return True
    return False


def _continues_word(text: str, pos: int) -> bool:
    return pos < len(text) and (text[pos].isalnum() or text[pos] == "_")


def _has_fused_computation(text: str) -> bool:
    """A line that starts (after spaces) with ``[%]fused_computation``."""
    for p in _occurrences(text, "fused_computation"):
        q = p - 1 if p > 0 and text[p - 1] == "%" else p
        while q > 0 and text[q - 1] in " \t":
            q -= 1
        if q == 0 or text[q - 1] == "\n":
            return True
    return False


_POST_SIGNS = (
    (_scheduled, "it is scheduled (is_scheduled=true)"),
    (_has_fusion, "it contains fusions"),
    (_has_fused_computation, "it contains fused computations"),
)


def is_capture_folder(folder: Path) -> bool:
    return folder.is_dir() and any((folder / n).is_file() for n in (INFO_NAME, PRE_NAME, POST_NAME,
                                                                       PRE_NAME + ".gz", POST_NAME + ".gz"))


def stage_file(folder: Path, name: str) -> Path | None:
    """``folder/name``, or its gzipped form ``name.gz`` (how big captures are kept in a
    repository); None when neither is there."""
    for candidate in (folder / name, folder / f"{name}.gz"):
        if candidate.is_file():
            return candidate
    return None


def read_text(path: Path) -> str:
    """Read an HLO text file (``.gz``, ``.xz``, ``.bz2`` too, streamed under ``--max-input``), or a
    binary proto (``.pb``, ``.hlo.pb``) as text; a missing file is an InputError."""
    from hloviz.parser.proto import is_proto_path, read_proto_text

    if is_proto_path(path):
        return read_proto_text(path)
    data = read_bytes(path)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{path} is not a text file (HLO text expected)") from None


def guess_stage(path: Path, text: str) -> tuple[str, str]:
    """``("pre" | "post", why)`` for a lone HLO file: by its name, else by its content."""
    name = path.name.lower()
    if "before_optimizations" in name or name.startswith(("pre.", "pre_")):
        return "pre", f"its name says so ({path.name})"
    if "after_optimizations" in name or name.startswith(("post.", "post_")):
        return "post", f"its name says so ({path.name})"
    for sign, why in _POST_SIGNS:
        if sign(text):
            return "post", why
    return "pre", "it has no schedule and no fusions"


def load_folder(folder: Path) -> tuple[str | None, str | None, dict, CaptureInfo | None]:
    """``(pre text, post text, info, info checked and typed)`` of a saved capture folder (the
    typed info None when the folder has no capture.json)."""
    pre_p, post_p, info_p = stage_file(folder, PRE_NAME), stage_file(folder, POST_NAME), folder / INFO_NAME
    if pre_p is None and post_p is None:
        raise InputError(f"{folder} has neither {PRE_NAME} nor {POST_NAME}; not a capture folder")
    info, checked = read_checked_info(info_p) if info_p.is_file() else ({}, None)
    pre = read_text(pre_p) if pre_p is not None else None
    post = read_text(post_p) if post_p is not None else None
    return pre, post, info, checked


def _no_constant(name: str) -> object:
    raise ValueError(f"{name} is not a JSON number")


def read_info(path: Path) -> dict:
    """``capture.json``, parsed and checked by :func:`check_info`; any fault is an InputError."""
    return read_checked_info(path)[0]


def read_checked_info(path: Path) -> tuple[dict, CaptureInfo]:
    """``capture.json`` as :func:`read_info` reads it, and the typed value the check made."""
    from .info import CaptureInfo

    raw = read_bytes(path, what="JSON")
    try:
        info = json.loads(raw.decode("utf-8"), parse_constant=_no_constant)
    except UnicodeDecodeError:
        raise InputError(f"{path} is not valid JSON: it is not UTF-8 text") from None
    except RecursionError:
        raise InputError(f"{path} is not a capture.json hloviz can read: it nests too deeply") from None
    except ValueError as exc:  # JSONDecodeError, and NaN/Infinity (which JSON does not have)
        raise InputError(f"{path} is not valid JSON: {exc}") from None
    typed = CaptureInfo.from_dict(info, where=str(path))  # as check_info checks it
    assert isinstance(info, dict)  # from_dict refuses anything else
    return info, typed


#: capture.json keys whose value is a string (or null).
_TEXT_KEYS = ("hloviz", "python", "machine", "time", "source", "target", "function", "file", "module",
              "framework", "tensorflow", "jax", "jaxlib", "device", "platform", "label", "arg_source", "stage",
              "stage_reason", "pre_file", "post_file", "dump_folder")


def check_info(info: object, where: str = "capture.json") -> dict:
    """Check the types of a capture's info (what capture.json holds) and return it.

    The checking itself is :meth:`hloviz.capture.info.CaptureInfo.from_dict`, the one place
    that decides what a capture.json may hold, so that the analyses can trust it; anything
    else is an :class:`InputError` naming the file and the key.
    """
    from .info import CaptureInfo

    CaptureInfo.from_dict(info, where=where)
    assert isinstance(info, dict)  # from_dict refuses anything else
    return info


def _kind(value: object) -> str:
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean", int: "a number",
             float: "a number", type(None): "null"}
    return names.get(type(value), type(value).__name__)


def info_json(info: dict) -> str:
    """``capture.json`` text: one key per line, and one line per entry of the big maps
    (source_map, tf_ops), so the file stays readable and diffs well."""
    lines = []
    for key, value in info.items():
        if isinstance(value, dict) and value and all(not isinstance(v, (list, tuple)) for v in value.values()):
            body = ",\n".join(f"  {json.dumps(k)}: {json.dumps(v, default=str)}" for k, v in value.items())
            lines.append(f" {json.dumps(key)}: {{\n{body}\n }}")
        else:
            lines.append(f" {json.dumps(key)}: {json.dumps(value, default=str)}")
    return "{\n" + ",\n".join(lines) + "\n}\n"


#: Every file a capture folder holds; nothing else is ever written to, or deleted from, one.
CAPTURE_FILES = (PRE_NAME, POST_NAME, INFO_NAME, MEMORY_NAME)


def written_by_hloviz(folder: Path) -> bool:
    """Whether ``folder`` provably holds a capture hloviz wrote, and nothing else.

    The rule that lets :func:`write_folder` replace a folder: it holds only hloviz's own file
    set (``pre.hlo``, ``post.hlo``, ``capture.json``; no other file, hidden file or subfolder),
    and its ``capture.json`` is a JSON object carrying hloviz's stamp (the ``"hloviz"`` version
    key every save writes). A folder holding one stray ``pre.hlo`` among a user's files is not a
    capture hloviz wrote, and is never replaced.
    """
    try:
        names = {p.name for p in folder.iterdir()}
    except OSError:
        return False
    if not names or not names <= set(CAPTURE_FILES) or INFO_NAME not in names:
        return False
    if not all((folder / n).is_file() and not (folder / n).is_symlink() for n in names):
        return False
    try:
        with open(folder / INFO_NAME, "rb") as f:
            head = f.read(_STAMP_PROBE)
    except OSError:
        return False
    return _STAMP.search(head) is not None


# capture.json begins with its stamp (info_json writes it first): look at the head only.
_STAMP_PROBE = 4096
_STAMP = re.compile(rb'\A\s*\{\s*"hloviz"\s*:\s*"')


def load_memory(folder: Path, info: dict) -> dict | None:
    """The parsed ``memory.json`` a capture's info declares (``memory_file``), or None.

    Read as JSON only; :func:`hloviz.capture.memory.read_memory` checks it when a command needs it."""
    name = info.get("memory_file")
    if not name:
        return None
    path = folder / Path(str(name)).name
    if not path.is_file():
        raise InputError(f"{folder / INFO_NAME} names {name} (XLA's buffer assignment), which is missing",
                         hint="copy the whole capture folder, or capture it again (hloviz dump)")
    try:
        data = json.loads(read_bytes(path, what="JSON").decode("utf-8"), parse_constant=_no_constant)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise InputError(f"{path} is not valid JSON: {exc}", hint="capture it again (hloviz dump)") from None
    if not isinstance(data, dict):
        raise InputError(f"{path} must hold a JSON object", hint="capture it again (hloviz dump)")
    return data


def write_folder(out_dir: Path, pre: str | None, post: str | None, info: dict,
                 memory: dict | None = None) -> Path:
    """Write a capture folder atomically. An existing ``out_dir`` is replaced only when it is
    empty or :func:`written_by_hloviz` proves it is hloviz's capture; anything else is refused
    (exit 2) and left exactly as it was.

    Several ``hloviz dump -o DIR`` may run at once: a folder that another writer moves aside or
    lands between two of our looks is looked at again (last writer wins), never an internal
    error, and the folder ends holding one whole capture.
    """
    out_dir = Path(out_dir)
    _check_replaceable(out_dir)
    info = {k: v for k, v in info.items() if k != "memory_file"}
    if memory is not None:
        info["memory_file"] = MEMORY_NAME
    stamp = info.get("hloviz") if isinstance(info.get("hloviz"), str) else _hloviz_version()
    info = {"hloviz": stamp, **{k: v for k, v in info.items() if k != "hloviz"}}  # the stamp comes first
    parent = out_dir.parent if str(out_dir.parent) else Path(".")
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"cannot create {parent}: {exc.strerror or exc}") from None
    try:
        return _write_atomically(out_dir, parent, pre, post, info, memory)
    except OSError as exc:
        raise InputError(f"cannot write the capture to {out_dir}: {exc.strerror or exc}") from None


def _check_replaceable(out_dir: Path) -> None:
    """Refuse (InputError) an ``out_dir`` that is there and is not ours to replace.

    A folder that vanishes while we look (another writer moved it aside) is simply absent.
    """
    if not (out_dir.is_symlink() or out_dir.exists()):
        return
    if not out_dir.is_dir():
        raise InputError(f"{out_dir} exists and is not a folder; refusing to replace it",
                         hint="choose another -o folder")
    try:
        empty = not any(out_dir.iterdir())
    except FileNotFoundError:
        return
    if not empty and not written_by_hloviz(out_dir):
        if not (out_dir.is_symlink() or out_dir.exists()):
            return  # moved aside by another writer while we read it
        raise InputError(f"{out_dir} exists and is not a capture folder; refusing to overwrite it (hloviz "
                         f"replaces a folder only when it holds nothing but {', '.join(CAPTURE_FILES)} "
                         f"and a capture.json that hloviz wrote)",
                         hint="choose another -o folder, or empty that one yourself")


def _hloviz_version() -> str:
    from hloviz import __version__

    return str(__version__)


# How often the move-aside / rename-into-place pair is tried again when another writer changes
# the destination between the two; each retry follows a change some other writer completed.
_RACE_TRIES = 16


def _write_atomically(out_dir: Path, parent: Path, pre: str | None, post: str | None, info: dict,
                      memory: dict | None = None) -> Path:
    tmp = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.tmp-", dir=parent))
    try:
        if pre is not None:
            (tmp / PRE_NAME).write_text(pre, encoding="utf-8")
        if post is not None:
            (tmp / POST_NAME).write_text(post, encoding="utf-8")
        (tmp / INFO_NAME).write_text(info_json(info), encoding="utf-8")
        if memory is not None:
            (tmp / MEMORY_NAME).write_text(json.dumps(memory, separators=(",", ":")) + "\n", encoding="utf-8")
        os.chmod(tmp, 0o755)
        for attempt in range(_RACE_TRIES):
            if attempt:
                _check_replaceable(out_dir)  # what landed meanwhile must be a capture too
            if _swap_into_place(tmp, out_dir, parent):
                return out_dir
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    shutil.rmtree(tmp, ignore_errors=True)
    raise InputError(f"cannot write the capture to {out_dir}: other writers kept replacing it",
                     hint="run one hloviz dump per -o folder at a time")


def _swap_into_place(tmp: Path, out_dir: Path, parent: Path) -> bool:
    """Move the previous capture aside, rename ``tmp`` into place, then delete the previous one.

    False when another writer landed a folder between the two renames (try again); the capture
    moved aside is then put back if nothing took its place, else removed as it would have been.
    """
    old: Path | None = None
    if out_dir.is_symlink() or out_dir.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.old-", dir=parent))
        os.rmdir(old)
        try:
            os.rename(out_dir, old)
        except FileNotFoundError:
            old = None  # another writer moved it aside first
    try:
        os.rename(tmp, out_dir)
    except OSError as exc:
        if old is not None:
            _put_back(old, out_dir)
        if exc.errno in (errno.EEXIST, errno.ENOTEMPTY):
            return False
        raise
    except BaseException:
        if old is not None:
            _put_back(old, out_dir)
        raise
    if old is not None:
        _remove_old(old)
    return True


def _put_back(old: Path, out_dir: Path) -> None:
    """Return the capture moved aside to ``out_dir`` when nothing took its place; when another
    writer's capture is there (before our look, or landed between the look and the rename) the
    old one is removed, as that writer's swap would have done. Never leaves ``old`` behind."""
    if not (out_dir.is_symlink() or out_dir.exists()):
        try:
            os.rename(old, out_dir)
            return
        except OSError as exc:
            if exc.errno not in (errno.EEXIST, errno.ENOTEMPTY):
                raise
    _remove_old(old)


def _remove_old(old: Path) -> None:
    """Delete the capture moved aside: a symlink is unlinked (its target is never touched); a
    folder loses exactly hloviz's own files, then is removed if that left it empty."""
    if old.is_symlink():
        old.unlink()
        return
    for name in CAPTURE_FILES:
        with contextlib.suppress(FileNotFoundError):
            (old / name).unlink()
    with contextlib.suppress(OSError):
        old.rmdir()  # not empty: something appeared since the check; it stays, nothing is lost
