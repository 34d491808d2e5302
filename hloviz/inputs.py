"""Reading input files with bounded memory: plain, ``.gz``, ``.xz`` and ``.bz2``.

A compressed file of a megabyte can inflate to gigabytes (a "decompression bomb"). Every file
hloviz reads (HLO text, ``capture.json``) goes through :func:`read_bytes`, which decompresses
as a stream and stops at :func:`max_input` bytes of content — 256 MiB unless raised with the
global ``--max-input`` option (``hloviz --max-input 2GiB stats big.hlo.gz``) or the
``HLOVIZ_MAX_INPUT`` environment variable. A corrupt or truncated archive is an
:class:`~hloviz.errors.InputError` saying so, never a traceback.

Stdlib only (the ``errors`` layer): the parser and the capture readers both use it.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import os
import re
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from .errors import InputError

__all__ = ["COMPRESSED", "DEFAULT_MAX_INPUT", "max_input", "parse_size", "read_bytes", "set_max_input"]

#: Bytes of content hloviz reads from one file unless told otherwise (256 MiB: six times the
#: largest real module measured, a 312k-instruction training step of 42.7 MB).
DEFAULT_MAX_INPUT = 256 * 1024 * 1024

#: Suffix → how to open it as a stream of its decompressed bytes.
#: (The ignores: the stubs type GzipFile, LZMAFile and BZ2File as binary streams that are not
#: the nominal ``typing.BinaryIO``, though each provides its interface.)
COMPRESSED: dict[str, Callable[[Path], BinaryIO]] = {
    ".gz": lambda p: gzip.open(p, "rb"),  # type: ignore[dict-item]  # noqa: SIM115 - the caller closes it
    ".xz": lambda p: lzma.open(p, "rb"),  # type: ignore[dict-item]  # noqa: SIM115 - the caller closes it
    ".bz2": lambda p: bz2.open(p, "rb"),  # type: ignore[dict-item]  # noqa: SIM115 - the caller closes it
}

_CHUNK = 1 << 20
_UNITS = {"": 1, "b": 1, "k": 1000, "kb": 1000, "kib": 1024, "m": 1000**2, "mb": 1000**2, "mib": 1024**2,
          "g": 1000**3, "gb": 1000**3, "gib": 1024**3, "t": 1000**4, "tb": 1000**4, "tib": 1024**4}
_SIZE = re.compile(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([a-zA-Z]*)\s*\Z", re.ASCII)
#: Limits from 2^63 bytes up are refused (more than any disk holds; 2^63-1 fits an int64).
_MOST = 1 << 63
_limit: int | None = None


def parse_size(text: str, *, source: str = "--max-input") -> int:
    """``"512MiB"``, ``"2GB"``, ``"1000000"`` → bytes; :class:`InputError` naming ``source``
    (the option or environment variable it came from) for anything else."""
    m = _SIZE.match(text)
    unit = m.group(2).lower() if m else ""
    shown = text if len(text) <= 40 else f"{text[:40]}… ({len(text)} characters)"
    if m is None or unit not in _UNITS:
        raise InputError(f"{source}: {shown!r} is not a size", hint="write it like 512MiB, 2GiB or 800MB")
    whole, _, fraction = m.group(1).partition(".")
    if len(whole.lstrip("0")) > 20:  # before any arithmetic: a 400-digit number is not a size
        raise InputError(f"{source}: {shown!r} is more than hloviz can count (at most 2^63-1 bytes)")
    import fractions

    size = int(fractions.Fraction(f"{whole}.{fraction[:30] or '0'}") * _UNITS[unit])
    if size <= 0:
        raise InputError(f"{source} must be more than 0 bytes, not {shown!r}")
    if size >= _MOST:
        raise InputError(f"{source}: {shown!r} is more than hloviz can count (at most 2^63-1 bytes)")
    return size


def set_max_input(size: int | str | None) -> None:
    """Set the limit for this process (``None``: back to the default or ``HLOVIZ_MAX_INPUT``)."""
    global _limit
    _limit = parse_size(size) if isinstance(size, str) else size


def max_input() -> int:
    """The most bytes of content hloviz reads from one file."""
    if _limit is not None:
        return _limit
    env = os.environ.get("HLOVIZ_MAX_INPUT")
    return parse_size(env, source="HLOVIZ_MAX_INPUT") if env else DEFAULT_MAX_INPUT


def _human(n: int) -> str:
    for unit, size in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if n >= size:
            return f"{n / size:g} {unit}"
    return f"{n} bytes"


def read_bytes(path: str | Path, *, what: str = "HLO text") -> bytes:
    """The content of ``path``, decompressed by its suffix, at most :func:`max_input` bytes.

    Memory stays bounded by the content read (chunks joined once), so a bomb costs at most
    the limit. Raises :class:`InputError` when the file is missing, a folder, unreadable,
    corrupt or truncated, or larger than the limit (naming ``--max-input``).
    """
    p = Path(path)
    if not p.exists():
        raise InputError(f"file not found: {p} (no such file)")
    if p.is_dir():
        raise InputError(f"{p} is a folder, not a file of {what}")
    limit = max_input()
    opener = COMPRESSED.get(p.suffix.lower())
    kind = f"{p.suffix[1:]}-compressed " if opener else ""
    chunks: list[bytes] = []
    size = 0
    try:
        with (opener(p) if opener else open(p, "rb")) as f:
            while size <= limit:
                chunk = f.read(min(_CHUNK, limit + 1 - size))
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
    except EOFError:
        raise InputError(f"{p}: the {kind}file is truncated (it ends in the middle of its data)",
                         hint="copy or download it again") from None
    except (lzma.LZMAError, zlib.error, gzip.BadGzipFile) as err:
        raise InputError(f"{p}: not a valid {kind}file ({err})", hint="check the file, or its suffix") from None
    except OSError as err:
        if opener and not isinstance(err, (FileNotFoundError, PermissionError, IsADirectoryError)):
            raise InputError(f"{p}: not a valid {kind}file ({err})", hint="check the file, or its suffix") from None
        raise InputError(f"cannot read {p}: {err.strerror or err}") from None
    if size > limit:
        raise InputError(f"{p} holds more than {_human(limit)} of {what}{' once decompressed' if opener else ''}; "
                         f"hloviz stops there so that a huge or hostile file cannot fill the memory",
                         hint=f"if the file is what you meant, raise the limit: hloviz --max-input "
                              f"{_human(limit * 4).replace(' ', '')} COMMAND … (or HLOVIZ_MAX_INPUT)")
    return b"".join(chunks)
