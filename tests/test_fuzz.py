"""A small fuzzing budget on every test run: mutated real HLO parses or fails cleanly, quickly.

`benchmarks/fuzz_parse.py` runs the same harness with 100,000 inputs.
"""

from __future__ import annotations

import os
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from . import fuzzing

SEEDS = fuzzing.seed_corpus()
BUDGET = int(os.environ.get("HLOVIZ_FUZZ_INPUTS", "1000"))


def test_mutated_modules_parse_or_fail_cleanly():
    report = fuzzing.run(BUDGET, seed=20261129, commands_every=10)
    assert report.inputs == BUDGET and report.commands == (BUDGET + 9) // 10
    assert report.manifests == report.commands, "mutated hloviz-env.json and report records go through too"
    assert report.parsed > BUDGET // 20, "mutations should leave a good share of modules valid"
    assert report.failures == [], report.failures[0][0]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.sampled_from(range(len(SEEDS))), data=st.binary(max_size=64), position=st.floats(0, 1))
def test_arbitrary_bytes_spliced_into_real_modules(seed, data, position):
    base = SEEDS[seed]
    cut = int(len(base) * position)
    outcome = fuzzing.check_input(base[:cut] + data + base[cut:])
    assert outcome.failure is None, outcome.failure


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(list('HloModule ENTRY ROOT %a=f32[](){},"\\\n:->/*0123456789'))))
def test_hlo_flavoured_noise(text):
    outcome = fuzzing.check_input(text.encode())
    assert outcome.failure is None, outcome.failure


@pytest.mark.parametrize("name", ["deep parens", "deep braces", "long name", "huge dims"])
def test_hostile_shapes_are_fast_and_clean(name):
    body = {
        "deep parens": "ROOT r = get-tuple-element(" + "(" * 100000 + ")",
        "deep braces": "ROOT c = f32[] constant(" + "{" * 100000 + "}" * 100000 + ")",
        "long name": "ROOT %" + "n" * 1_000_000 + " = f32[] constant(1)",
        "huge dims": "ROOT c = f32[" + "9" * 400 + "] parameter(0)",
    }[name]
    outcome = fuzzing.check_input(f"HloModule m\n\nENTRY e {{\n  {body}\n}}\n".encode())
    assert outcome.failure is None, outcome.failure
    assert outcome.seconds < 1.0


@pytest.mark.parametrize("mutation", ["_deep_op_name", "_wide_tuple"])
def test_deep_op_names_and_wide_tuples_go_through_every_analysis(mutation):
    """The two mutations of issue 19 on 40 seeds each: an op name 63 to 40,000 scopes deep, a
    tuple of 16 to 2,000 operands; parsed modules go through stats' analyses, the drawing and
    the diff."""
    rng = random.Random(19)
    mutate = getattr(fuzzing, mutation)
    parsed = 0
    for seed in SEEDS[:: max(1, len(SEEDS) // 40)]:
        outcome = fuzzing.check_input(mutate(rng, seed, SEEDS), downstream=True)
        assert outcome.failure is None, outcome.failure
        parsed += outcome.parsed
    assert parsed >= 10, "the mutation should leave modules valid"
