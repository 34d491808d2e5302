"""The README's first screen: what a newcomer copies from it works, the output it shows is what
hloviz prints (the quick start's verdict, and the first three commands' output), and the docs'
getting-started page includes that quick start rather than a copy of it."""

from __future__ import annotations

import ast
import re
import shlex
from pathlib import Path

import pytest

from hloviz.capture.specs import parse_arg_options, parse_convention

from . import run_cli

ROOT = Path(__file__).resolve().parent.parent


def quick_start() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index("## Quick start")
    return text[start:text.index("\n## ", start + 1)]


def test_quick_start_comes_first_and_installs_with_pip():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert re.findall(r"^## .*$", text, re.MULTILINE)[0] == "## Quick start"
    assert "pip install 'hloviz[tf]'" in quick_start() and "make install" in quick_start()
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


def test_the_getting_started_page_includes_the_quick_start():
    """docs/getting-started.md includes the README's quick start by its two markers (MyST's
    include), so the site and the README say the same."""
    page = (ROOT / "docs" / "getting-started.md").read_text(encoding="utf-8")
    markers = re.findall(r'^:(?:start-after|end-before): "(.*)"$', page, re.MULTILINE)
    assert len(markers) == 2
    section = quick_start()
    start, end = section.index(markers[0]), section.index(markers[1])
    assert start < end and "pip install 'hloviz[tf]'" in section[start:end] and "HLOVIZ_ARGS" in section[start:end]


def _shown_outputs() -> list[tuple[str, str, str]]:
    """Each ``<!-- output-head|output-tail: hloviz ARGS -->`` of the README with the text block under it."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return re.findall(r"<!-- output-(head|tail): (hloviz [^>]+?) -->\n```text\n(.*?)\n```", text, re.DOTALL)


def test_the_readme_shows_the_first_three_commands_output():
    commands = [command.split()[1] for _, command, _ in _shown_outputs()]
    assert commands.count("stats") == 2 and commands.count("diff") == 1
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    for _, command, _ in _shown_outputs():  # the reader sees the command, not only the marker
        assert f"```sh\n{command}\n```\n\n<!-- output-" in text, command
    assert "hloviz render samples/captures/fused_additions --stage both -o docs/fused_additions.svg" in text


@pytest.mark.parametrize("where,command,shown", _shown_outputs(), ids=[c for _, c, _ in _shown_outputs()])
def test_the_first_commands_print_what_the_readme_shows(where, command, shown, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)  # the commands name the captures relative to the repository
    code, out, err = run_cli(shlex.split(command)[1:], capsys)
    assert code == 0, err
    # Compared word for word: the terminal wraps a long verdict where the README does not.
    printed, words = " ".join(out.split()), " ".join(shown.split())
    assert printed.startswith(words) if where == "head" else printed.endswith(words)
