"""Atomic writes: an error or Ctrl-C never leaves a half-written file (or a temporary one)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hloviz.errors import RenderError
from hloviz.render.page import files
from hloviz.render.page.files import write_all, write_atomic


def test_writes_creates_folders_and_replaces(tmp_path):
    target = tmp_path / "a" / "b" / "pic.svg"
    write_atomic(target, "first")
    write_atomic(target, b"second")
    assert target.read_bytes() == b"second"
    assert sorted(p.name for p in target.parent.iterdir()) == ["pic.svg"]


def test_permissions_follow_the_umask(tmp_path):
    old = os.umask(0o022)
    try:
        write_atomic(tmp_path / "x", "x")
    finally:
        os.umask(old)
    assert (tmp_path / "x").stat().st_mode & 0o777 == 0o644


@pytest.mark.parametrize("exc", [KeyboardInterrupt, RuntimeError, OSError])
def test_an_interrupted_write_keeps_the_old_file_and_no_temporary(tmp_path, monkeypatch, exc):
    target = tmp_path / "report.html"
    target.write_text("old report")

    def boom(fd):
        raise exc("interrupted")

    monkeypatch.setattr(files.os, "fsync", boom)
    with pytest.raises(RenderError if exc is OSError else exc):
        write_atomic(target, "new report " * 1000)
    assert target.read_text() == "old report"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.html"]


def test_a_failed_rename_is_a_render_error_naming_the_file(tmp_path, monkeypatch):
    def no(src, dst):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(files.os, "replace", no)
    with pytest.raises(RenderError, match=r"cannot write .*pic.svg: Permission denied"):
        write_atomic(tmp_path / "pic.svg", "x")
    assert list(tmp_path.iterdir()) == []


def test_unwritable_folder(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(RenderError, match="cannot write"):
        write_atomic(blocker / "pic.svg", "x")


def test_write_all_in_order(tmp_path):
    paths = write_all({tmp_path / "a.svg": "a", tmp_path / "b.svg": b"b"})
    assert [p.name for p in paths] == ["a.svg", "b.svg"]


def test_show_writes_nothing_when_drawing_is_interrupted(tmp_path, monkeypatch):
    from hloviz import api
    from hloviz.render import pictures

    from .test_render_api import SEED

    def interrupted(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(pictures, "module_picture", interrupted)
    monkeypatch.setattr(pictures, "column_picture", interrupted)  # pre.svg: the pair's column laid out alone
    out = tmp_path / "out"
    with pytest.raises(KeyboardInterrupt):
        api.show(str(SEED), out)
    assert not out.exists() or list(out.iterdir()) == []


@pytest.mark.parametrize("depth", [1, 3])
def test_an_output_under_a_file_says_which_file_is_in_the_way(tmp_path, depth):
    # ``mkdir`` says only "File exists"; the file in the way is what the user has to change
    blocker = tmp_path / "plots"
    blocker.write_text("a file the user has")
    target = blocker.joinpath(*["sub"] * (depth - 1), "pic.svg")
    with pytest.raises(RenderError) as err:
        write_atomic(target, "x")
    assert str(err.value).startswith(f"cannot write {target}: {blocker} is a file, not a folder")
    assert blocker.read_text() == "a file the user has"


def test_a_capture_under_a_file_says_which_file_is_in_the_way(tmp_path):
    from hloviz.capture.saved.write import write_folder
    from hloviz.errors import InputError

    blocker = tmp_path / "captures"
    blocker.write_text("a file the user has")
    with pytest.raises(InputError) as err:
        write_folder(blocker / "mlp", "HloModule m", None, {})
    assert f"{blocker} is a file, not a folder" in str(err.value)
    assert blocker.read_text() == "a file the user has"


@pytest.mark.parametrize("where", ["plots", "plots/report"])
def test_a_report_folder_that_is_or_sits_under_a_file_names_that_file(tmp_path, capsys, where):
    from tests import run_cli

    blocker = tmp_path / "plots"
    blocker.write_text("a file the user has")
    sample = Path(__file__).resolve().parents[1] / "samples" / "captures" / "resblock_gelu"
    code, _, err = run_cli(["show", str(sample), "-o", str(tmp_path / where)], capsys)
    assert code == 2 and f"{blocker} is a file, not a folder" in err and "Traceback" not in err
    assert blocker.read_text() == "a file the user has"
