"""The README's first screen: what a newcomer copies from it works, and the output it shows is
what hloviz prints."""

from __future__ import annotations

import ast
import re
import shlex
from pathlib import Path

from hloviz.capture.specs import parse_arg_options, parse_convention

from . import run_cli

ROOT = Path(__file__).resolve().parent.parent


def quick_start() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index("## Quick start")
    return text[start:text.index("\n## ", start + 1)]


def test_quick_start_comes_first_and_installs_with_pip():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert text.index("## Quick start") < text.index("## Words") < text.index("## Python API")
    assert "pip install 'hloviz[tf]'" in quick_start()
    extras = re.findall(r"^(\w+) = \[", (ROOT / "pyproject.toml").read_text(), re.MULTILINE)
    assert "tf" in extras and "jax" in extras


def test_the_verdict_it_shows_is_what_stats_prints(capsys, monkeypatch):
    section = quick_start()
    command = re.search(r"`(hloviz stats samples/captures/resblock_relu)`", section)
    assert command
    shown = re.search(r"```text\n(.*?)\n```", section, re.DOTALL)
    assert shown
    monkeypatch.chdir(ROOT)
    code, out, _err = run_cli([*shlex.split(command.group(1))[1:], "--json"], capsys)
    assert code == 0
    import json

    assert json.loads(out)["verdict"] == shown.group(1)


def test_the_jax_verdict_it_quotes_is_what_stats_prints(capsys):
    quoted = re.search(r"verdict reads `([^`]+)`", quick_start())
    assert quoted
    code, out, _err = run_cli(["stats", str(ROOT / "samples" / "captures" / "jax_mlp"), "--json"], capsys)
    assert code == 0
    import json

    assert json.loads(out)["verdict"].startswith(quoted.group(1))


def test_the_argument_examples_parse():
    section = quick_start()
    first = re.search(r"^hloviz stats my_model\.py:train_step (.*)$", section, re.MULTILINE)
    assert first
    argv = shlex.split(first.group(1))
    specs = parse_arg_options([argv[i + 1] for i, a in enumerate(argv) if a == "--arg"])
    assert [str(s) for s in specs.positional] == ["f32[32,28,28,1]", "s32[32]"]
    line = re.search(r"^HLOVIZ_ARGS = (\{.*\})", section, re.MULTILINE)
    assert line
    table = ast.literal_eval(line.group(1).split("   #")[0].strip())
    assert parse_convention(table["train_step"], where="README").describe() == ["f32[32,28,28,1]", "s32[32]"]


def test_version_runs(capsys):
    code, out, _err = run_cli(["--version"], capsys)
    assert code == 0 and out.startswith("hloviz ")
