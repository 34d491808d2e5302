"""A ``call`` drawn as one box names the loop it runs (held-out round 76, ``viterbi_decode``: the
backtrace, a reversed ``lax.scan`` of 14 steps, became ``call.4`` whose computation holds only
``while.4`` and its result; the box said ``to_apply: while.3_computation (2 instructions)``, nothing
of a loop; JAX, XLA:CPU, ``tests/data/steps/viterbi_decode``).

Oracle: the HLO text by regular expression (the call's computation, the while in it, its
``known_trip_count``); box rows from the JSON picture.
"""

from __future__ import annotations

import gzip
import re
from pathlib import Path

from .test_unused_parameters_box import post_picture

STEP = Path(__file__).resolve().parent / "data" / "steps" / "viterbi_decode"


def test_a_call_box_names_the_loop_it_runs_and_its_trips(tmp_path):
    post = gzip.decompress((STEP / "post.hlo.gz").read_bytes()).decode()
    calls = re.findall(r"^\s*%([\w.-]+) = [^\n]* call\([^\n]*to_apply=%([\w.-]+)", post, re.MULTILINE)
    found = []
    for call, comp in calls:
        body = re.search(rf"^%{re.escape(comp)} [^\n]*\{{\n(.*?)\n\}}", post, re.MULTILINE | re.DOTALL)
        assert body is not None
        for loop, trips in re.findall(r'%([\w.-]+) = [^\n]* while\([^\n]*"known_trip_count":\{"n":"(\d+)"\}',
                                      body.group(1)):
            found.append((call, loop, trips))
    assert found  # the situation: a call around a loop of known trips
    rows = {r for n in post_picture(STEP, tmp_path)["nodes"] for r in n["rows"]}
    for _call, loop, trips in found:
        assert any(r.endswith(f"runs {loop}, {trips} trips") for r in rows), sorted(r for r in rows if "runs" in r)
