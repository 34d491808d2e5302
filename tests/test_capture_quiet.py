"""TensorFlow's log lines are silenced unless --verbose; everything else written to stderr stays.

TF 2.21 prints ``oneDNN custom operations are on…`` and ``All log messages before
absl::InitializeLog()…`` straight to file descriptor 2 on import, whatever
``TF_CPP_MIN_LOG_LEVEL`` says. Each test runs in a subprocess, so the file descriptors are its
own (pytest captures fd 2 of its own process).
"""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hloviz.capture.quiet import LineFilter

ROOT = Path(__file__).resolve().parent.parent
#: TensorFlow's pre-absl-init lines, as TF 2.21 writes them straight to fd 2.
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


# Which sample lines are log noise, decided here by reading them (not by the filter's pattern):
# TensorFlow's four pre-absl lines are; a user's lines, a real error and a look-alike are not.
_NOISE_LINES = frozenset(NOISE.splitlines())
_USER_LINES = ("user line", "", "E0000 00:00:1.0  1 x.cc:1] an error", "I0000 not a log line", "ünïcode ✓")
_LINES = st.lists(st.sampled_from(sorted(_NOISE_LINES) + list(_USER_LINES)), max_size=12)


@given(lines=_LINES, last=st.sampled_from(["", "partial", NOISE.splitlines()[1]]), cuts=st.lists(st.integers(0, 2000)),
       keep_noise=st.booleans())
def test_line_filter_gives_the_same_lines_however_the_stream_is_cut(lines, last, cuts, keep_noise):
    data = "".join(line + "\n" for line in lines).encode() + last.encode()
    lf = LineFilter(keep_noise=keep_noise)
    bounds = sorted({0, len(data), *(c for c in cuts if c < len(data))})
    got = b"".join(lf.feed(data[a:b]) for a, b in itertools.pairwise(bounds)) + lf.end()
    kept = [ln for ln in lines if keep_noise or ln not in _NOISE_LINES]
    last_dropped = not keep_noise and last in _NOISE_LINES
    expected = "".join(ln + "\n" for ln in kept) + ("" if last_dropped else last)
    assert got == expected.encode()
    assert lf.dropped == len(lines) - len(kept) + last_dropped


def test_line_filter_judges_a_line_too_long_to_hold_by_its_start():
    lf = LineFilter()
    head = NOISE.splitlines()[1].encode()
    out = lf.feed(head + b"x" * 100_000) + lf.feed(b"y" * 100_000 + b"\nuser ") + lf.feed(b"z" * 20_000) + lf.end()
    assert out == b"user " + b"z" * 20_000  # the long noise line is dropped, the long user line kept whole
    assert lf.dropped == 1
