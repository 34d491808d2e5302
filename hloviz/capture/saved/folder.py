"""A saved capture folder, read: what it holds and how each file of it is read and checked.

A saved capture is a folder holding ``pre.hlo`` (before XLA's optimizations), ``post.hlo``
(after) and ``capture.json`` (where they came from), and ``memory.json`` (XLA's buffer
assignment) when the capture read it; ``pre.hlo.gz`` / ``post.hlo.gz`` are read too (big captures
kept in a repository).

In: a folder. Out: whether it is a capture folder, its stage files, the texts and ``capture.json``
(parsed and checked: :func:`load_folder`, :func:`read_info`, :func:`check_info`) and the parsed
``memory.json`` (:func:`load_memory`). The file names are here, and :data:`CAPTURE_FILES`, every
file a capture folder holds. A module of its own because reading needs nothing of the writing
(:mod:`.write`, which replaces a folder only when it holds these files alone).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from hloviz.errors import InputError
from hloviz.inputs import read_bytes

from .hlo_file import read_text

if TYPE_CHECKING:
    from ..info import CaptureInfo

__all__ = ["CAPTURE_FILES", "INFO_NAME", "MEMORY_NAME", "POST_NAME", "PRE_NAME", "check_info", "is_capture_folder",
           "load_folder", "load_memory", "read_checked_info", "read_info", "stage_file"]

PRE_NAME = "pre.hlo"
POST_NAME = "post.hlo"
INFO_NAME = "capture.json"
#: XLA's own buffer assignment, when the capture read it (see :mod:`hloviz.capture.memory`).
MEMORY_NAME = "memory.json"
#: Every file a capture folder holds; nothing else is ever written to, or deleted from, one.
CAPTURE_FILES = (PRE_NAME, POST_NAME, INFO_NAME, MEMORY_NAME)


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
    from ..info import CaptureInfo, surrogates_possible

    raw = read_bytes(path, what="JSON")
    try:
        info = json.loads(raw.decode("utf-8"), parse_constant=_no_constant)
    except UnicodeDecodeError:
        raise InputError(f"{path} is not valid JSON: it is not UTF-8 text") from None
    except RecursionError:
        raise InputError(f"{path} is not a capture.json hloviz can read: it nests too deeply") from None
    except ValueError as exc:  # JSONDecodeError, and NaN/Infinity (which JSON does not have)
        raise InputError(f"{path} is not valid JSON: {exc}") from None
    typed = CaptureInfo.from_dict(info, where=str(path), text_known=not surrogates_possible(raw))  # as check_info checks it
    assert isinstance(info, dict)  # from_dict refuses anything else
    return info, typed


def check_info(info: object, where: str = "capture.json") -> dict:
    """Check the types of a capture's info (what capture.json holds) and return it.

    The checking itself is :meth:`hloviz.capture.info.CaptureInfo.from_dict`, the one place
    that decides what a capture.json may hold, so that the analyses can trust it; anything
    else is an :class:`InputError` naming the file and the key.
    """
    from ..info import CaptureInfo

    CaptureInfo.from_dict(info, where=where)
    assert isinstance(info, dict)  # from_dict refuses anything else
    return info


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
