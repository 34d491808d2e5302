"""Writing output files so that a failure or Ctrl-C never leaves half a file behind.

Each file is written to a temporary file in the same folder, flushed to disk, then renamed over
the target with :func:`os.replace` (atomic on POSIX and Windows). Until the rename, the old file
(if any) is untouched; if anything goes wrong — an exception, ``KeyboardInterrupt`` — the
temporary file is removed.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import signal
import stat
import tempfile
import threading
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ...errors import InputError, RenderError, why_unwritable

__all__ = ["REPORT_FILES", "REPORT_RECORD", "ReportFolder", "foreign_files", "proven_files", "refuse_foreign",
           "write_atomic", "write_all", "write_report_folder"]


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
        raise RenderError(f"cannot write {target}: {why_unwritable(target, err)}") from None
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


#: The record ``hloviz show`` keeps in its output folder: each file it wrote → its SHA-256.
REPORT_RECORD = ".hloviz-report.json"

#: The only names ``hloviz show`` ever writes into a report folder, each with the mark its own
#: content carries in its first 4 KiB. A record is read for these names alone: whatever else
#: a record names (``thesis.tex``, ``../x``) is never replaced or removed, and a file of one of
#: these names that lacks hloviz's mark is the user's, whatever hash a record gives for it.
REPORT_FILES: Mapping[str, bytes] = {
    "report.html": b'<meta name="generator" content="hloviz">',
    **{f"{n}.svg": b"<title>hloviz</title>" for n in ("side-by-side", "pre", "post")},
    **{f"{n}.dot": b"digraph hloviz {" for n in ("side-by-side", "pre", "post")},
}

#: Bytes read of a record (a real one lists at most a dozen names) and of a file's head.
_RECORD_LIMIT = 1 << 20
_HEAD = 4096

_SIGNALS = tuple(getattr(signal, n) for n in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, n))


@contextlib.contextmanager
def _open_regular(path: Path) -> Iterator[int | None]:
    """A read-only descriptor of ``path`` when it is a plain file, else None — never blocking
    (a FIFO or a device planted under a report's name is not waited on, nor read) and never
    following a symlink."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        yield None
        return
    try:
        yield fd if stat.S_ISREG(os.fstat(fd).st_mode) else None
    finally:
        os.close(fd)


def _read_fd(fd: int, limit: int) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while size < limit:
        chunk = os.read(fd, min(1 << 20, limit - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def _own_content(path: Path, digests: Iterable[str]) -> bool:
    """``path`` is a plain file with hloviz's mark for its name and one of ``digests``."""
    mark = REPORT_FILES.get(path.name)
    if mark is None:
        return False
    with _open_regular(path) as fd:
        if fd is None:
            return False
        try:
            head = _read_fd(fd, _HEAD)
            if mark not in head:
                return False
            digest = hashlib.sha256(head)
            for block in iter(lambda: os.read(fd, 1 << 20), b""):
                digest.update(block)
        except OSError:
            return False
    return digest.hexdigest() in set(digests)


def _recorded(folder: Path) -> dict[str, list[str]]:
    """The record's ``name → [sha256, …]`` for the names in :data:`REPORT_FILES`; an unreadable
    or foreign record proves nothing."""
    try:
        with _open_regular(folder / REPORT_RECORD) as fd:
            data = json.loads(_read_fd(fd, _RECORD_LIMIT + 1)) if fd is not None else None
    except (OSError, ValueError, RecursionError):
        return {}
    files = data.get("files") if isinstance(data, dict) else None
    if not isinstance(files, dict):
        return {}
    out: dict[str, list[str]] = {}
    for name, digests in files.items():
        if name in REPORT_FILES and isinstance(digests, list):
            out[name] = [d for d in digests if isinstance(d, str)]
    return out


def proven_files(folder: Path) -> set[str]:
    """The files in ``folder`` that hloviz provably wrote: one of :data:`REPORT_FILES`, named in
    its record, a plain file with hloviz's mark and the very content it recorded (a file the
    user edited or replaced since is no longer hloviz's)."""
    return {name for name, digests in _recorded(folder).items() if _own_content(folder / name, digests)}


def foreign_files(folder: Path, names: Iterable[str]) -> list[str]:
    """Those of ``names`` that exist in ``folder`` but that hloviz cannot prove it wrote."""
    present = [n for n in names if (folder / n).is_symlink() or (folder / n).exists()]
    if not present:
        return []
    proven = proven_files(folder)
    return [n for n in present if n not in proven]


def refuse_foreign(folder: Path, names: Iterable[str]) -> None:
    """:class:`~hloviz.errors.InputError` when writing ``names`` would replace a file of the user's."""
    foreign = foreign_files(folder, names)
    if foreign:
        raise InputError(f"{folder} already holds {', '.join(foreign)}, which hloviz did not write (or which "
                         f"changed since it did); refusing to replace "
                         f"{'it' if len(foreign) == 1 else 'them'}",
                         hint="choose another -o folder, or move those files away yourself")


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """Hold Ctrl-C, SIGTERM and SIGHUP for the few renames that switch a file set, so a signal
    lands before or after the switch, never in the middle (only SIGKILL can split a set).

    Python runs signal handlers in the main thread, whatever thread the signal hit (TensorFlow
    and JAX start many), so the handlers are swapped for one that notes the signal; the first
    one noted is then delivered to the handler it was meant for.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    noted: list[tuple[int, object]] = []
    previous = {}
    for sig in _SIGNALS:
        try:
            previous[sig] = signal.signal(sig, lambda signum, frame: noted.append((signum, frame)))
        except (ValueError, OSError):
            pass
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if noted:
            signum, frame = noted[0]
            handler = previous.get(signum)
            if callable(handler):
                handler(signum, frame)
            elif handler == signal.SIG_DFL:
                os.kill(os.getpid(), signum)


def _record_text(files: Mapping[str, list[str]]) -> str:
    from ... import __version__

    body = {"written_by": f"hloviz {__version__}",
            "about": "the files hloviz show wrote here and their SHA-256; hloviz replaces or removes only these",
            "files": {n: files[n] for n in sorted(files)}}
    return json.dumps(body, indent=1) + "\n"


@dataclass(frozen=True)
class ReportFolder:
    """What :func:`write_report_folder` did: the files it wrote, and those of its own earlier
    runs it removed (so that the caller can say so)."""

    written: list[Path]
    removed: list[Path] = field(default_factory=list)


def write_report_folder(folder: str | Path, files: Mapping[str, bytes | str], *,
                        remove_stale: bool = True) -> ReportFolder:
    """Write ``files`` (names → contents, each one of :data:`REPORT_FILES`) into ``folder`` as
    one set, the way ``hloviz show`` does.

    The rule: hloviz replaces or deletes a file only if it can prove it wrote it — its name is
    one hloviz writes (:data:`REPORT_FILES`), it carries hloviz's mark, and the folder's record
    (:data:`REPORT_RECORD`) names it with its current SHA-256. A file of the user's in the way
    is refused (:class:`~hloviz.errors.InputError`, nothing written). With
    ``remove_stale``, hloviz's own files from an earlier run that this run does not write (say
    ``pre.svg`` of another target) are removed, so the folder never mixes two runs. Every file
    is written to a temporary file first; the renames that switch the set happen with signals
    held; the record lists old and new contents while the switch is under way, so even a crash
    leaves every file provably hloviz's.
    """
    out = Path(folder)
    unknown = sorted(set(files) - set(REPORT_FILES))
    if unknown:
        raise ValueError(f"hloviz show writes only {', '.join(REPORT_FILES)}, not {', '.join(unknown)}")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise RenderError(f"cannot write {out}: {why_unwritable(out, err, folder=True)}") from None
    refuse_foreign(out, files)
    record = _recorded(out)
    proven = proven_files(out)
    stale = sorted(proven - set(files)) if remove_stale else []
    payloads = {n: (d.encode("utf-8") if isinstance(d, str) else d) for n, d in files.items()}
    digests = {n: hashlib.sha256(d).hexdigest() for n, d in payloads.items()}
    kept = {n: record[n] for n in proven if n not in payloads and n not in stale}
    during = {**kept, **{n: sorted(set(record.get(n, [])) | {digests[n]}) for n in payloads},
              **{n: record[n] for n in stale}}
    after = {**kept, **{n: [digests[n]] for n in payloads}}
    temps: list[tuple[str, str]] = []
    try:
        for name, data in payloads.items():
            temps.append((_write_temp(out / name, data), name))
        temps.append((_write_temp(out / REPORT_RECORD, _record_text(after).encode("utf-8")), REPORT_RECORD))
        with _signals_held():
            write_atomic(out / REPORT_RECORD, _record_text(during))
            for tmp, name in temps:
                os.replace(tmp, out / name)
            temps = []
            for name in stale:
                with contextlib.suppress(FileNotFoundError):
                    (out / name).unlink()
    except OSError as err:
        raise RenderError(f"cannot write {out}: {err.strerror or err}") from None
    finally:
        for tmp, _ in temps:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
    return ReportFolder([out / n for n in payloads], [out / n for n in stale])


def _write_temp(target: Path, payload: bytes) -> str:
    """``payload`` in a flushed temporary file beside ``target``; its path."""
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(payload)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o666 & ~_umask())
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return tmp
