"""Saved captures and plain HLO files: everything that works without TensorFlow.

A saved capture is a folder holding ``pre.hlo``, ``post.hlo`` and ``capture.json`` (and
``memory.json``), written by ``hloviz dump`` and read back by every command on any machine.
:mod:`.hlo_file` reads one HLO file and tells its stage, :mod:`.folder` reads a capture folder,
:mod:`.write` writes one atomically. The names are re-exported here, where hloviz has always
imported them from.
"""

from __future__ import annotations

from .folder import (
    CAPTURE_FILES,
    INFO_NAME,
    MEMORY_NAME,
    POST_NAME,
    PRE_NAME,
    check_info,
    is_capture_folder,
    load_folder,
    load_memory,
    read_checked_info,
    read_info,
    stage_file,
)
from .hlo_file import guess_stage, read_text
from .write import info_json, write_folder, written_by_hloviz

__all__ = ["CAPTURE_FILES", "INFO_NAME", "MEMORY_NAME", "POST_NAME", "PRE_NAME", "check_info", "guess_stage",
           "info_json", "is_capture_folder", "load_folder", "load_memory", "read_checked_info", "read_info",
           "read_text", "stage_file", "write_folder", "written_by_hloviz"]
