"""TensorFlow's log lines are silenced unless --verbose; everything else written to stderr stays.

TF 2.21 prints ``oneDNN custom operations are on…`` and ``All log messages before
absl::InitializeLog()…`` straight to file descriptor 2 on import, whatever
``TF_CPP_MIN_LOG_LEVEL`` says. Each test runs in a subprocess, so the file descriptors are its
own (pytest captures fd 2 of its own process).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOISE = ("WARNING: All log messages before absl::InitializeLog() is called are written to STDERR\n"
         "I0000 00:00:1796029165.994076    8267 port.cc:153] oneDNN custom operations are on. You may see "
         "slightly different numerical results.\n"
         "W0000 00:00:1796029169.626151    8267 cpu_feature_guard.cc:227] This TensorFlow binary is optimized\n"
         "To enable the following instructions: AVX2 FMA, in other operations, rebuild TensorFlow with the "
         "appropriate compiler flags.\n")


def _run(code: str, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code), *args], capture_output=True, text=True,
                          env=env, timeout=600)


@pytest.mark.parametrize("verbose", [False, True])
def test_the_filter_drops_log_noise_written_to_fd_2_and_keeps_the_rest(verbose):
    out = _run(f"""
        import os, sys
        from hloviz.capture.quiet import filtered_stderr
        with filtered_stderr({verbose}):
            os.write(2, {NOISE!r}.encode())
            print("user print", file=sys.stderr)
            os.write(2, b"E0000 00:00:1.0  1 x.cc:1] a real error\\n")
            os.write(2, b"no newline at the end")
        print("after", file=sys.stderr)
    """)
    assert out.returncode == 0, out.stderr
    kept = "user print\nE0000 00:00:1.0  1 x.cc:1] a real error\nno newline at the endafter\n"
    assert out.stderr == (NOISE + kept if verbose else kept)


@pytest.mark.requires_tf
@pytest.mark.slow
def test_a_live_capture_prints_no_tensorflow_log_lines(tmp_path):
    model = tmp_path / "model.py"
    model.write_text("import tensorflow as tf\n\n"
                     "@tf.function(jit_compile=True)\ndef f(x):\n    print('traced')\n    return x * 2\n")
    out = _run("from hloviz.cli import main; main()", "stats", f"{model}:f", "--arg", "f32[4]", "--json")
    assert out.returncode == 0, out.stderr
    assert "oneDNN" not in out.stderr and "InitializeLog" not in out.stderr and "I0000" not in out.stderr
    assert "traced" in out.stderr  # the user's own output still arrives
    assert out.stdout.lstrip().startswith("{")
