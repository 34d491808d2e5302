"""hloviz's tests.

:func:`present` unwraps an optional result a test relies on (a module's entry, a computation's
root, a regex match): the test fails there, with the reason, rather than later on an attribute
of None, and the type checker knows what the test goes on to use.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from hloviz.ir import Computation, HloModule, Instruction

_T = TypeVar("_T")


def present(value: _T | None, what: str = "a value") -> _T:
    """``value``, asserting it is not None (``what`` names it in the failure)."""
    assert value is not None, f"expected {what}, got None"
    return value


def entry_of(module: HloModule) -> Computation:
    """``module``'s ENTRY computation (every module a test parses has one)."""
    return present(module.entry, f"an ENTRY computation in {module.name}")


def root_of(module: HloModule) -> Instruction:
    """The ROOT instruction of ``module``'s ENTRY computation."""
    return present(entry_of(module).root, f"a ROOT in {module.name}'s ENTRY computation")


def run_cli(args, capsys) -> tuple[int, str, str]:
    """``hloviz ARGS`` in-process: (exit status, stdout, stderr), the status as the process would
    end with it: a command that returns is 0, ``SystemExit(None)`` 0, a message 1, a code itself.
    The one in-process runner of the tests; the subprocess one is :func:`run_cli_process`."""
    from hloviz.cli import main

    try:
        main(list(args))
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else int(exc.code is not None)
    out = capsys.readouterr()
    return code, out.out, out.err


def run_cli_process(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    """``python -m hloviz ARGS`` in a fresh process with this checkout first on the path: for
    what only a real process shows (file descriptors 1 and 2, signals, a crashing child)."""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    return subprocess.run([sys.executable, "-m", "hloviz", *args], env=env, capture_output=True, text=True,
                          timeout=timeout)


_SVG_NODE = re.compile(r'<g id="node\d+" class="node">(.*?)</g>', re.DOTALL)
_SVG_NUM = re.compile(r"-?\d+(?:\.\d+)?")
_SVG_TEXT = re.compile(r"<text[^>]*>([^<]*)</text>")


def box_labels(svg: str) -> list[tuple[float, str]]:
    """(top y, first line of the label) of every box Graphviz drew in ``svg``, top to bottom:
    read from the SVG itself, not from what hloviz meant to draw."""
    out = []
    for body in _SVG_NODE.findall(svg):
        shape = re.search(r'\s(?:points|d)="([^"]+)"', body)
        texts = _SVG_TEXT.findall(body)
        if shape is None or not texts:
            continue
        ys = [float(v) for v in _SVG_NUM.findall(shape.group(1))][1::2]
        out.append((min(ys), texts[0]))
    return sorted(out)


def drawn_boxes(hlo_text: str, tmp_path: Path) -> list[dict]:
    """The boxes of ``hloviz render`` of an HLO text made by a test (its default picture, read
    back from the JSON export): each with its rows and every instruction it holds."""
    import json

    from hloviz.cli import main

    path = tmp_path / "m.hlo"
    path.write_text(hlo_text, encoding="utf-8")
    try:
        main(["render", str(path), "-o", str(tmp_path / "m.json")])
    except SystemExit as stop:
        assert stop.code in (0, None)
    return json.loads((tmp_path / "m.json").read_text(encoding="utf-8"))["nodes"]
