"""The Makefile documents itself: every target says what it does, and ``make help`` lists them."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TARGET = re.compile(r"^([a-z][a-z_-]*):(?!=)(.*)$")


def targets() -> dict[str, str]:
    """Target name → its ``## `` comment ("" when it has none)."""
    out = {}
    for line in (ROOT / "Makefile").read_text(encoding="utf-8").splitlines():
        m = TARGET.match(line)
        if m:
            out[m.group(1)] = m.group(2).split("## ", 1)[1].strip() if "## " in m.group(2) else ""
    return out


def test_every_target_says_what_it_does():
    found = targets()
    assert {"help", "test", "lint", "typecheck", "bench", "conformance"} <= set(found)
    assert not [t for t, doc in found.items() if not doc], "add a `## what it does` comment to these targets"


@pytest.mark.skipif(shutil.which("make") is None, reason="no make")
def test_make_help_lists_every_target():
    out = subprocess.run(["make", "-s", "help"], cwd=ROOT, capture_output=True, text=True, timeout=60).stdout
    listed = {line.split()[1] for line in out.splitlines() if line.startswith("make ")}
    assert listed == set(targets())
    assert "ruff" in out and "pyright" in out
