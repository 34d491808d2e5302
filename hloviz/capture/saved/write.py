"""A saved capture folder, written: atomically, and only over a capture hloviz wrote.

In: the destination, the pre/post texts, the info (``capture.json``'s mapping) and XLA's record
(``memory.json``), if any. Out: the folder, holding exactly :data:`~.folder.CAPTURE_FILES` (those
given). :func:`write_folder` writes everything to a temporary folder beside the destination,
which is renamed into place only when complete, so an interrupted ``hloviz dump`` never leaves a
half-written capture; an existing folder is replaced only when :func:`written_by_hloviz` proves
it is hloviz's, and concurrent writers to one folder end with one whole capture.
:func:`info_json` is ``capture.json``'s text.

A module of its own because it is the only part of a saved capture that changes the user's
files: the rules and the races of replacing a folder, apart from the reading (:mod:`.folder`).
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import shutil
import tempfile
from pathlib import Path

from hloviz.errors import InputError, why_unwritable

from .folder import CAPTURE_FILES, INFO_NAME, MEMORY_NAME, POST_NAME, PRE_NAME

__all__ = ["info_json", "write_folder", "written_by_hloviz"]


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
        raise InputError(f"cannot write the capture to {out_dir}: {why_unwritable(out_dir, exc, folder=True)}") from None
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
