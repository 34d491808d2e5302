"""The overview never titles a repeat by instruction names (issue 33: blocks are named by the
model's structure). A repeat of blocks that each ended in an unnamed instruction was titled by
the first and last copies' instructions: the GPT step's 12 layers ``mul.2775 ×12 (mul.2775 …
mul.3061)``, its AdamW updates ``sub.1126 ×196 (…)``, the Keras CNN's bias corrections
``truediv_2.1 ×7 (…)`` (now drawn in the layers whose variables they correct). Oracle: every instruction name of the capture's two HLO texts, by regex;
the titles from the SVG's bold text."""

from __future__ import annotations

import gzip
import re
from pathlib import Path

import pytest

from hloviz.cli import main

CAPTURES = Path(__file__).resolve().parent.parent / "samples" / "captures"
_BOLD = re.compile(r'<text [^>]*font-weight="bold"[^>]*>([^<]*)</text>')

pytestmark = pytest.mark.requires_dot


def _names(capture: Path) -> set[str]:
    names: set[str] = set()
    for stage in ("pre", "post"):
        plain, packed = capture / f"{stage}.hlo", capture / f"{stage}.hlo.gz"
        text = plain.read_text(encoding="utf-8") if plain.exists() else gzip.decompress(packed.read_bytes()).decode()
        names.update(re.findall(r"^\s*(?:ROOT )?%?([\w.\-]+) = ", text, re.MULTILINE))
    return names


@pytest.mark.parametrize(("capture", "least"), [("jax_gpt_step12", 3), ("keras_transformer", 1), ("densenet121", 3)])
def test_no_repeat_of_the_overview_is_titled_by_instruction_names(capture, least, tmp_path):
    names = _names(CAPTURES / capture)
    out = tmp_path / "x.svg"
    assert main(["render", str(CAPTURES / capture), "--stage", "both", "-o", str(out)]) in (0, None)
    titles = [t for t in _BOLD.findall(out.read_text(encoding="utf-8")) if re.search(r" ×\d+\b", t)]
    assert len(titles) >= least, titles
    named = [t for t in titles if any(w in names for w in re.findall(r"[\w.\-]+", t) if "." in w or "_" in w)]
    assert not named, named
