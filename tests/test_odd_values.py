"""Odd values a careless or hostile user gives: each is one clear message and exit 2, never
"internal error … a bug in hloviz", and nothing is created for a value that is then refused.

Non-ASCII digits (Python's ``str.isdigit`` and ``re``'s ``\\d`` accept ``٢``, ``２`` and ``²``),
numbers longer than Python converts (``int()`` stops at 4,300 digits; ``float()`` of 400 digits
is infinity), a lone UTF-16 surrogate in capture.json (valid JSON, but not text), and a standard
output that is full or closed. Each test builds its input itself.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from . import hostile_inputs as H
from . import run_cli as _run


def _one_message(err: str) -> None:
    assert "Traceback" not in err and "internal error" not in err and "bug in hloviz" not in err, err
    assert err.count("hloviz: error:") == 1, err


def _model(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "model.py"
    path.write_text("def f(x):\n    return x\n")
    return path


# --- --tf / --jax release numbers ----------------------------------------------------------

ODD_RELEASES = ["٢.١٧", "２.１７", "²", "2.17\u200b", "2." + "1" * 300, "9" * 5000, "2.17.1.0", "-2.17", "2..17"]


@pytest.mark.parametrize("value", ODD_RELEASES, ids=range(len(ODD_RELEASES)))
@pytest.mark.parametrize("option", ["--tf", "--jax"])
def test_an_odd_release_number_is_refused_before_anything_is_created(tmp_path, capsys, monkeypatch, value, option):
    envs = tmp_path / "envs"
    monkeypatch.setenv("HLOVIZ_ENVS", str(envs))
    model = _model(tmp_path / "m")
    code, out, err = _run(["stats", f"{model}:f", option, value], capsys)
    assert code == 2, err
    _one_message(err)
    assert f"{option} takes a release number such as 2.17 or 2.17.1 (ASCII digits)" in err
    assert len(err) < 400, "a 5,000-digit value is cut in the message"
    assert not envs.exists(), "no cache folder or lock file for a refused value"
    assert out == ""


@pytest.mark.parametrize("command", ["versions", "diff"])
def test_every_release_is_checked_before_installing_the_first(tmp_path, capsys, monkeypatch, command):
    envs = tmp_path / "envs"
    monkeypatch.setenv("HLOVIZ_ENVS", str(envs))
    model = _model(tmp_path / "m")
    code, _, err = _run([command, f"{model}:f", "--tf", "2.17", "--tf", "２.２１"], capsys)
    assert code == 2, err
    _one_message(err)
    assert "'２.２１'" in err and not envs.exists()


# --- --max-input / HLOVIZ_MAX_INPUT ----------------------------------------------------------

@pytest.mark.parametrize("value, says", [
    ("9" * 400, "is more than hloviz can count"),
    ("9" * 400 + "GiB", "is more than hloviz can count"),
    ("1" + "0" * 19, "is more than hloviz can count"),  # 10^19 > 2^63 - 1
    ("٣MiB", "is not a size"),
    ("1e400", "is not a size"),
    ("0.0000001", "must be more than 0 bytes"),
])
def test_an_odd_max_input_is_an_input_error(capsys, monkeypatch, value, says):
    monkeypatch.delenv("HLOVIZ_MAX_INPUT", raising=False)
    code, out, err = _run(["--max-input", value, "stats", str(H.SEED)], capsys)
    assert code == 2, err
    _one_message(err)
    assert "--max-input" in err and says in err and out == ""
    monkeypatch.setenv("HLOVIZ_MAX_INPUT", value)
    code, out, err = _run(["stats", str(H.SEED)], capsys)
    assert code == 2, err
    _one_message(err)
    assert "HLOVIZ_MAX_INPUT" in err and says in err and out == ""


def test_the_largest_max_input_is_taken(capsys, monkeypatch):
    monkeypatch.delenv("HLOVIZ_MAX_INPUT", raising=False)
    code, _, err = _run(["--max-input", str(2**63 - 1), "stats", "--json", str(H.SEED)], capsys)
    assert code == 0, err


# --- --module and --arg numbers --------------------------------------------------------------

def _dump(folder: Path) -> Path:
    folder.mkdir()
    (folder / "module_0001.a.before_optimizations.txt").write_text((H.SEED / "pre.hlo").read_text())
    (folder / "module_0001.a.cpu_after_optimizations.txt").write_text((H.SEED / "post.hlo").read_text())
    (folder / f"module_{'7' * 200}.b.before_optimizations.txt").write_text((H.SEED / "pre.hlo").read_text())
    return folder


@pytest.mark.parametrize("choice", ["9" * 5000, "module_" + "9" * 5000, "٣"])
def test_an_odd_module_number_is_no_module(tmp_path, capsys, choice):
    dump = _dump(tmp_path / "dump")
    code, out, err = _run(["stats", str(dump), "--module", choice], capsys)
    assert code == 2, err
    _one_message(err)
    assert "no module in" in err and "module_0001.a" in err and len(err) < 1200 and out == ""


def _pass_dump(folder: Path) -> Path:
    """A per-pass dump of one module as XLA names its files: the two stages and two snapshots."""
    folder.mkdir()
    pre, post = (H.SEED / "pre.hlo").read_text(), (H.SEED / "post.hlo").read_text()
    (folder / "module_0001.a.before_optimizations.txt").write_text(pre)
    (folder / "module_0001.a.0000.simp.after_pipeline-start.before_dce.txt").write_text(pre)
    (folder / "module_0001.a.0001.simp.after_dce.before_fusion.txt").write_text(pre)
    (folder / "module_0001.a.cpu_after_optimizations.txt").write_text(post)
    return folder


@pytest.mark.parametrize("choice", ["9" * 5000, "module_" + "9" * 5000, "٣", "module_١"])
def test_an_odd_module_number_is_no_module_for_passes_either(tmp_path, capsys, choice):
    """``passes`` picks its module by the same rule as ``stats`` (capture/dumps/module_choice.py):
    5,000 digits are more than int() converts, and ``٣`` is no module number."""
    dump = _pass_dump(tmp_path / "dump")
    code, out, err = _run(["passes", str(dump), "--module", choice], capsys)
    assert code == 2, err
    _one_message(err)
    assert "no module with snapshots in" in err and "module_0001.a" in err and len(err) < 1200 and out == ""


@pytest.mark.parametrize("choice", ["1", "0001", "module_1", "module_0001.a", "a", "a*"])
def test_passes_finds_a_module_by_number_name_or_pattern(tmp_path, capsys, choice):
    dump = _pass_dump(tmp_path / "dump")
    code, out, err = _run(["passes", "--json", str(dump), "--module", choice], capsys)
    assert code == 0, err
    assert json.loads(out)["module"] == "a"


def test_module_numbers_of_any_length_are_ordered_and_found(tmp_path, capsys):
    dump = _dump(tmp_path / "dump")
    code, out, err = _run(["stats", "--json", str(dump), "--module", "1"], capsys)
    assert code == 0, err
    assert json.loads(out)["target"] == "a"
    code, out, err = _run(["stats", "--json", str(dump), "--module", "7" * 200], capsys)
    assert code == 0, err
    assert json.loads(out)["target"] == "b"
    code, _, err = _run(["stats", str(dump)], capsys)  # the listing, in numeric order
    assert code == 2 and err.index("module_0001.a") < err.index("module_777")


@pytest.mark.parametrize("spec, says", [
    ("f32[" + "9" * 5000 + "]", r"must be below 2\^63"),
    ("f32[9223372036854775808]", r"must be below 2\^63"),
    ("f32[٣]", "expected a dimension size"),
    ("f32[２]", "expected a dimension size"),
])
def test_an_odd_dimension_in_an_argument_spec_is_a_parse_error(spec, says):
    from hloviz.capture.specs import parse_arg_options
    from hloviz.errors import HloParseError

    with pytest.raises(HloParseError, match=says) as err:
        parse_arg_options([spec])
    assert len(str(err.value)) < 5000 + 400


# --- capture.json: a lone surrogate ------------------------------------------------------------

SURROGATES = [
    ({"tensorflow": "2.17\ud800"}, r'tensorflow holds a lone surrogate, which is not text: "2.17\ud800"'),
    ({"source_map": {"a\udc80": {"file": "m.py", "line": 1}}}, r'the key source_map["a\udc80"] holds a lone'),
    ({"tf_ops": {"add": "Add\udfff"}}, r'tf_ops["add"] holds a lone surrogate'),
    ({"args": ["f32[2]", "\ud800"]}, r"args[1] holds a lone surrogate"),
    ({"from_a_newer_hloviz": {"x": ["\udbff"]}}, r'from_a_newer_hloviz["x"][0] holds a lone surrogate'),
    ({"\ud800": 1}, r'the key "\ud800" holds a lone surrogate'),
]


@pytest.mark.parametrize("changes, says", SURROGATES, ids=range(len(SURROGATES)))
@pytest.mark.parametrize("command", [["stats", "--json"], ["stats"], ["diff"], ["versions"], ["diff", "--format", "markdown"]])
def test_a_lone_surrogate_in_capture_json_is_an_input_error(tmp_path, capsys, changes, says, command):
    folder = H.capture_with(tmp_path / "cap", **changes)
    assert "\\ud" in (folder / "capture.json").read_text().lower(), "valid JSON: the surrogate is an escape"
    args = [*command, str(folder)] + ([str(H.SEED)] if command[0] in ("diff", "versions") else [])
    code, out, err = _run(args, capsys)
    assert code == 2, err
    _one_message(err)
    assert "capture.json" in err and says in err and out == ""


def _holds_surrogate(value: object) -> bool:
    """The oracle: any key or string of a parsed JSON value with a code point D800-DFFF."""
    if isinstance(value, str):
        return any(0xD800 <= ord(c) <= 0xDFFF for c in value)
    if isinstance(value, dict):
        return any(_holds_surrogate(k) or _holds_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(map(_holds_surrogate, value))
    return False


ESCAPES = ['"\\ud800"', '"\\uD800"', '"\\uDbFf x"', '"a\\udc00"', '{"\\uDFFF": 1}', '"\\ud7ff"', '"\\ue000"',
           '"\\\\ud800"', '"ud800"', '"\\u00e9\\u4e2d"', '["\\ud83d\\ude00"]', '"\\u0044800"']


@pytest.mark.parametrize("text", ESCAPES)
def test_a_capture_json_that_may_hold_a_surrogate_is_always_searched(text):
    """The shortcut that skips the search for lone surrogates (a 5 MB capture.json written again
    as JSON) is taken only where the bytes hold no surrogate escape: never for one that decodes
    to a surrogate (a pair, valid text, may still be searched)."""
    from hloviz.capture.info import surrogates_possible

    raw = text.encode("utf-8")
    if _holds_surrogate(json.loads(text)):
        assert surrogates_possible(raw)
    if text in ('"\\ud7ff"', '"\\ue000"', '"ud800"', '"\\u00e9\\u4e2d"', '"\\u0044800"'):
        assert not surrogates_possible(raw)  # no surrogate escape: the shortcut is taken


# --- standard output full or closed ------------------------------------------------------------

def _hloviz(args: list[str], stdout) -> tuple[int, str]:
    env = {**os.environ, "PYTHONPATH": str(H.ROOT)}
    proc = subprocess.run([sys.executable, "-m", "hloviz", *args], stdout=stdout, stderr=subprocess.PIPE, env=env,
                          timeout=300)
    return proc.returncode, proc.stderr.decode()


COMMANDS = [["stats"], ["stats", "--json"], ["diff", str(H.SEED)], ["versions", str(H.SEED)]]


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full here")
@pytest.mark.parametrize("command", COMMANDS, ids=[" ".join(c[:2]) for c in COMMANDS])
def test_stdout_on_a_full_disk_is_one_message_and_exit_2(command):
    with open("/dev/full", "w") as full:
        code, err = _hloviz([command[0], str(H.SEED), *command[1:]], full)
    assert code == 2, err
    _one_message(err)
    assert "cannot write to standard output: No space left on device" in err


@pytest.mark.parametrize("command", COMMANDS, ids=[" ".join(c[:2]) for c in COMMANDS])
def test_a_closed_stdout_is_one_message_and_exit_2(tmp_path, command):
    """``hloviz … >&-``: refused before anything is opened (a file would get descriptor 1)."""
    env = {**os.environ, "PYTHONPATH": str(H.ROOT)}
    args = [command[0], str(H.SEED), *command[1:]]
    script = ("import os, runpy, sys; os.close(1); sys.argv = ['hloviz', *sys.argv[1:]]; "
              "runpy.run_module('hloviz', run_name='__main__')")
    proc = subprocess.run([sys.executable, "-c", script, *args],
                          stderr=subprocess.PIPE, env=env, timeout=300)
    err = proc.stderr.decode()
    assert proc.returncode == 2, err
    _one_message(err)
    assert "standard output is closed" in err
