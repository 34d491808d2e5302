"""XLA's own parser corpus (../shared/conformance): same counts as XLA, clean errors otherwise."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import hloviz

from . import entry_of
from .conftest import CONFORMANCE, ROOT

pytestmark = pytest.mark.skipif(not (CONFORMANCE / "MANIFEST.json").exists(),
                                reason="../shared/conformance is not beside this checkout")


def _manifest():
    if not (CONFORMANCE / "MANIFEST.json").exists():
        return []
    return json.loads((CONFORMANCE / "MANIFEST.json").read_text())


@pytest.mark.parametrize("entry", [e for e in _manifest() if e["xla_parses"]], ids=lambda e: e["file"])
def test_modules_xla_accepts_parse_with_xlas_counts(entry):
    m = hloviz.parse((CONFORMANCE / entry["file"]).read_text(), filename=entry["file"])
    assert (len(m.computations), m.instruction_count) == (entry["computations"], entry["instructions"])
    assert entry_of(m).name == entry["entry"]


@pytest.mark.parametrize("entry", [e for e in _manifest() if not e["xla_parses"]], ids=lambda e: e["file"])
def test_modules_xla_rejects_raise_positioned_errors_or_are_tolerated(entry):
    text = (CONFORMANCE / entry["file"]).read_text()
    try:
        hloviz.parse(text, filename=entry["file"])
    except hloviz.HloParseError as err:
        lines = text.split("\n")
        assert 1 <= err.line <= len(lines) and 1 <= err.column <= len(lines[err.line - 1]) + 1


def test_the_shared_runner_reports_everything_passing():
    run = subprocess.run([sys.executable, str(CONFORMANCE.parent / "run")], cwd=ROOT, capture_output=True,
                         text=True, timeout=600, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert run.returncode == 0, run.stdout[-2000:]
    assert "242/242" in run.stdout.splitlines()[-1]
