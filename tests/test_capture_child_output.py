"""What the user's model writes in the CLI's capture child reaches the user, crash or not.

The child's stdout and stderr go to a pipe that hloviz itself reads and forwards (dropping
TensorFlow's log noise unless --verbose), so bytes written just before the model kills the
process — a fatal message, faulthandler's traceback — are not lost with the process. Each test
runs ``python -m hloviz`` (or ``load_target``) on a small JAX model written to ``tmp_path``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from hloviz.capture import load_target

from . import run_cli_process
from .conftest import restore_default_sigint
from .test_capture_quiet import NOISE  # TF's pre-absl-init lines, as TF 2.21 writes them to fd 2

pytestmark = pytest.mark.requires_jax

ROOT = Path(__file__).resolve().parent.parent

MODEL = textwrap.dedent(f'''
    import ctypes
    import os
    import sys
    import time

    import jax.numpy as jnp


    def _last_words(tag):
        for i in range(2000):
            sys.stderr.write(f"{{tag}} filler line {{i}} of the model's output\\n")
        sys.stderr.write(f"{{tag}}: LAST WORDS via sys.stderr\\n")
        sys.stderr.flush()
        os.write(2, f"{{tag}}: LAST WORDS via os.write(2)\\n".encode())


    def aborts(x):
        _last_words("aborts")
        os.abort()


    def segfaults(x):
        _last_words("segfaults")
        ctypes.string_at(0)  # reads address 0


    def exits(x):
        _last_words("exits")
        os._exit(3)


    def bad_xla_flag(x):  # what XLA writes, and does, on a flag of XLA_FLAGS it does not know
        os.write(2, b"F0000 00:00:1.0  1 parse_flags_from_env.cc:234] Unknown flag in XLA_FLAGS: "
                    b"--xla_dump_buffer_assignment_analysis=true\\n")
        os._exit(1)


    def noisy(x):
        os.write(2, {NOISE!r}.encode())
        os.write(2, b"E0000 00:00:1.0  1 x.cc:1] a real error\\n")
        print("the model's own print")
        return jnp.sin(x)


    def chatty(x):
        line = b"x" * 99 + b"\\n"
        for _ in range(50):
            os.write(2, line * 1000)  # 5 MB in all, while hloviz waits for the HLO
        return x * 2


    def forks_a_chatterer(x):
        if os.fork() == 0:  # holds the output pipe open and writes on, long after the capture
            try:
                for _ in range(120_000):
                    os.write(2, b"the grandchild writes on\\n")
                    time.sleep(0.001)
            finally:
                os._exit(0)
        return x + 1


    HLOVIZ_ARGS = {{name: ["f32[4]"] for name in ("aborts", "segfaults", "exits", "bad_xla_flag", "noisy", "chatty",
                                                  "forks_a_chatterer")}}
''')


@pytest.fixture(scope="module")
def model(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("model") / "crashing_model.py"
    path.write_text(MODEL)
    return path


@pytest.mark.parametrize(("fn", "how", "crash_words"), [
    ("aborts", "crashed (SIGABRT", "Fatal Python error: Aborted"),
    ("segfaults", "crashed (SIGSEGV", "Fatal Python error: Segmentation fault"),
    ("exits", "exit status 3", None),
])
def test_the_last_words_of_a_model_that_kills_the_process_reach_the_user(model, fn, how, crash_words):
    # 2000 lines before the last words: with the filter thread inside the child, 29 of 30 runs lost them
    run = run_cli_process("stats", "--json", f"{model}:{fn}")
    assert run.returncode == 2, run.stderr
    assert run.stdout == ""
    err = run.stderr
    assert f"{fn}: LAST WORDS via sys.stderr\n{fn}: LAST WORDS via os.write(2)\n" in err
    assert err.count(f"{fn} filler line ") == 2000  # all of it, once
    if crash_words:  # faulthandler's report (on in the child), written by the dying process itself
        assert crash_words in err and 'crashing_model.py", line' in err
    message = err[err.rindex("LAST WORDS via os.write(2)"):]
    assert "ended before hloviz got the HLO" in message and how in message
    assert "its last output is above" in message
    assert err.count("hloviz: error:") == 1 and "Traceback" not in err


def test_an_exit_is_not_blamed_on_the_model_but_said_as_it_is(model):
    run = run_cli_process("stats", "--json", f"{model}:exits")
    message = run.stderr[run.stderr.rindex("hloviz: error:"):]
    assert "exit status 3" in message and "the model called" not in message


def test_an_xla_flag_xla_does_not_know_is_named_as_the_cause(model):
    # held-out round 81: TensorFlow's XLA stops on a flag only JAX's knows, and the error said the
    # model had called exit
    run = run_cli_process("stats", "--json", f"{model}:bad_xla_flag")
    assert run.returncode == 2
    assert "Unknown flag in XLA_FLAGS: --xla_dump_buffer_assignment_analysis=true" in run.stderr  # its own words
    message = run.stderr[run.stderr.rindex("hloviz: error:"):]
    assert "exit status 1: XLA stopped it, XLA_FLAGS names a flag it does not know" in message
    assert "take that flag out of XLA_FLAGS" in message


@pytest.mark.parametrize("verbose", [False, True])
def test_log_noise_from_the_model_is_dropped_unless_verbose(model, verbose):
    run = run_cli_process("stats", "--json", f"{model}:noisy", *(["--verbose"] if verbose else []))
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["kernel_count"] >= 1
    assert "E0000 00:00:1.0  1 x.cc:1] a real error\n" in run.stderr
    assert "the model's own print\n" in run.stderr
    if verbose:
        assert NOISE in run.stderr
    else:
        for line in NOISE.splitlines():
            assert line not in run.stderr


def test_megabytes_of_stderr_while_hloviz_waits_do_not_block_the_capture(model):
    run = run_cli_process("stats", "--json", f"{model}:chatty")
    assert run.returncode == 0, run.stderr[-2000:]
    assert json.loads(run.stdout)["kernel_count"] >= 1
    assert run.stderr.count("x" * 99 + "\n") == 50_000


def test_a_forked_process_writing_on_does_not_keep_hloviz_waiting(model):
    run = run_cli_process("stats", "--json", f"{model}:forks_a_chatterer")  # it writes for 2 minutes: a hang times out
    assert run.returncode == 0, run.stderr[-2000:]
    assert json.loads(run.stdout)["kernel_count"] >= 1


def test_from_python_the_childs_output_goes_through_sys_stderr(model, capsys):
    """An embedding program (a notebook, pytest's capsys) sees the child's output where it sees
    its own: in ``sys.stderr``, not on a file descriptor it does not read."""
    cap = load_target(f"{model}:noisy", isolate=True)
    assert cap.post_text
    err = capsys.readouterr().err
    assert "the model's own print\n" in err and "a real error\n" in err and "oneDNN" not in err


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_stopping_hloviz_stops_what_the_models_capture_started(tmp_path, signum):
    """A model that starts a process of its own (a data loader, a server) while hloviz captures
    it: stopping hloviz stops the capture child and that process too, with the same signal."""
    pid_file = tmp_path / "grandchild.pid"
    model = tmp_path / "spawner.py"
    model.write_text(textwrap.dedent(f'''
        import subprocess, sys, time
        helper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(900)"])
        open({str(pid_file)!r}, "w").write(str(helper.pid))
        time.sleep(900)

        def f(x):
            return x
    '''), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "hloviz", "stats", f"{model}:f", "--arg", "f32[2]"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=restore_default_sigint)
    # Events, each with a ceiling far above what a loaded machine needs, far below the model's
    # 900 s sleeps: a capture that never stops, or a helper left running, still fails.
    _wait_for(lambda: (pid_file.exists() and pid_file.read_text() != "") or proc.poll() is not None, 240)
    assert proc.poll() is None and pid_file.exists() and pid_file.read_text(), "the model did not start"
    grandchild = int(pid_file.read_text())
    proc.send_signal(signum)
    proc.communicate(timeout=150)
    assert proc.returncode in (130, 143, -signum), proc.returncode
    _wait_for(lambda: not _alive(grandchild), 150)
    if _alive(grandchild):
        os.kill(grandchild, signal.SIGKILL)
        pytest.fail("the model's own process outlived hloviz")


def _wait_for(event, ceiling: float) -> None:
    """Return when ``event()`` is true, or after ``ceiling`` seconds (the caller asserts)."""
    deadline = time.monotonic() + ceiling
    while not event() and time.monotonic() < deadline:
        time.sleep(0.05)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
            return f.read().split(")")[-1].split()[0] != "Z"  # a zombie is gone, only not reaped
    except FileNotFoundError:
        return False
