"""Nothing the user had is lost: hloviz deletes or replaces only what it can prove it wrote.

Capture folders (``dump -o DIR``): replaced only when they hold exactly hloviz's file set with
its stamped capture.json. Report folders (``show -o DIR``): a file is replaced only when the
folder's record names it with its current SHA-256. A ``.dot`` beside a failed picture replaces
only hloviz's own DOT text. Each test builds the user's folder that hloviz used to destroy.
"""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pytest

from hloviz.capture import Capture, save_capture
from hloviz.render.page.files import REPORT_RECORD, write_report_folder

from . import run_cli as _run
from .test_render_graphviz import fake_dot

ROOT = Path(__file__).resolve().parent.parent
SEED = ROOT / "samples" / "captures" / "fused_additions"


def _tree(folder: Path) -> dict[str, bytes | None]:
    """Every path under ``folder`` → its bytes (None for folders, the target for links)."""
    out: dict[str, bytes | None] = {}
    for p in sorted(folder.rglob("*")):
        rel = str(p.relative_to(folder))
        out[rel] = os.readlink(p).encode() if p.is_symlink() else (p.read_bytes() if p.is_file() else None)
    return out


def _user_project(folder: Path, stray: str = "pre.hlo") -> Path:
    (folder / "src").mkdir(parents=True)
    (folder / "thesis.tex").write_text("\\chapter{Three years of work}\n")
    (folder / "src" / "main.c").write_text("int main(void) { return 0; }\n")
    (folder / stray).write_text("my own notes, not HLO\n")
    return folder


@pytest.mark.parametrize("stray", ["pre.hlo", "post.hlo", "capture.json"])
def test_dump_never_replaces_a_users_folder_holding_one_capture_file_name(tmp_path, capsys, stray):
    proj = _user_project(tmp_path / "proj", stray)
    before = _tree(proj)
    code, out, err = _run(["dump", str(SEED), "-o", str(proj)], capsys)
    assert code == 2, (out, err)
    assert "refusing to overwrite" in err and "Traceback" not in err
    assert _tree(proj) == before
    assert sorted(os.listdir(tmp_path)) == ["proj"], "no temporary folder left"


def test_dump_refuses_a_capture_folder_with_an_extra_file_or_without_the_stamp(tmp_path, capsys):
    cap = tmp_path / "cap"
    assert _run(["dump", str(SEED), "-o", str(cap)], capsys)[0] == 0
    (cap / "notes.txt").write_text("mine")
    before = _tree(cap)
    assert _run(["dump", str(SEED), "-o", str(cap)], capsys)[0] == 2
    assert _tree(cap) == before
    # the capture files alone, but capture.json is the user's own (no hloviz stamp)
    own = tmp_path / "own"
    own.mkdir()
    (own / "pre.hlo").write_text("HloModule m\n")
    (own / "capture.json").write_text('{"mine": true}\n')
    before = _tree(own)
    assert _run(["dump", str(SEED), "-o", str(own)], capsys)[0] == 2
    assert _tree(own) == before


def test_dump_replaces_its_own_capture(tmp_path, capsys):
    cap = tmp_path / "cap"
    save_capture(Capture("HloModule a\n", None, {}, "a"), cap)  # any capture hloviz saved is stamped
    assert json.loads((cap / "capture.json").read_text())["hloviz"]
    code, _, err = _run(["dump", str(SEED), "-o", str(cap)], capsys)
    assert code == 0, err
    assert sorted(os.listdir(cap)) == ["capture.json", "post.hlo", "pre.hlo"]
    assert sorted(os.listdir(tmp_path)) == ["cap"]


def test_dump_to_a_symlink_replaces_the_link_not_its_target_and_leaves_nothing_behind(tmp_path, capsys):
    real = tmp_path / "real"
    assert _run(["dump", str(SEED), "-o", str(real)], capsys)[0] == 0
    before = _tree(real)
    link = tmp_path / "link"
    link.symlink_to(real)
    code, _, err = _run(["dump", str(SEED), "-o", str(link)], capsys)
    assert code == 0, err
    assert not link.is_symlink() and sorted(os.listdir(link)) == ["capture.json", "post.hlo", "pre.hlo"]
    assert _tree(real) == before, "the link's target is untouched"
    assert sorted(os.listdir(tmp_path)) == ["link", "real"], "no .link.old-* left behind"


def test_dump_to_a_symlink_of_a_users_folder_is_refused(tmp_path, capsys):
    proj = _user_project(tmp_path / "proj")
    link = tmp_path / "link"
    link.symlink_to(proj)
    before = _tree(proj)
    assert _run(["dump", str(SEED), "-o", str(link)], capsys)[0] == 2
    assert link.is_symlink() and _tree(proj) == before


# --- show -o DIR ---------------------------------------------------------------------------


#: Contents as hloviz writes them: each carries its kind's mark (an SVG's <title>hloviz</title>).
def _svg(text: str) -> str:
    return f'<?xml version="1.0"?>\n<svg><g id="graph0"><title>hloviz</title><text>{text}</text></g></svg>\n'


def _html(text: str) -> str:
    return f'<!DOCTYPE html>\n<html><head><meta name="generator" content="hloviz">\n</head><body>{text}</body></html>\n'


def _report_folder(files: dict[str, str], tmp_path: Path) -> Path:
    folder = tmp_path / "out"
    write_report_folder(folder, files)
    return folder


def _sha256(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


def _plant_record(folder: Path, names: list[str]) -> None:
    """A record naming the user's files with their true SHA-256 — anyone can compute them."""
    record = {"written_by": "hloviz 0.1.0",
              "files": {n: [_sha256(folder / n) if (folder / n).is_file() else "0" * 64] for n in names}}
    (folder / REPORT_RECORD).write_text(json.dumps(record))


def test_the_report_folder_record_proves_what_hloviz_wrote(tmp_path):
    out = _report_folder({"report.html": _html("1"), "pre.svg": _svg("1")}, tmp_path)
    record = json.loads((out / REPORT_RECORD).read_text())
    assert set(record["files"]) == {"report.html", "pre.svg"}
    # a second run replaces them and removes its own stale pre.svg: one set, never a mix
    done = write_report_folder(out, {"report.html": _html("2"), "post.svg": _svg("2")})
    assert sorted(os.listdir(out)) == sorted([REPORT_RECORD, "report.html", "post.svg"])
    assert done.removed == [out / "pre.svg"] and done.written == [out / "report.html", out / "post.svg"]
    # an edited file is no longer hloviz's: refused, and nothing is written
    (out / "report.html").write_text("<html>edited by hand</html>")
    from hloviz.errors import InputError

    with pytest.raises(InputError, match=r"report\.html, which hloviz did not write"):
        write_report_folder(out, {"report.html": _html("3"), "post.svg": _svg("3")})
    assert (out / "report.html").read_text() == "<html>edited by hand</html>"
    assert (out / "post.svg").read_text() == _svg("2")
    # and a stale file the user edited is not removed either
    write_report_folder(tmp_path / "o2", {"pre.svg": _svg("a"), "post.svg": _svg("b")})
    (tmp_path / "o2" / "pre.svg").write_text("mine now")
    assert write_report_folder(tmp_path / "o2", {"post.svg": _svg("b2")}).removed == []
    assert (tmp_path / "o2" / "pre.svg").read_text() == "mine now"


def test_hloviz_writes_only_its_own_names_into_a_report_folder(tmp_path):
    with pytest.raises(ValueError, match=r"notes\.txt"):
        write_report_folder(tmp_path / "out", {"report.html": _html("1"), "notes.txt": "x"})
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("names", [["thesis.tex"], ["src"], [".git"], ["thesis.tex", "report.html"]])
def test_a_planted_record_never_deletes_a_users_file(tmp_path, names):
    """A cloned repository's folder holds the user's files and a record naming them with their
    SHA-256: hloviz removes nothing of it, and replaces nothing that lacks its mark."""
    folder = tmp_path / "site"
    folder.mkdir()
    (folder / "thesis.tex").write_text("\\chapter{Three years of work}\n")
    (folder / "report.html").write_text("<h1>my quarterly report</h1>\n")
    (folder / "src").mkdir()
    (folder / "src" / "main.c").write_text("int main(void) { return 0; }\n")
    (folder / ".git").write_text("gitdir: ../x\n")
    _plant_record(folder, names)
    before = {k: v for k, v in _tree(folder).items() if k != REPORT_RECORD}
    from hloviz.errors import InputError

    if "report.html" in names:  # the user's report.html, vouched for by the record: still refused
        with pytest.raises(InputError, match=r"report\.html, which hloviz did not write"):
            write_report_folder(folder, {"report.html": _html("new"), "post.svg": _svg("new")})
        assert {k: v for k, v in _tree(folder).items() if k != REPORT_RECORD} == before
        return
    (folder / "report.html").unlink()
    before.pop("report.html")
    done = write_report_folder(folder, {"report.html": _html("new"), "post.svg": _svg("new")})
    assert done.removed == []
    after = _tree(folder)
    assert {k: v for k, v in after.items() if k not in (REPORT_RECORD, "report.html", "post.svg")} == before
    assert set(json.loads((folder / REPORT_RECORD).read_text())["files"]) == {"report.html", "post.svg"}


def _with_timeout(fn, seconds: float = 20.0):
    """Run ``fn`` in a thread; fail (instead of hanging the suite) when it blocks."""
    import threading

    result: list = []
    errors: list[BaseException] = []

    def run():
        try:
            result.append(fn())
        except BaseException as err:  # noqa: BLE001 - handed to the test
            errors.append(err)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(seconds)
    assert not t.is_alive(), f"blocked for {seconds} s"
    if errors:
        raise errors[0]
    return result[0]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_in_the_records_place_or_a_files_place_does_not_hang(tmp_path):
    folder = tmp_path / "out"
    folder.mkdir()
    os.mkfifo(folder / REPORT_RECORD)
    done = _with_timeout(lambda: write_report_folder(folder, {"report.html": _html("1")}))
    assert done.written == [folder / "report.html"]
    assert json.loads((folder / REPORT_RECORD).read_text())["files"].keys() == {"report.html"}
    # a FIFO under a name hloviz writes, vouched for by a record: the user's, refused, unread
    os.mkfifo(folder / "pre.svg")
    record = json.loads((folder / REPORT_RECORD).read_text())
    record["files"]["pre.svg"] = ["0" * 64]
    (folder / REPORT_RECORD).write_text(json.dumps(record))
    from hloviz.errors import InputError

    with pytest.raises(InputError, match=r"pre\.svg, which hloviz did not write"):
        _with_timeout(lambda: write_report_folder(folder, {"report.html": _html("2"), "pre.svg": _svg("2")}))
    # and as a stale name it is not removed
    done = _with_timeout(lambda: write_report_folder(folder, {"report.html": _html("3")}))
    assert done.removed == [] and (folder / "pre.svg").exists()


def test_a_record_that_is_a_symlink_is_not_followed(tmp_path):
    """A record linked to one elsewhere (which names a real report of the user's) proves nothing."""
    real = tmp_path / "real"
    write_report_folder(real, {"report.html": _html("1"), "pre.svg": _svg("1")})
    site = tmp_path / "site"
    site.mkdir()
    for name in ("report.html", "pre.svg"):
        (site / name).write_bytes((real / name).read_bytes())
    (site / REPORT_RECORD).symlink_to(real / REPORT_RECORD)
    from hloviz.errors import InputError

    with pytest.raises(InputError, match="which hloviz did not write"):
        write_report_folder(site, {"report.html": _html("2")})
    assert (site / "pre.svg").exists() and (real / REPORT_RECORD).is_file()


@pytest.mark.requires_dot
def test_show_with_a_planted_record_keeps_the_users_files_and_says_what_it_removed(tmp_path, capsys):
    site = tmp_path / "site"
    site.mkdir()
    (site / "thesis.tex").write_text("\\chapter{Three years of work}\n")
    (site / "notes.md").write_text("mine\n")
    _plant_record(site, ["thesis.tex", "notes.md"])
    code, out, err = _run(["show", str(SEED), "-o", str(site)], capsys)
    assert code == 0, err
    assert (site / "thesis.tex").read_text() == "\\chapter{Three years of work}\n"
    assert (site / "notes.md").read_text() == "mine\n"
    assert "removed" not in out
    # a post-only run removes hloviz's own pre.svg and side-by-side.svg, and says so
    code, out, err = _run(["show", "--post", str(SEED / "post.hlo"), "-o", str(site)], capsys)
    assert code == 0, err
    removed = out[out.index("removed (hloviz's own, from an earlier run):"):].split()[7:]
    assert sorted(Path(p).name for p in removed) == ["pre.svg", "side-by-side.svg"]
    assert sorted(os.listdir(site)) == sorted([REPORT_RECORD, "notes.md", "post.svg", "report.html", "thesis.tex"])


@pytest.mark.requires_dot
def test_show_never_overwrites_a_users_own_report(tmp_path, capsys):
    out = tmp_path / "site"
    out.mkdir()
    (out / "report.html").write_text("<h1>my quarterly report</h1>")
    (out / "index.md").write_text("mine")
    before = _tree(out)
    code, _, err = _run(["show", str(SEED), "-o", str(out)], capsys)
    assert code == 2 and "report.html, which hloviz did not write" in err and "Traceback" not in err
    assert _tree(out) == before


@pytest.mark.requires_dot
def test_show_replaces_its_own_report_and_leaves_other_files(tmp_path, capsys):
    out = tmp_path / "out"
    assert _run(["show", str(SEED), "-o", str(out)], capsys)[0] == 0
    (out / "notes.txt").write_text("mine")
    code, _, err = _run(["show", str(SEED), "-o", str(out)], capsys)
    assert code == 0, err
    assert (out / "notes.txt").read_text() == "mine"
    assert sorted(p.name for p in out.iterdir() if not p.name.startswith(".")) == \
        ["notes.txt", "post.svg", "pre.svg", "report.html", "side-by-side.svg"]


@pytest.mark.requires_dot
def test_show_of_a_post_only_target_removes_its_own_pictures_of_the_earlier_run(tmp_path, capsys):
    out = tmp_path / "out"
    assert _run(["show", str(SEED), "-o", str(out)], capsys)[0] == 0
    code, _, err = _run(["show", "--post", str(SEED / "post.hlo"), "-o", str(out)], capsys)
    assert code == 0, err
    assert sorted(p.name for p in out.iterdir() if not p.name.startswith(".")) == ["post.svg", "report.html"], \
        "no pre.svg or side-by-side.svg of another capture beside the new report"


@pytest.mark.requires_dot
def test_a_hand_written_dot_beside_the_picture_survives_a_graphviz_failure(tmp_path, monkeypatch, capsys):
    mine = tmp_path / "x.dot"
    mine.write_text("digraph G { my -> own -> graph }\n")
    fake_dot(tmp_path / "bin", "import sys\nsys.stderr.write('Error: boom\\n')\nsys.exit(1)\n", monkeypatch)
    code, _, err = _run(["render", str(SEED), "-o", str(tmp_path / "x.svg")], capsys)
    assert code == 2 and "boom" in err and "hloviz did not write it" in err
    assert mine.read_text() == "digraph G { my -> own -> graph }\n"
    # hloviz's own DOT from an earlier failure is replaced
    mine.unlink()
    assert _run(["render", str(SEED), "-o", str(tmp_path / "x.svg")], capsys)[0] == 2
    first = mine.read_text()
    assert first.startswith("digraph hloviz {")
    code, _, err = _run(["render", str(SEED), "-o", str(tmp_path / "x.svg"), "--stage", "pre"], capsys)
    assert code == 2 and "the DOT text is in" in err
    assert mine.read_text() != first


@pytest.mark.parametrize("round_", range(4))
def test_concurrent_dumps_into_one_folder_leave_one_whole_capture(tmp_path, round_):
    """Eight writers race for one folder, four times over. Every writer ends in success or a
    clean InputError — anything else (FileNotFoundError from a folder another writer moved aside
    between two looks) is recorded and fails the test — and exactly one whole capture is left."""
    import sys
    import threading

    from hloviz.capture import load_target
    from hloviz.errors import InputError

    out = tmp_path / "cap"
    outcomes: list[BaseException | None] = []
    barrier = threading.Barrier(8)

    def dump(k: int) -> None:
        try:
            barrier.wait()
            save_capture(Capture(f"HloModule m{k}\n", f"HloModule m{k}\n", {"k": k}, f"c{k}"), out)
            outcomes.append(None)
        except BaseException as err:  # noqa: BLE001 - every kind is recorded; only InputError may pass
            outcomes.append(err)

    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # hand the GIL over often, so the writers interleave between syscalls
    try:
        threads = [threading.Thread(target=dump, args=(k,)) for k in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(switch)
    assert len(outcomes) == 8
    unexpected = [repr(e) for e in outcomes if e is not None and not isinstance(e, InputError)]
    assert unexpected == [], unexpected
    assert any(e is None for e in outcomes), "at least one writer lands"
    back = load_target(str(out))
    k = back.info["k"]
    assert back.pre_text == back.post_text == f"HloModule m{k}\n", "one capture, whole"
    assert sorted(os.listdir(out)) == ["capture.json", "post.hlo", "pre.hlo"]
    leftovers = sorted(p.name for p in tmp_path.iterdir() if p.name != "cap")
    assert leftovers == [], leftovers


@pytest.mark.requires_dot
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_show_into_a_folder_whose_record_is_a_fifo_does_not_hang(tmp_path):
    """In a child process with a timeout: the old show blocked forever opening the FIFO."""
    import subprocess
    import sys

    out = tmp_path / "site"
    out.mkdir()
    os.mkfifo(out / REPORT_RECORD)
    proc = subprocess.run([sys.executable, "-m", "hloviz", "show", str(SEED), "-o", str(out)], capture_output=True,
                          text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 0, proc.stderr
    assert (out / REPORT_RECORD).is_file() and (out / "report.html").is_file()


@pytest.mark.parametrize("step", ["between the two looks", "before the move aside", "before the rename into place",
                                  "before the put back"])
def test_a_capture_another_writer_moves_or_lands_meanwhile_is_no_internal_error(tmp_path, monkeypatch, step):
    """The races of concurrent ``dump -o DIR``, made to happen every time: another writer moves
    the existing capture aside between our look at the folder and our listing of it (or our own
    move aside), or lands its capture just before our rename into place. Each ends in one whole
    capture, ours or theirs, and never a FileNotFoundError / "internal error". "before the put
    back": our rename into place fails (a writer landed and a third moved it aside), and a writer
    lands again just before we return the capture we moved aside — which must then be removed,
    not left as a hidden ``.cap.old-*`` folder (seen once in 32 rounds of the threaded test)."""
    from hloviz.capture import load_target
    from hloviz.capture.saved import write as saved_write

    out = tmp_path / "cap"
    save_capture(Capture("HloModule old\n", None, {"k": "old"}, "old"), out)
    other = tmp_path / "elsewhere"

    def other_writer_moves_it_aside() -> None:
        if out.exists():
            os.rename(out, other)

    def other_writer_lands() -> None:
        if not out.exists():
            out.mkdir()
            (out / "pre.hlo").write_text("HloModule theirs\n")
            (out / "capture.json").write_text('{"hloviz": "0", "k": "theirs"}')

    real_iterdir, real_rename = Path.iterdir, os.rename
    fired = []

    def iterdir(self):
        if step == "between the two looks" and self == out and not fired:
            fired.append(1)
            other_writer_moves_it_aside()
        return real_iterdir(self)

    def rename(src, dst):
        if step == "before the put back" and Path(dst) == out:
            if not fired and Path(src).name.startswith(".cap.tmp-"):
                fired.append(1)
                raise OSError(errno.ENOTEMPTY, "Directory not empty")
            if fired == [1] and Path(src).name.startswith(".cap.old-"):
                fired.append(2)
                other_writer_lands()
        if not fired and Path(src) == out and step == "before the move aside":
            fired.append(1)
            other_writer_moves_it_aside()
        if not fired and Path(dst) == out and step == "before the rename into place":
            fired.append(1)
            other_writer_lands()
        return real_rename(src, dst)

    monkeypatch.setattr(Path, "iterdir", iterdir)
    monkeypatch.setattr(saved_write.os, "rename", rename)
    save_capture(Capture("HloModule mine\n", "HloModule mine\n", {"k": "mine"}, "mine"), out)
    monkeypatch.undo()
    assert fired, "the race was staged"
    back = load_target(str(out))
    assert back.info["k"] == "mine" and back.pre_text == "HloModule mine\n"
    assert sorted(os.listdir(out)) == ["capture.json", "post.hlo", "pre.hlo"]
    leftovers = sorted(p.name for p in tmp_path.iterdir() if p.name not in ("cap", "elsewhere"))
    assert leftovers == [], leftovers
