"""Failure injection through the commands a user runs: each failure ends with one clear message,
exit code 2 (130 for Ctrl-C), no partial or corrupt output, and earlier good output intact."""

from __future__ import annotations

import errno
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hloviz.cli import main
from hloviz.render.page.files import REPORT_RECORD

from . import present, run_cli
from .conftest import restore_default_sigint
from .test_render_graphviz import fake_dot

ROOT = Path(__file__).resolve().parent.parent
SEED = ROOT / "samples" / "captures" / "fused_additions"


def _snapshot(folder: Path) -> dict[str, bytes]:
    """The folder's files, without hloviz's record of them (bookkeeping, see test_safety_files)."""
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.name != REPORT_RECORD} \
        if folder.exists() else {}


@pytest.fixture
def good_show(tmp_path, capsys):
    """A folder holding the output of one successful `hloviz show`."""
    if shutil.which("dot") is None:
        pytest.skip("needs Graphviz")
    out = tmp_path / "out"
    main(["show", str(SEED), "-o", str(out)])
    capsys.readouterr()
    assert (out / "report.html").exists()
    return out


@pytest.mark.requires_dot
def test_dot_exiting_with_an_error_keeps_earlier_output(good_show, tmp_path, monkeypatch, capsys):
    before = _snapshot(good_show)
    fake_dot(tmp_path / "bin", "import sys\nsys.stderr.write('Error: syntax error in line 1\\n')\nsys.exit(1)\n",
             monkeypatch)
    code, _, err = run_cli(["show", str(SEED), "-o", str(good_show)], capsys)
    assert code == 2
    assert err.startswith("hloviz: error:") and "Traceback" not in err
    assert "syntax error in line 1" in err
    after = _snapshot(good_show)
    assert {k: after[k] for k in before} == before, "earlier pictures and report are untouched"
    assert sorted(set(after) - set(before)) == ["post.dot", "pre.dot", "side-by-side.dot"], \
        "only the DOT text of the pictures is added, for the user to inspect"


@pytest.mark.requires_dot
def test_a_hanging_dot_times_out_and_keeps_earlier_output(good_show, tmp_path, monkeypatch, capsys):
    before = _snapshot(good_show)
    fake_dot(tmp_path / "bin", "import time\ntime.sleep(60)\n", monkeypatch)
    started = time.monotonic()
    code, _, err = run_cli(["render", str(SEED), "-o", str(good_show / "post.svg"), "--timeout", "0.5"], capsys)
    assert time.monotonic() - started < 20
    assert code == 2 and "Traceback" not in err
    assert "0.5 s" in err
    assert (good_show / "post.svg").read_bytes() == before["post.svg"]


def test_missing_dot_names_the_packages(tmp_path, monkeypatch, capsys):
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.delenv("HLOVIZ_DOT", raising=False)
    code, _, err = run_cli(["render", str(SEED), "-o", str(tmp_path / "p.svg")], capsys)
    assert code == 2
    for hint in ("apt-get install graphviz", "brew install graphviz", "conda install graphviz"):
        assert hint in err
    assert not (tmp_path / "p.svg").exists()
    assert list(tmp_path.glob("p*.dot")), "the DOT file is still written"


def test_an_unwritable_output_folder(tmp_path, capsys):
    if os.geteuid() == 0:
        # root ignores permissions: make the output path's parent a file instead
        blocker = tmp_path / "blocker"
        blocker.write_text("I am a file")
        target = blocker / "out"
    else:
        locked = tmp_path / "locked"
        locked.mkdir()
        locked.chmod(0o500)
        target = locked / "out"
    code, _, err = run_cli(["show", str(SEED), "-o", str(target)], capsys)
    assert code == 2 and "cannot write" in err and "Traceback" not in err


@pytest.mark.requires_dot
def test_a_full_disk_leaves_no_partial_file_and_keeps_earlier_output(good_show, monkeypatch, capsys):
    before = _snapshot(good_show)
    real_fdopen = os.fdopen
    writes = {"n": 0}

    class FullDisk:
        def __init__(self, f):
            self._f = f

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self._f.close()

        def write(self, data):
            writes["n"] += 1
            if writes["n"] >= 2:  # the second file written hits a full disk
                self._f.write(data[: len(data) // 2])
                raise OSError(errno.ENOSPC, "No space left on device")
            return self._f.write(data)

        def __getattr__(self, name):
            return getattr(self._f, name)

    monkeypatch.setattr(os, "fdopen", lambda fd, *a, **k: FullDisk(real_fdopen(fd, *a, **k)))
    code, _, err = run_cli(["show", str(SEED), "-o", str(good_show)], capsys)
    assert code == 2 and "No space left on device" in err and "Traceback" not in err
    monkeypatch.undo()
    after = _snapshot(good_show)
    assert set(after) == set(before), "no temporary or partial files are left"
    assert writes["n"] >= 2
    # each file is the old one or a complete new one (files are written whole, one by one)
    for name, data in after.items():
        end = b"</svg>" if name.endswith(".svg") else b"</html>"
        assert data == before[name] or data.rstrip().endswith(end), name
    assert sum(after[n] != before[n] for n in after) <= 1, "only files before the full disk changed"


@pytest.mark.requires_dot
def test_ctrl_c_while_rendering_exits_130_and_writes_nothing(tmp_path):
    marker = tmp_path / "started"
    bindir = tmp_path / "bin"
    bindir.mkdir()
    dot = bindir / "dot"
    dot.write_text(f"#!{sys.executable}\nimport time\nopen({str(marker)!r}, 'w').close()\ntime.sleep(60)\n")
    dot.chmod(0o755)
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}"}
    env.pop("HLOVIZ_DOT", None)
    proc = subprocess.Popen([sys.executable, "-m", "hloviz", "show", str(SEED), "-o", str(out)], cwd=tmp_path,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=restore_default_sigint)
    deadline = time.monotonic() + 120
    while not marker.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert marker.exists(), present(proc.stderr, "a stderr pipe").read() if proc.poll() is not None else (
        "dot never started")
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "interrupted" in err and "Traceback" not in err
    assert not out.exists() or not any(out.iterdir())
