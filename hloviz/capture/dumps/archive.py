"""A tar archive of an XLA dump folder, unpacked as untrusted input.

``hloviz passes x.tar`` (and ``show``, ``versions --passes``) reads archives anyone may have
made, so the archive decides nothing about where hloviz writes:

* only regular files are unpacked — never links, devices, FIFOs or folders — and each under its
  own base name, flat, into a private temporary folder (mode 0700) that hloviz made;
* a member whose name is absolute (``/x``, ``//x``) or has a ``..`` part is refused: the archive
  is not a dump folder hloviz reads, and the message names the member (tarfile's ``data``
  filter, where Python has it, checks each file as well);
* the dump folder inside the archive is the folder of its first ``module_*`` file, however it
  was packed: flat (``tar czf d.tgz module_*``), one top folder (``tar czf d.tgz dumpdir``) or
  ``./`` prefixes (``tar czf d.tgz -C dumpdir .``). ``module_*`` files in a second folder are
  refused (two dumps in one archive);
* every byte the archive unpacks to — headers, skipped members and padding included — counts
  against ``--max-input`` (:func:`hloviz.inputs.max_input`), measured after decompression as the
  tar stream is read, so a small ``.tar.gz`` holding gigabytes of zeros stops at the limit; a
  member that claims more than what is left of it is refused before a byte of it is read;
* at most :data:`MAX_MEMBERS` members; a negative size (a PAX ``size=-1536``, which makes
  Python 3.11's tarfile read the same header forever) is refused, and members are read in one
  forward pass (tarfile's stream mode: it can never go back to an earlier header).

Messages name the archive (``x.tar:module_…txt`` for a member), never the temporary folder,
which is gone by the time they are printed.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import os
import shutil
import tarfile
import tempfile
import zlib
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import BinaryIO

from hloviz.errors import HlovizError, InputError, visible

__all__ = ["MAX_MEMBERS", "rename_folder", "unpacked_dump"]

#: The most members hloviz reads from one archive (a real per-pass dump of a training step holds
#: a few thousand files; 100,000 empty members are 51 MB of headers).
MAX_MEMBERS = 100_000

#: How an archive's first bytes say it is compressed, and how to read it decompressed.
_MAGIC: tuple[tuple[bytes, Callable[[BinaryIO], BinaryIO]], ...] = (  # each closed by the caller's ExitStack
    (b"\x1f\x8b", lambda f: gzip.GzipFile(fileobj=f, mode="rb")),  # type: ignore[arg-type, return-value]
    (b"\xfd7zXZ\x00", lambda f: lzma.LZMAFile(f)),  # type: ignore[return-value]  # noqa: SIM115
    (b"BZh", lambda f: bz2.BZ2File(f)),  # type: ignore[return-value]
)


class _OverBudget(InputError):
    """The archive unpacks to more than ``--max-input``."""


class _Counted:
    """The archive's decompressed bytes, counted as tarfile reads them; past ``limit``, an error."""

    def __init__(self, stream: BinaryIO, limit: int, path: Path) -> None:
        self._stream, self.limit, self.count, self._path = stream, limit, 0, path

    def read(self, size: int = -1) -> bytes:
        data = self._stream.read(size if 0 <= size <= self.left + 1 else self.left + 1)
        self.count += len(data)
        if self.count > self.limit:
            raise _over(self._path, self.limit)
        return data

    @property
    def left(self) -> int:
        return max(0, self.limit - self.count)


def _human(n: int) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:g} {unit}"
    return f"{n} bytes"


def _over(path: Path, limit: int, what: str = "") -> _OverBudget:
    return _OverBudget(f"{path} unpacks to more than {_human(limit)} (--max-input){what}; hloviz stops there so "
                       "that a small archive cannot fill the disk or the memory",
                       hint=f"if the archive is what you meant, raise the limit: hloviz --max-input "
                            f"{_human(limit * 4).replace(' ', '')} COMMAND …, or unpack it yourself and give the folder")


def _shown(name: str) -> str:
    text = visible(name if len(name) <= 200 else name[:200] + "…")
    return repr(text)


def _parts(path: Path, name: str) -> list[str]:
    """The member's path as folder parts and base name; refuses names that leave the folder."""
    if "\x00" in name:
        raise InputError(f"{path}: the member {_shown(name)} has a NUL character in its name")
    if name.startswith(("/", "\\")) or (len(name) > 1 and name[1] == ":" and name[0].isalpha()):
        raise InputError(f"{path}: the member {_shown(name)} has an absolute name; hloviz reads only an archive of "
                         "a dump folder, whose members are named inside it",
                         hint="pack the folder with: tar czf dump.tgz -C DUMP_DIR .")
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise InputError(f"{path}: the member {_shown(name)} names a place outside the archive's folder (..)",
                         hint="pack the folder with: tar czf dump.tgz -C DUMP_DIR .")
    return parts


def _check_file(member: tarfile.TarInfo, base: str, folder: Path, path: Path) -> None:
    """tarfile's own ``data`` filter (Python 3.11.4+), on the member as hloviz writes it."""
    check = getattr(tarfile, "data_filter", None)
    if check is None:
        return
    try:
        check(member.replace(name=base, deep=False), str(folder))
    except tarfile.FilterError as err:
        raise InputError(f"{path}: the member {_shown(member.name)} cannot be unpacked safely "
                         f"({type(err).__name__})") from None


def _unpack(path: Path, folder: Path, limit: int) -> None:
    """Unpack the dump folder in ``path`` into ``folder``, as the module docstring says."""
    try:
        with ExitStack() as stack:
            raw = stack.enter_context(open(path, "rb"))
            head = raw.read(6)
            raw.seek(0)
            stream: BinaryIO = raw
            for magic, opener in _MAGIC:
                if head.startswith(magic):
                    stream = stack.enter_context(opener(raw))
            counted = _Counted(stream, limit, path)
            tar = stack.enter_context(tarfile.open(fileobj=counted, mode="r|"))  # type: ignore[call-overload]
            _members(tar, counted, path, folder)
    except HlovizError:
        raise
    except (tarfile.TarError, EOFError, zlib.error, lzma.LZMAError, OSError) as err:
        reason = err.strerror if isinstance(err, OSError) and err.strerror else str(err)
        raise InputError(f"{path} is not a readable tar archive: {reason}") from None


def _members(tar: tarfile.TarFile, counted: _Counted, path: Path, folder: Path) -> None:
    """Read the members in one forward pass; write the dump folder's files flat into ``folder``."""
    dump_dir: str | None = None
    count, last = 0, -1
    while True:
        member = tar.next()
        if member is None:
            return
        # one member at a time in memory, whatever their number (tarfile keeps a list of those read)
        tar.members.clear()  # pyright: ignore[reportAttributeAccessIssue]
        count += 1
        if count > MAX_MEMBERS:
            raise InputError(f"{path} holds more than {MAX_MEMBERS:,} members; a dump folder has far fewer",
                             hint="unpack it yourself and give the dump folder")
        if member.size < 0 or member.offset <= last:
            raise InputError(f"{path}: the member {_shown(member.name)} has an impossible size ({member.size}); "
                             "the archive is damaged or forged")
        last = member.offset
        if member.size > counted.left:
            raise _over(path, counted.limit, f": its member {_shown(member.name)} alone claims {_human(member.size)}")
        parts = _parts(path, member.name)
        if not member.isreg() or member.issparse() or not parts or not parts[-1].startswith("module_"):
            continue  # its bytes are read (and counted) by the next tar.next()
        where, base = "/".join(parts[:-1]), parts[-1]
        if dump_dir is None:
            dump_dir = where
        elif where != dump_dir:
            raise InputError(f"{path} holds dump files in two folders, {_shown(dump_dir + '/')} and "
                             f"{_shown(where + '/')}; hloviz reads an archive of one dump folder",
                             hint="unpack it yourself and give hloviz one of the folders")
        _check_file(member, base, folder, path)
        _write(tar, member, folder / base, path)


def _write(tar: tarfile.TarFile, member: tarfile.TarInfo, dest: Path, path: Path) -> None:
    source = tar.extractfile(member)
    if source is None:
        return
    try:
        fd = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    except OSError as err:
        raise InputError(f"cannot unpack {path}:{visible(member.name)}: {err.strerror or err}") from None
    with source, os.fdopen(fd, "wb") as out:
        shutil.copyfileobj(source, out)


def rename_folder(err: HlovizError, folder: Path, name: str, *, member: Callable[[str], str]) -> None:
    """Where ``err``'s message names the temporary ``folder`` (or a file in it), name ``name``
    instead (a file ``F`` in it as ``member(F)``): the folder is removed before the message is
    printed, and its random name would tell the user nothing."""
    prefix = f"{folder}{os.sep}"

    def fix(text: str) -> str:
        out, i = [], 0
        while (j := text.find(prefix, i)) >= 0:
            k = j + len(prefix)
            end = k
            while end < len(text) and not text[end].isspace() and text[end] not in ":'\",)":
                end += 1
            out.append(text[i:j] + member(text[k:end]))
            i = end
        return ("".join(out) + text[i:]).replace(str(folder), name)

    err.args = tuple(fix(a) if isinstance(a, str) else a for a in err.args)
    if err.hint:
        err.hint = fix(err.hint)


@contextmanager
def unpacked_dump(path: Path) -> Iterator[Path]:
    """The dump folder in the tar archive ``path``, unpacked (see the module docstring) into a
    private temporary folder that is removed when the block ends. An hloviz error raised in the
    block has the temporary folder's name replaced by the archive's."""
    from hloviz.inputs import max_input

    folder = Path(tempfile.mkdtemp(prefix="hloviz-passes-"))
    try:
        _unpack(path, folder, max_input())
        yield folder
    except HlovizError as err:
        rename_folder(err, folder, str(path), member=lambda name: f"{path}:{name}")
        raise
    finally:
        shutil.rmtree(folder, ignore_errors=True)
