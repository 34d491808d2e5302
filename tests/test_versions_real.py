"""The real thing, once: ``hloviz versions`` installs TensorFlow 2.17 and 2.21 (from the uv cache
or PyPI) and what it captures matches the saved two-version captures.

Slow the first time (about 500 MB to download, then a minute of installing); later runs reuse the
environments in ``~/.cache/hloviz/envs`` and take the time of two captures. Skipped when neither
the environments exist nor the package index can be reached.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import hloviz
from hloviz.analysis.diff import diff_modules

from .test_versions import facts

ROOT = Path(__file__).resolve().parent.parent
SAVED = ROOT / "samples" / "captures"


@pytest.mark.slow
@pytest.mark.requires_network
def test_fused_additions_under_real_tf_217_and_221_matches_the_saved_captures(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(ROOT)  # this checkout's hloviz, whichever Python runs the tests
    out = subprocess.run([sys.executable, "-m", "hloviz", "versions", "samples/fused_additions.py:fused_additions",
                          "--tf", "2.17", "--tf", "2.21", "--format", "json", "--save", str(tmp_path)],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    v17, v21 = data["versions"]
    assert v17["tensorflow"].startswith("2.17.") and v21["tensorflow"].startswith("2.21.")
    assert "tf 2.17: done in " in out.stderr and "tf 2.21: done in " in out.stderr
    for got, name in ((v17, "fused_additions-tf2.17"), (v21, "fused_additions-tf2.21")):
        assert {k: got[k] for k in facts(SAVED / name)} == facts(SAVED / name)
        fresh = hloviz.parse_file(Path(got["capture"]) / "post.hlo")
        saved = hloviz.parse_file(SAVED / name / "post.hlo")
        d = diff_modules(saved, fresh)  # names (a_inference_…_1488__) differ; the structure must not
        assert d.by_status("changed") == [] and d.by_status("added") == [] and d.by_status("removed") == []
    saved_pair = diff_modules(hloviz.parse_file(SAVED / "fused_additions-tf2.17" / "post.hlo"),
                              hloviz.parse_file(SAVED / "fused_additions-tf2.21" / "post.hlo"))
    summary = data["diffs"][0]["diff"]["summary"]
    assert (summary["changed"], summary["added"], summary["removed"]) == (
        len(saved_pair.by_status("changed")), len(saved_pair.by_status("added")), len(saved_pair.by_status("removed")))
