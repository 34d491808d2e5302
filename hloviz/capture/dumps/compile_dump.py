"""XLA's buffer assignment from the very compile that gave the optimized HLO: a dump folder.

TensorFlow hands out one compile result per ``experimental_get_compiler_ir`` stage, and every
stage compiles again: ``optimized_hlo`` gives the text, ``optimized_hlo_proto_serialized`` the
``HloProto`` that carries the buffer assignment. Asking for both compiled the module twice (53 s
of a 109 s capture of a MobileNetV3 training step, issue 32). The proto alone will not do: the
executable's ``HloProto`` keeps each constant's shape but not its values (TensorFlow 2.21, CPU),
and the analyses need them.

So, in a process of hloviz's own (the capture child, which ends after the capture), the
compile is asked to dump: ``--xla_dump_to=<a fresh temporary folder>`` is added to
``XLA_FLAGS`` before TensorFlow compiles, XLA writes ``…after_optimizations-buffer-assignment.txt``
(with the live ranges) next to the module's text while compiling for ``optimized_hlo``, and
:meth:`CompileDump.buffer_assignment` takes its text; the folder is removed. XLA reads ``XLA_FLAGS``
once, at its first compile: when something compiled earlier in the process (or the user's
``XLA_FLAGS`` already dump somewhere), no file appears and the caller asks for the proto as
before — the same record, one compile more.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

__all__ = ["CompileDump", "fresh_folder", "read_sent", "same_text"]

_AFTER = "after_optimizations-buffer-assignment.txt"


class CompileDump:
    """A temporary ``--xla_dump_to`` folder for the next compile of this process."""

    def __init__(self) -> None:
        flags = os.environ.get("XLA_FLAGS", "")
        self._flags: str | None = os.environ.get("XLA_FLAGS")
        self.folder: Path | None = None
        if "--xla_dump_to" in flags:  # the user's own dump: not ours to redirect or delete
            return
        self.folder = fresh_folder()
        os.environ["XLA_FLAGS"] = f"{flags} --xla_dump_to={self.folder}".strip()

    def buffer_assignment(self, post_text: str, version: str) -> dict | None:
        """XLA's buffer assignment of the module ``post_text`` is the optimized text of, as it was
        dumped: ``{"dumped": the file's text, "where": its name, "origin": …}``, for
        :func:`read_sent` to turn into the record (:meth:`XlaAssignment.to_dict
        <hloviz.analysis.memory.records.XlaAssignment.to_dict>`). None when XLA dumped none
        (flags read before) or the file cannot be read.

        The text is not read here: this runs in the capture child, and reading it there imported
        the analyses (~35 ms) while hloviz's own process, waiting for the child to start
        TensorFlow, had the time to import them (issue 32)."""
        if self.folder is None:
            return None
        path = next((p for p in sorted(self.folder.glob(f"module_*{_AFTER}"), reverse=True)
                     if same_text(p.with_name(p.name.replace("-buffer-assignment", "")), post_text)), None)
        if path is None:
            return None
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None
        return {"dumped": text, "where": path.name,
                "origin": f"XLA's buffer assignment (TensorFlow {version}, dumped by the compile)"}

    def close(self) -> None:
        """Remove the folder and give ``XLA_FLAGS`` back its value (what the model starts after
        the capture inherits no dump). XLA keeps the flag it read: later compiles of this process
        dump again, which is why only a process that ends after the capture asks for a dump."""
        if self.folder is None:
            return
        if self._flags is None:
            os.environ.pop("XLA_FLAGS", None)
        else:
            os.environ["XLA_FLAGS"] = self._flags
        shutil.rmtree(self.folder, ignore_errors=True)
        self.folder = None


def fresh_folder() -> Path:
    """A new temporary folder for one compile's dump, in memory (``/dev/shm``) where there is one."""
    shm = Path("/dev/shm")
    base = str(shm) if shm.is_dir() and os.access(shm, os.W_OK) else None
    return Path(tempfile.mkdtemp(prefix="hloviz-xla-dump-", dir=base))


def same_text(path: Path, text: str) -> bool:
    """Is ``path`` (the dump's optimized module) the text TensorFlow returned? Then the buffer
    assignment beside it is that module's, whatever name XLA gave the files."""
    try:
        return path.read_text(encoding="utf-8", errors="replace").strip() == text.strip()
    except OSError:
        return False


def read_sent(memory: dict | None) -> dict | None:
    """The record of a buffer assignment :meth:`CompileDump.buffer_assignment` sent as text; any
    other record (XLA's proto, read where it was asked for) as it is; None where the text is not
    a buffer assignment (the memory report then estimates, as without one)."""
    if memory is None or "dumped" not in memory:
        return memory
    from hloviz.analysis.memory.readers import from_dump_texts
    from hloviz.analysis.memory.records import RecordError

    try:
        return from_dump_texts(memory["dumped"], where=memory["where"], origin=memory["origin"]).to_dict()
    except RecordError:
        return None
