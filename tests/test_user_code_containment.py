"""The user's model cannot take hloviz down: the CLI captures in a child process whose stdout is
hloviz's stderr; ``os._exit``, stray non-daemon threads and forks are contained. From Python,
an in-process capture still keeps file descriptor 1 off stdout while the model runs."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from hloviz.capture import load_target

from . import run_cli_process

pytestmark = pytest.mark.requires_tf

ROOT = Path(__file__).resolve().parent.parent

MODEL = textwrap.dedent('''
    import os
    import sys
    import threading
    import time

    import tensorflow as tf

    print("print at import")
    os.write(1, b"os.write(1) at import\\n")
    os.system("echo os.system at import")


    def noisy(x):
        os.write(1, b"os.write(1) while tracing\\n")
        sys.__stdout__.write("sys.__stdout__ while tracing\\n")
        return x * 2


    def exits(x):
        os._exit(0)


    def threads(x):
        threading.Thread(target=time.sleep, args=(3600,)).start()  # not a daemon
        return x + 1


    def forks(x):
        os.fork()
        return x + 1


    HLOVIZ_ARGS = {name: ["f32[4]"] for name in ("noisy", "exits", "threads", "forks")}
''')


@pytest.fixture(scope="module")
def model(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("model") / "hostile_model.py"
    path.write_text(MODEL)
    return path


def test_writes_to_file_descriptor_1_never_reach_stdout(model):
    run = run_cli_process("stats", "--json", f"{model}:noisy")
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["kernel_count"] >= 1  # stdout is exactly the JSON
    for said in ("print at import", "os.write(1) at import", "os.system at import", "os.write(1) while tracing",
                 "sys.__stdout__ while tracing"):
        assert said in run.stderr


def test_os_exit_in_the_model_is_an_error_not_a_silent_success(model):
    run = run_cli_process("stats", "--json", f"{model}:exits")
    assert run.returncode == 2, run.stderr
    assert run.stdout == ""
    assert "ended before hloviz got the HLO" in run.stderr and "Traceback" not in run.stderr


def test_a_stray_thread_does_not_keep_hloviz_alive(model):
    run = run_cli_process("stats", "--json", f"{model}:threads", timeout=300)  # TimeoutExpired would fail the test
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["kernel_count"] >= 1


def test_a_fork_in_the_model_gives_one_result(model):
    run = run_cli_process("stats", "--json", f"{model}:forks")
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["kernel_count"] >= 1  # one JSON document, not two


def test_in_process_captures_keep_descriptor_1_off_stdout_too(model, capfd):
    cap = load_target(f"{model}:noisy", isolate=False)
    assert cap.post_text
    out, err = capfd.readouterr()
    assert "os.write(1) while tracing" in err and "os.write(1)" not in out
