"""One exit code per outcome: every failure is exit 2 with one message (a traceback only with
--debug); exit 1 is left to ``diff --fail-on``; 130 only for a real Ctrl-C. Each input here
used to end in a traceback and exit 1, or in "interrupted" and exit 130."""

from __future__ import annotations

import bz2
import json
import re

import pytest

from . import hostile_inputs as H
from . import present
from . import run_cli as _run


def _one_message(err: str) -> None:
    assert "Traceback" not in err
    assert err.count("hloviz: error:") == 1, err


@pytest.mark.parametrize("name, changes, says", [
    ("source_map_list", {"source_map": [1, 2]}, "source_map must be an object"),
    ("tf_ops_string", {"tf_ops": "Const"}, "tf_ops must be an object"),
    ("entry_string", {"source_map": {"add": "x.py:3"}}, 'source_map["add"] must be an object'),
    ("line_string", {"source_map": {"add": {"file": "m.py", "line": "3", "function": "f"}}}, ".line must be a line number"),
    ("tf_inputs_values", {"tf_inputs": {"add": "x"}}, 'tf_inputs["add"] must be a list'),
    ("tf_inputs_list", {"tf_inputs": ["add"]}, "tf_inputs must be an object"),
    ("tensorflow_number", {"tensorflow": 2.21}, "tensorflow must be a string"),
    ("nan", {"raw": '{"hloviz": "0.1.0", "capture_seconds": NaN}'}, "NaN is not a JSON number"),
    ("infinity", {"raw": '{"hloviz": "0.1.0", "source_map": {"a": {"line": Infinity}}}'}, "Infinity is not a JSON"),
    ("deep", {"raw": "[" * 100_000 + "]" * 100_000}, "nests too deeply"),
    ("not_object", {"raw": "[1, 2]"}, "must hold a JSON object"),
])
@pytest.mark.parametrize("command", [["stats", "--json"], ["stats"]])
def test_a_capture_json_with_wrong_types_is_an_input_error(tmp_path, capsys, name, changes, says, command):
    folder = H.capture_with(tmp_path / name, **changes)
    code, out, err = _run([*command, str(folder)], capsys)
    assert code == 2, err
    _one_message(err)
    assert says in err and "capture.json" in err
    assert out == ""


@pytest.mark.parametrize("text, kernels", [
    (H.nested_fusions(1000), 1),
    (H.nested_calls(1000, "call"), 1),
    (H.nested_calls(1000, "while"), 1),
])
def test_modules_nested_a_thousand_deep_are_read_and_drawn(tmp_path, capsys, text, kernels):
    path = tmp_path / "deep.hlo"
    path.write_text(text)
    code, out, err = _run(["stats", "--json", str(path)], capsys)
    assert code == 0, err
    assert json.loads(out)["kernel_count"] == kernels
    code, _, err = _run(["render", str(path), "-o", str(tmp_path / "deep.dot")], capsys)
    assert code == 0, err


def test_a_shape_whose_size_overflows_int64_is_refused_where_it_is(tmp_path, capsys):
    path = tmp_path / "big.hlo"
    path.write_text(H.big_shape(500))
    for command in (["stats", "--json"], ["stats"], ["render", "-o", str(tmp_path / "b.svg")]):
        code, _out, err = _run([*command, str(path)], capsys)
        assert code == 2, err
        _one_message(err)
        assert re.search(r"big.hlo:\d+:\d+: error: f32\[", err) and "int64" in err


def test_a_legal_shape_of_many_dimensions_is_counted(tmp_path, capsys):
    path = tmp_path / "ones.hlo"
    path.write_text(H.rank_of_ones(20_000))
    code, out, err = _run(["stats", "--json", str(path)], capsys)
    assert code == 0, err
    assert json.loads(out)["kernels"][0]["bytes_written"] == 4


@pytest.mark.parametrize("kind", ["gz", "xz"])
def test_a_truncated_archive_is_an_input_error_not_an_interrupt(tmp_path, capsys, kind):
    path = H.truncated(tmp_path / f"post.hlo.{kind}", kind)
    code, _, err = _run(["stats", str(path)], capsys)
    assert code == 2, err
    _one_message(err)
    assert "truncated" in err and "interrupted" not in err


@pytest.mark.parametrize("suffix", ["xz", "gz", "bz2"])
def test_a_garbage_archive_is_an_input_error(tmp_path, capsys, suffix):
    path = tmp_path / f"post.hlo.{suffix}"
    path.write_bytes(b"\xfd7zXZ\x00" + b"garbage" * 50)
    code, _, err = _run(["stats", str(path)], capsys)
    assert code == 2, err
    _one_message(err)
    assert f"not a valid {suffix}-compressed file" in err


def test_bz2_reads_in_the_cli_as_in_the_api(tmp_path, capsys):
    path = tmp_path / "post.hlo.bz2"
    path.write_bytes(bz2.compress(H.SMALL.encode()))
    code, out, err = _run(["stats", "--json", str(path)], capsys)
    assert code == 0, err
    assert json.loads(out)["kernel_count"] == 1


def test_a_decompression_bomb_stops_at_the_limit_and_names_the_flag(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("HLOVIZ_MAX_INPUT", raising=False)
    path = H.bomb(tmp_path / "bomb.hlo.gz", 3 << 20)
    assert path.stat().st_size < 20_000
    code, _, err = _run(["--max-input", "1MiB", "stats", str(path)], capsys)
    assert code == 2, err
    _one_message(err)
    assert "more than 1 MiB" in err and "--max-input" in err
    code, _out, err = _run(["--max-input", "8MiB", "stats", "--json", str(path)], capsys)
    assert code == 0, err
    monkeypatch.setenv("HLOVIZ_MAX_INPUT", "100KiB")
    code, _, err = _run(["stats", str(path)], capsys)
    assert code == 2 and "more than 100 KiB" in err
    code, _, err = _run(["--max-input", "lots", "stats", str(path)], capsys)
    assert code == 2 and "not a size" in err


@pytest.mark.parametrize("value", ["nan", "-1", "0", "inf"])
@pytest.mark.parametrize("command", ["render", "show", "diff"])
def test_a_timeout_that_is_no_positive_number_is_a_bad_option(tmp_path, capsys, value, command):
    args = {"render": ["render", str(H.SEED), "-o", str(tmp_path / "x.svg")],
            "show": ["show", str(H.SEED), "-o", str(tmp_path / "out")],
            "diff": ["diff", str(H.SEED), str(H.SEED), "-o", str(tmp_path / "d.svg")]}[command]
    code, _, err = _run([*args, "--timeout", value], capsys)
    assert code == 2, err
    assert "--timeout" in err and "positive number of seconds" in err and "Traceback" not in err
    assert list(tmp_path.iterdir()) == []


def test_a_model_raising_a_base_exception_subclass_is_contained(tmp_path, capsys):
    model = tmp_path / "boom_model.py"
    model.write_text("class Boom(BaseException):\n    pass\n\n\nraise Boom('from the model')\n\n\ndef f():\n    pass\n")
    code, out, err = _run(["stats", "--json", f"{model}:f"], capsys)
    assert code == 2, err
    _one_message(err)
    assert "Boom: from the model" in err and "boom_model.py\", line 5" in err
    assert out == ""


def test_a_bug_in_hloviz_is_exit_2_with_one_message_and_the_traceback_only_with_debug(capsys, monkeypatch):
    from hloviz import api

    def broken(*a, **k):
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr(api, "stats", broken)
    code, _out, err = _run(["stats", str(H.SEED)], capsys)
    assert code == 2
    _one_message(err)
    assert "internal error: ZeroDivisionError: a bug" in err and "--debug" in err
    code, _out, err = _run(["--debug", "stats", str(H.SEED)], capsys)
    assert code == 2 and "Traceback" in err and "ZeroDivisionError" in err


def test_a_recursion_error_anywhere_is_exit_2(capsys, monkeypatch):
    from hloviz import api

    def deep(*a, **k):
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(api, "stats", deep)
    code, _, err = _run(["stats", str(H.SEED)], capsys)
    assert code == 2
    _one_message(err)
    assert "nests too deeply" in err


def test_an_eof_error_is_not_reported_as_an_interrupt(capsys, monkeypatch):
    from hloviz import api

    def eof(*a, **k):
        raise EOFError

    monkeypatch.setattr(api, "stats", eof)
    code, _, err = _run(["stats", str(H.SEED)], capsys)
    assert code == 2 and "interrupted" not in err and "end of input" in err


def test_stats_json_is_strict_json(capsys):
    code, out, _ = _run(["stats", "--json", str(H.SEED)], capsys)
    assert code == 0

    def refuse(name):
        raise AssertionError(f"{name} in --json output")

    json.loads(out, parse_constant=refuse)


def test_a_closed_stdout_pipe_is_not_exit_1(tmp_path):
    import os
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": str(H.ROOT)}
    big = H.ROOT / "samples" / "captures" / "transformer_train-tf2.21"
    proc = subprocess.Popen([sys.executable, "-m", "hloviz", "stats", "--json", "--all", str(big)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    stdout, stderr = present(proc.stdout, "a stdout pipe"), present(proc.stderr, "a stderr pipe")
    assert stdout.read(10)
    stdout.close()  # like `| head -c 10`
    err = stderr.read().decode()
    assert proc.wait(timeout=120) == 141, err
    assert "Traceback" not in err
