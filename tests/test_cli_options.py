"""The capture options (TARGET, --arg, --device, --pre/--post, --module, --verbose, --tf, --jax)
are declared once, in ``hloviz/cli/targets.py``, and mean the same in render, show, dump and stats.

The oracle is the source text (a regex over ``hloviz/cli/``) and click's own view of each
command, not the declaration under test.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import typer.main

from hloviz.cli import app

from . import run_cli

CLI = Path(__file__).resolve().parent.parent / "hloviz" / "cli"
COMMANDS = ("render", "show", "dump", "stats")
SHARED = ("--arg", "--device", "--pre", "--post", "--module", "--verbose", "--tf", "--jax")
SAVED = Path(__file__).resolve().parent.parent / "samples" / "captures" / "fused_additions-tf2.17"


def _declarations(option: str) -> dict[str, int]:
    """How often each module of hloviz/cli writes ``typer.Option("OPTION"``."""
    pattern = re.compile(r'typer\.Option\(\s*"' + re.escape(option) + '"')
    return {p.name: n for p in sorted(CLI.glob("*.py")) if (n := len(pattern.findall(p.read_text())))}


@pytest.mark.parametrize("option", SHARED)
def test_each_capture_option_is_declared_once_for_the_four_commands(option):
    declared = _declarations(option)
    assert declared.get("targets.py") == 1
    assert not {f"{c}.py" for c in COMMANDS} & set(declared)
    # diff, versions and envs take lists (two sides, several releases) and declare their own
    assert set(declared) <= {"targets.py", "diff.py", "versions.py", "envs.py"}


def _params(command: str) -> dict[str, object]:
    group = typer.main.get_command(app)
    cmd = group.commands[command]  # type: ignore[attr-defined]
    return {p.name: p for p in cmd.params}


def test_the_four_commands_take_the_same_target_and_options():
    seen = {}
    for command in COMMANDS:
        params = _params(command)
        target = params["target"]
        assert target.param_type_name == "argument" and not target.required  # type: ignore[attr-defined]
        shared = {opt: (p.help, p.default)  # type: ignore[attr-defined]
                  for p in params.values() for opt in p.opts if opt in SHARED}  # type: ignore[attr-defined]
        assert set(shared) == set(SHARED), command
        seen[command] = shared
    assert seen["render"] == seen["show"] == seen["dump"] == seen["stats"]


def test_the_options_reach_the_command(capsys, tmp_path):
    # --pre/--post and --module arrive: a single post file is read; --arg with a saved capture is refused
    code, out, _ = run_cli(["stats", "--post", str(SAVED / "post.hlo"), "--json"], capsys)
    assert code == 0 and '"instructions"' in out
    code, _, err = run_cli(["dump", str(SAVED), "--arg", "f32[2]", "-o", str(tmp_path / "x")], capsys)
    assert code == 2 and "--arg applies to model.py:function targets, not to a saved capture" in err
    code, _, err = run_cli(["render", str(SAVED), "--module", "1", "-o", str(tmp_path / "x.dot")], capsys)
    assert code == 2 and "--module picks a module of an XLA dump folder" in err
    code, _, err = run_cli(["show", "--pre", "a.hlo", "--post", "b.hlo", "--tf", "2.17"], capsys)
    assert code == 2 and "--pre/--post files" in err
