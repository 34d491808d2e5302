"""The package as a whole: a light `import hloviz`, and every command documented."""

from __future__ import annotations

import re
import subprocess
import sys

from hloviz.cli import app

from . import present
from .conftest import ROOT


def test_import_hloviz_loads_no_framework_and_no_cli_toolkit():
    code = ("import sys, hloviz, hloviz.api\n"
            "heavy = ('tensorflow', 'jax', 'jaxlib', 'typer', 'rich', 'click', 'networkx', 'sphinx', "
            "'docutils', 'mkdocs', 'yaml')\n"
            "print(sorted({m.split('.')[0] for m in sys.modules if m.split('.')[0] in heavy}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert out.stdout.strip() == "[]"


def test_public_names_are_the_defining_modules_objects_imported_on_first_use():
    # The oracle: the modules each name is documented to come from (hloviz/__init__ docstring),
    # imported directly; and a fresh `import hloviz` has not imported the analyses yet.
    code = ("import sys, hloviz\n"
            "print(sorted(m for m in sys.modules if m.startswith(('hloviz.analysis', 'hloviz.parser', "
            "'hloviz.capture'))))\n"
            "read = hloviz.capture.load_target\n"  # a submodule read as an attribute, never imported by name
            "import hloviz.verify.structure\n"
            "from hloviz.analysis import analyze, kernels\n"
            "from hloviz.analysis.diff import diff_modules\n"
            "from hloviz.parser import parse\n"
            "from hloviz.verify import verify\n"
            "print(all(getattr(hloviz, n) is f for n, f in [('analyze', analyze), ('kernels', kernels), "
            "('diff_modules', diff_modules), ('parse', parse), ('verify', verify)]))\n"
            "print([n for n in hloviz.__all__ if getattr(hloviz, n, None) is None])\n"
            "import hloviz.api.diff, hloviz.api.stats\n"
            "from hloviz.api.diff import diff\n"
            "from hloviz.capture import load_target\n"
            "print(hloviz.api.diff is diff, callable(hloviz.api.stats), read is load_target)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert out.stdout.split("\n")[:4] == ["[]", "True", "[]", "True True True"]


def _commands() -> list[str]:
    """Commands and command groups (``hloviz envs …``)."""
    names = [c.name or present(c.callback).__name__ for c in app.registered_commands]
    names += [present(g.name or present(g.typer_instance).info.name) for g in app.registered_groups]
    return sorted(names)


def test_every_command_is_in_the_cli_reference_table_and_has_help():
    readme = (ROOT / "docs" / "cli.md").read_text()
    table = {m.group(1) for m in re.finditer(r"^\| `hloviz (\w+)", readme, re.MULTILINE)}
    assert set(_commands()) == table
    for name in _commands():
        out = subprocess.run([sys.executable, "-m", "hloviz", name, "--help"], capture_output=True, text=True,
                             env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "COLUMNS": "100"})
        assert out.returncode == 0 and "Usage: hloviz " + name in out.stdout, out.stderr


def test_exit_codes_are_documented_in_the_cli_reference_and_help():
    readme = (ROOT / "docs" / "cli.md").read_text()
    for code in ("| 0 |", "| 1 |", "| 2 |", "| 130 |"):
        assert code in readme
    out = subprocess.run([sys.executable, "-m", "hloviz", "--help"], capture_output=True, text=True,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "COLUMNS": "100"})
    assert "Exit codes: 0 ok, 1 a --fail-on check matched, 2 bad input or missing tool, 130" in " ".join(out.stdout.split())
