"""Tar archives of a pass history (``passes``/``show``/``versions --passes`` on ``.tar``,
``.tar.gz``, ``.tgz``) are untrusted input: each test here builds the hostile archive itself.

What must hold: no file is written outside hloviz's own temporary folder whatever the member
names (watched with an audit hook on every open for writing, mkdir, rename, link, removal);
a negative or absurd member size and a flood of members end in a clear error quickly; the
``--max-input`` budget counts every byte unpacked, skipped members included; the ways people
archive a dump folder (flat, one top folder, ``./`` prefixes; a folder of snapshots only) all
read; no message names hloviz's deleted temporary folder.

The snapshots come from samples/captures/passes/jax_mlp.tar.xz (what XLA wrote), read with
tarfile's ``data`` filter; the expected counts come from their file names, read with a regex.
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import zlib
from pathlib import Path

import pytest

from tests import run_cli

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "samples" / "captures" / "passes" / "jax_mlp.tar.xz"
#: A snapshot's file name (the oracle): module, index, and whether it was written between passes.
_SNAPSHOT = re.compile(r"^module_\d+\.jit_mlp\.(\d{4})\.[^.]+\.(after_[^.]+\.before_[^.]+|[^.]+)\.txt$")


def sample_files() -> list[tuple[str, bytes]]:
    """(name, content) of every file of the sample dump, in the archive's order."""
    out = []
    with tarfile.open(SAMPLE) as tar:
        for m in tar:
            f = tar.extractfile(m)
            if f is not None:
                out.append((m.name, f.read()))
    return out


def add(tar: tarfile.TarFile, name: str, data: bytes = b"", **fields) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    for key, value in fields.items():
        setattr(info, key, value)
    tar.addfile(info, io.BytesIO(data))


def make_tar(path: Path, members: list[tuple[str, bytes]]) -> Path:
    with tarfile.open(path, "w", format=tarfile.PAX_FORMAT) as tar:
        for name, data in members:
            add(tar, name, data)
    return path


# --- the watcher: every write of this process, while a command runs --------------------------

_WATCH: dict = {}
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


def _where(path, dir_fd=None) -> str | None:
    if isinstance(path, int) or path is None:
        return None
    text = os.fsdecode(path)
    if dir_fd is not None and not os.path.isabs(text):
        text = os.path.join(os.readlink(f"/proc/self/fd/{dir_fd}"), text)
    return os.path.normpath(os.path.abspath(text))


def _hook(event: str, args: tuple) -> None:
    if "allowed" not in _WATCH:
        return
    where: list[str | None] = []
    if event == "open" and ((args[2] is not None and args[2] & _WRITE_FLAGS)
                            or (isinstance(args[1], str) and set(args[1]) & set("wax+"))):
        where.append(_where(args[0]))
    elif event in ("os.mkdir", "os.remove", "os.rmdir", "os.truncate"):
        where.append(_where(args[0], args[-1] if event != "os.truncate" else None))
    elif event in ("os.rename", "os.link"):
        where.append(_where(args[1], args[3]))
    elif event == "os.symlink":
        where.append(_where(args[1], args[2]))
    for w in where:
        if w is None or w == os.devnull or "__pycache__" in w.split(os.sep):
            continue
        if not any(w == r or w.startswith(r + os.sep) for r in _WATCH["allowed"]):
            _WATCH["outside"].append((event, w))
            raise PermissionError(f"test: hloviz wrote outside its folders: {w}")  # and nothing is written


class Watch:
    """hloviz's temporary folder (``tempfile.tempdir``) and, while ``with`` it, every write made
    outside that folder and ``tmp_path/out``, gathered in ``outside``; such writes fail."""

    def __init__(self, temp: Path, out: Path) -> None:
        self.temp, self.out, self.outside = temp, out, []

    def __enter__(self) -> Watch:  # noqa: PYI034 - the test's own class, never subclassed
        _WATCH.update(allowed=[str(self.temp), str(self.out)], outside=self.outside)
        return self

    def __exit__(self, *_exc) -> None:
        _WATCH.pop("allowed", None)


@pytest.fixture
def watched(tmp_path, monkeypatch) -> Watch:
    if not _WATCH.get("installed"):
        sys.addaudithook(_hook)
        _WATCH["installed"] = True
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr("tempfile.tempdir", str(temp))
    return Watch(temp, tmp_path / "out")


def _no_temp_named(err: str, temp: Path) -> None:
    assert str(temp) not in err and "hloviz-passes-" not in err, err


# --- 1. member names: absolute, .., outside ---------------------------------------------------

_HOSTILE_NAMES = ["/module_0002.jit_mlp.0099.p.after_a.before_b.txt", "/.hloviz-test-x", "../module_0002.jit_mlp.x.txt",
                  "dump/../../module_0002.jit_mlp.y.txt", "./../.hloviz-test-y", "//module_0002.jit_mlp.z.txt"]


@pytest.mark.parametrize("name", _HOSTILE_NAMES)
@pytest.mark.parametrize("command", ["passes", "show", "versions"])
def test_a_member_named_outside_the_folder_is_refused_and_nothing_is_written_outside(tmp_path, capsys, watched,
                                                                                      name, command):
    archive = make_tar(tmp_path / "hostile.tar", [*sample_files(), (name, b"HloModule evil\n")])
    args = {"passes": ["passes", str(archive)], "show": ["show", str(archive), "-o", str(tmp_path / "out")],
            "versions": ["versions", str(archive), str(archive), "--passes"]}[command]
    with watched:
        code, _, err = run_cli(args, capsys)
    assert watched.outside == []
    temp = watched.temp
    assert code == 2, err
    assert "Traceback" not in err and "internal error" not in err
    assert str(archive) in err and repr(name) in err, err
    assert list(temp.iterdir()) == []  # its own folder is gone too
    _no_temp_named(err, temp)


def test_links_devices_and_fifos_in_an_archive_are_never_made(tmp_path, capsys, watched):
    files = sample_files()
    before = next(n for n, _ in files if n.endswith("before_optimizations.txt"))
    archive = tmp_path / "links.tar"
    with tarfile.open(archive, "w") as tar:
        add(tar, "module_0002.jit_mlp.0098.p.after_a.before_b.txt", type=tarfile.SYMTYPE, linkname="/etc/passwd")
        add(tar, "module_0002.jit_mlp.0097.p.after_a.before_b.txt", type=tarfile.LNKTYPE, linkname="/etc/passwd")
        add(tar, "module_0002.jit_mlp.fifo.txt", type=tarfile.FIFOTYPE)
        add(tar, "module_0002.jit_mlp.dev.txt", type=tarfile.CHRTYPE, devmajor=1, devminor=3)
        for name, data in files:
            add(tar, name, data)
        add(tar, before, type=tarfile.SYMTYPE, linkname="/etc/shadow")  # a later link over a real file
    with watched:
        code, out, err = run_cli(["passes", str(archive), "--json"], capsys)
    assert watched.outside == []
    assert code in (0, None), err
    data = json.loads(out)
    indices = [s["index"] for s in data["snapshots"]]
    expected = sorted(int(m.group(1)) for n, _ in files if (m := _SNAPSHOT.match(n)))
    assert indices == expected  # the links are not snapshots 97 and 98


# --- 2. negative and absurd sizes ---------------------------------------------------------------

def _run_process(*args: str, timeout: float = 120, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "hloviz", *args], capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})})


@pytest.mark.parametrize("size", ["-1536", "-1", "99999999999999999999"])
def test_a_member_with_a_negative_or_absurd_size_is_one_clear_error(tmp_path, size):
    """Python 3.11's tarfile moves back to an earlier header on a PAX ``size=-1536`` and returns
    the same member forever; hloviz must end (the ceiling is generous: a loop never ends)."""
    archive = tmp_path / "size.tar"
    files = sample_files()
    with tarfile.open(archive, "w", format=tarfile.PAX_FORMAT) as tar:
        add(tar, *files[0])
        info = tarfile.TarInfo(files[1][0])
        info.size = len(files[1][1])
        info.pax_headers = {"size": size}
        tar.addfile(info, io.BytesIO(files[1][1]))
        for name, data in files[2:]:
            add(tar, name, data)
    try:
        done = _run_process("passes", str(archive), timeout=120)
    except subprocess.TimeoutExpired:
        pytest.fail("hloviz passes did not end on a member with a negative size")
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert str(archive) in done.stderr and files[1][0] in done.stderr, done.stderr
    assert "size" in done.stderr or "--max-input" in done.stderr


# --- 3. the budget counts every byte unpacked --------------------------------------------------

def _gzip_tar_with_zeros(path: Path, name: str, zeros: int, files: list[tuple[str, bytes]], *,
                         truncate: bool = False) -> Path:
    """A .tar.gz whose first member ``name`` holds ``zeros`` zero bytes (compressed a chunk at a
    time: a few hundred KB on disk), then ``files``; ``truncate`` ends it after 16 MiB of zeros."""
    info = tarfile.TarInfo(name)
    info.size = zeros
    comp = zlib.compressobj(1, zlib.DEFLATED, 31)
    with open(path, "wb") as out:
        out.write(comp.compress(info.tobuf(tarfile.PAX_FORMAT)))
        left = zeros if not truncate else 16 << 20
        chunk = bytes(1 << 20)
        while left > 0:
            out.write(comp.compress(chunk[:min(left, len(chunk))]))
            left -= len(chunk)
        if not truncate:
            out.write(comp.compress(bytes(-zeros % 512)))
            buf = io.BytesIO()
            with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
                for n, data in files:
                    add(tar, n, data)
            out.write(comp.compress(buf.getvalue()))
        out.write(comp.flush())
    return path


@pytest.mark.parametrize("skipped", ["notes/zeros.bin", "zeros.bin", "other/module_9.zeros.txt"])
def test_a_skipped_member_counts_against_max_input(tmp_path, capsys, watched, skipped):
    files = sample_files()
    assert sum(len(d) for _, d in files) < 512 << 10  # the dump alone fits the limit below
    archive = _gzip_tar_with_zeros(tmp_path / "bomb.tar.gz", skipped, 64 << 20, files)
    assert archive.stat().st_size < 2 << 20
    with watched:
        code, _, err = run_cli(["--max-input", "1MiB", "passes", str(archive)], capsys)
    assert watched.outside == []
    assert code == 2, err
    assert "--max-input" in err and str(archive) in err and "Traceback" not in err


def test_a_member_claiming_more_than_the_budget_stops_before_reading_it(tmp_path, capsys, watched):
    """A 2 GiB member in a .tar.gz cut after 16 MiB: hloviz refuses it by its claimed size (no
    reading to the end, which would also fail, as a truncated archive)."""
    archive = _gzip_tar_with_zeros(tmp_path / "big.tar.gz", "notes/zeros.bin", 2 << 30, [], truncate=True)
    with watched:
        code, _, err = run_cli(["passes", str(archive)], capsys)
    assert code == 2, err
    assert "--max-input" in err and "notes/zeros.bin" in err, err


# --- 4. a member-count limit -----------------------------------------------------------------

@pytest.mark.slow
def test_a_flood_of_empty_members_is_refused(tmp_path, capsys, watched):
    """100,001 empty members (51 MB of headers, 90 KB gzipped): over the documented limit of
    100,000 members; refused with that number, and hloviz's folder holds nothing after."""
    header = tarfile.TarInfo("e/0000000").tobuf(tarfile.USTAR_FORMAT)
    comp = zlib.compressobj(6, zlib.DEFLATED, 31)
    path = tmp_path / "flood.tar.gz"
    with open(path, "wb") as out:
        for i in range(100_001):
            name = f"e/{i:07d}".encode()
            block = bytearray(header)
            block[:len(name)] = name
            block[148:156] = b"        "
            block[148:156] = b"%06o\0 " % sum(block)
            out.write(comp.compress(bytes(block)))
        out.write(comp.compress(bytes(1024)))
        out.write(comp.flush())
    with watched:
        code, _, err = run_cli(["passes", str(path)], capsys)
    assert code == 2, err
    assert "100,000" in err and "members" in err and str(path) in err, err
    assert list(watched.temp.iterdir()) == [] and watched.outside == []
    safety = (ROOT / "docs" / "safety.md").read_text()
    assert re.search(r"members of an archive.*100,000", safety), "the limit is documented in docs/safety.md"


# --- 5. the usual layouts, and messages --------------------------------------------------------

def _dump(where: Path) -> Path:
    with tarfile.open(SAMPLE) as tar:
        tar.extractall(where, filter="data")
    return where


def _history(capsys, target: str) -> dict:
    code, out, err = run_cli(["passes", target, "--json"], capsys)
    assert code in (0, None), err
    data = json.loads(out)
    data.pop("source")
    return data


@pytest.mark.parametrize("layout", ["top folder", "dot prefix", "flat", "nested top folder", "gnu tar top folder",
                                    "gnu tar dot"])
def test_the_usual_ways_to_archive_a_dump_folder_all_read(tmp_path, capsys, layout):
    dump = _dump(tmp_path / "dumpdir")
    expected = _history(capsys, str(dump))
    archive = tmp_path / "d.tgz"
    if layout.startswith("gnu tar"):
        if shutil.which("tar") is None:
            pytest.skip("no tar program")
        cmd = ["tar", "czf", str(archive), "dumpdir"] if layout.endswith("folder") else \
            ["tar", "czf", str(archive), "-C", "dumpdir", "."]
        subprocess.run(cmd, cwd=tmp_path, check=True)
    else:
        with tarfile.open(archive, "w:gz") as tar:
            if layout == "flat":
                for p in sorted(dump.iterdir()):
                    tar.add(p, arcname=p.name)
            else:
                tar.add(dump, arcname={"top folder": "dumpdir", "dot prefix": ".",
                                       "nested top folder": "runs/2024/dumpdir"}[layout])
    assert _history(capsys, str(archive)) == expected
    assert expected["snapshots"]


@pytest.mark.parametrize("packed", [False, True])
def test_a_folder_of_between_pass_snapshots_only_is_read(tmp_path, capsys, packed):
    """What ``--xla_dump_hlo_pass_re=fusion``-style dumps leave: snapshots, no stage files."""
    dump = _dump(tmp_path / "full")
    only = tmp_path / "only"
    only.mkdir()
    kept = []
    for p in dump.iterdir():
        m = _SNAPSHOT.match(p.name)
        if m and m.group(2).startswith("after_"):
            shutil.copy(p, only / p.name)
            kept.append(int(m.group(1)))
    assert len(kept) > 10
    target = only
    if packed:
        target = tmp_path / "only.tar"
        with tarfile.open(target, "w") as tar:
            tar.add(only, arcname=".")
    code, out, err = run_cli(["passes", str(target), "--json"], capsys)
    assert code in (0, None), err
    assert [s["index"] for s in json.loads(out)["snapshots"]] == sorted(kept)


def test_an_archive_of_two_dump_folders_is_refused_naming_both(tmp_path, capsys, watched):
    files = sample_files()
    archive = make_tar(tmp_path / "two.tar", [*((f"a/{n}", d) for n, d in files), *((f"b/{n}", d) for n, d in files)])
    with watched:
        code, _, err = run_cli(["passes", str(archive)], capsys)
    assert code == 2, err
    assert "a/" in err and "b/" in err and str(archive) in err


def test_messages_about_an_archive_name_the_archive_never_the_temporary_folder(tmp_path, capsys, watched):
    temp = watched.temp
    files = sample_files()
    # two modules: "pick one with --module" lists them, naming where they are
    second = [(n.replace("module_0002", "module_0003"), d) for n, d in files]
    two = make_tar(tmp_path / "two-modules.tar", [*files, *second])
    # a broken stage file: the parse error names the archive and the member
    broken = make_tar(tmp_path / "broken.tar", [
        (n, b"HloModule m\n\nENTRY e {\n  p = f32[ parameter(0)\n}\n" if "before_optimizations" in n else d)
        for n, d in files])
    # a snapshot that cannot be read: the step's reason names the file, not where it was unpacked
    bad = make_tar(tmp_path / "bad-snapshot.tar",
                   [(n + ".gz" if ".0005." in n else n, b"not gzip" if ".0005." in n else d) for n, d in files])
    with watched:
        code, _, err = run_cli(["passes", str(two)], capsys)
        assert code == 2 and "--module" in err, err
        assert str(two) in err
        _no_temp_named(err, temp)
        code, _, err = run_cli(["versions", str(two), str(two), "--passes"], capsys)
        assert code == 2 and "--module" in err, err
        _no_temp_named(err, temp)
        for args in (["passes", str(broken)], ["show", str(broken), "-o", str(tmp_path / "out")],
                     ["versions", str(broken), str(broken), "--passes"]):
            code, _, err = run_cli(args, capsys)
            assert code == 2, err
            assert f"{broken}:module_0002.jit_mlp.before_optimizations.txt" in err, err
            _no_temp_named(err, temp)
        code, out, err = run_cli(["passes", str(bad), "--json", "--all"], capsys)
        assert code in (0, None), err
        _no_temp_named(out + err, temp)
        assert ".0005." in out and "gz" in out
    assert watched.outside == []
