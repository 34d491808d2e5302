"""A command line imports only the module of the command it runs (the others' imports cost each
command some 40 ms); ``--help`` and a misspelt name still see every command.

The oracle is a fresh Python process's ``sys.modules`` and the command modules found on disk
under ``hloviz/cli/`` (each one that writes ``@app.command`` or ``add_typer``), not the table
under test.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

CLI = Path(__file__).resolve().parent.parent / "hloviz" / "cli"
ON_DISK = sorted(p.stem for p in CLI.glob("*.py")
                 if "@app.command" in p.read_text() or "app.add_typer(" in p.read_text())

_PROBE = """
import json, sys
from hloviz.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
print(json.dumps(sorted(m.rsplit(".", 1)[1] for m in sys.modules if m.startswith("hloviz.cli."))))
"""


def _loaded(*args: str) -> tuple[set[str], str]:
    done = subprocess.run([sys.executable, "-c", _PROBE, *args], capture_output=True, text=True, timeout=120)
    last = done.stdout.strip().splitlines()[-1]
    return set(json.loads(last)) & set(ON_DISK), done.stdout + done.stderr


def test_the_command_modules_are_the_ones_found_on_disk():
    assert len(ON_DISK) >= 9 and {"render", "show", "stats", "diff", "envs"} <= set(ON_DISK)


@pytest.mark.parametrize("args", [("render", "--help"), ("--debug", "render", "--help"),
                                  ("--max-input", "4GiB", "render", "--help"), ("--max-input=4GiB", "render", "--help")])
def test_a_command_line_imports_only_its_commands_module(args):
    loaded, out = _loaded(*args)
    assert loaded == {"render"}, out
    assert "--budget" in out  # render's own help


@pytest.mark.parametrize("args", [("--help",), ("rendr",)])
def test_help_and_a_misspelt_name_see_every_command(args):
    loaded, out = _loaded(*args)
    assert loaded == set(ON_DISK)
    if args == ("--help",):
        assert all(f"  {name} " in out for name in ("render", "show", "stats", "diff", "memory", "passes", "envs"))
    else:
        assert "Did you mean 'render'?" in out


def test_the_app_read_from_outside_has_every_command():
    probe = ("import json, typer.main; from hloviz.cli import app; "
             "print(json.dumps(sorted(typer.main.get_command(app).commands)))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True)
    names = set(json.loads(done.stdout))
    assert {"render", "show", "stats", "dump", "diff", "versions", "memory", "passes", "envs"} <= names
