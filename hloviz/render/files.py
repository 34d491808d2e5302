"""Writing output files so that a failure or Ctrl-C never leaves half a file behind.

Each file is written to a temporary file in the same folder, flushed to disk, then renamed over
the target with :func:`os.replace` (atomic on POSIX and Windows). Until the rename, the old file
(if any) is untouched; if anything goes wrong — an exception, ``KeyboardInterrupt`` — the
temporary file is removed.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Mapping

from ..errors import RenderError

__all__ = ["write_atomic", "write_all"]


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_atomic(path: str | Path, data: bytes | str) -> Path:
    """Write ``data`` (str is UTF-8 encoded) to ``path`` atomically; creates missing folders.

    Raises :class:`RenderError` naming the path when the folder or file cannot be written.
    """
    target = Path(path)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    except OSError as err:
        raise RenderError(f"cannot write {target}: {err.strerror or err}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(payload)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, target)
    except BaseException as err:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(err, OSError):
            raise RenderError(f"cannot write {target}: {err.strerror or err}") from None
        raise
    return target


def write_all(files: Mapping[str | Path, bytes | str]) -> list[Path]:
    """Write several files, each atomically, in the given order (render everything first, then
    call this, so an error while rendering writes nothing at all)."""
    return [write_atomic(p, d) for p, d in files.items()]
