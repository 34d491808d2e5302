"""The held-out steps kept as test data (``tests/data/steps/NAME/{pre,post}.hlo.gz``: real TF and
JAX output, gzipped), read as text for the tests whose oracles are regular expressions over it."""

from __future__ import annotations

import gzip
from pathlib import Path

STEPS = Path(__file__).resolve().parent / "data" / "steps"


def step_text(name: str, stage: str) -> str:
    """One module of a kept step, ``stage`` ``pre`` or ``post``."""
    return gzip.decompress((STEPS / name / f"{stage}.hlo.gz").read_bytes()).decode()


def step_texts(name: str) -> tuple[str, str]:
    """Both modules of a kept step: (pre, post)."""
    return step_text(name, "pre"), step_text(name, "post")
