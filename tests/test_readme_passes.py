"""The docs' "Why: the pass history" answers (docs/passes.md) are what ``hloviz passes`` prints, and a live
capture with per-pass dumps credits what the saved snapshot sets credit."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests import run_cli
from tests.conftest import restore_default_sigint

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "docs" / "passes.md").read_text(encoding="utf-8")  # the page that holds them
BLOCKS = re.findall(r"<!-- passes-output: hloviz (.+?) -->\n```text\n(.*?)```\n", README, re.DOTALL)


def test_the_docs_have_both_answers():
    assert len(BLOCKS) == 3
    assert "fusion" in BLOCKS[0][1] and "constant_folding" in BLOCKS[1][1] and "dynamic_padder" in BLOCKS[2][1]


@pytest.mark.parametrize("command,output", BLOCKS, ids=[b[0] for b in BLOCKS])
def test_the_docs_output_is_what_the_command_prints(command, output, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    code, out, err = run_cli(command.split(), capsys)
    assert code in (0, None), err
    assert out == output


def _live(target: str, capsys, monkeypatch, tmp_path) -> str:
    monkeypatch.chdir(ROOT)
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    code, out, err = run_cli(["passes", target, "--json"], capsys)
    assert code in (0, None), err
    assert list(tmp_path.iterdir()) == []  # the private dump folder is gone
    return out


@pytest.mark.requires_tf
def test_a_live_tensorflow_capture_credits_the_fusion_pass(capsys, monkeypatch, tmp_path):
    import json

    data = json.loads(_live("samples/fused_additions.py:fused_additions", capsys, monkeypatch, tmp_path))
    (fusion,) = data["fusions"]
    assert fusion["created_by"]["pass"] == "fusion" and data["complete"]


@pytest.mark.requires_jax
def test_a_live_jax_capture_credits_its_fusions(capsys, monkeypatch, tmp_path):
    import json

    data = json.loads(_live("samples/jax_mlp.py:mlp", capsys, monkeypatch, tmp_path))
    assert data["fusions"] and all(f["created_by"] is not None for f in data["fusions"])
    assert data["snapshots"][0]["index"] == 0 and data["complete"]


@pytest.mark.requires_tf
def test_ctrl_c_during_a_live_capture_leaves_no_dump_folder(tmp_path):
    import os
    import signal
    import subprocess
    import sys
    import time

    env = {**os.environ, "TMPDIR": str(tmp_path), "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "hloviz", "passes", "samples/fused_additions.py:fused_additions"],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=restore_default_sigint)
    # The event: XLA has written its first snapshot. The ceiling only ends a run that never gets
    # there (TensorFlow's import and XLA's compile take a minute or more on a loaded machine).
    deadline = time.monotonic() + 600
    made: list[Path] = []
    while time.monotonic() < deadline and proc.poll() is None:
        made = [p for p in tmp_path.glob("hloviz-passes-*") if any(p.glob("module_*.0000.*"))]
        if made:
            break
        time.sleep(0.05)
    assert made, "the capture never started writing snapshots"
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 130, err
    assert b"Traceback" not in err
    assert list(tmp_path.glob("hloviz-passes-*")) == []
