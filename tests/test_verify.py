"""hloviz.verify: what XLA would refuse that the tolerant parser read.

The oracle is XLA: modules XLA produced (the samples' captures) must verify clean, and for each
rule a module that keeps it and one that breaks it get the verdict XLA's own parser gives them
(jaxlib's ``hlo_module_from_text``). The conformance corpus checks the rest
(tests/test_conformance.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest

import hloviz

ROOT = Path(__file__).resolve().parent.parent


def _module(body: str, header: str = "", signature: str = "") -> str:
    return f"HloModule m{header}\n\nENTRY e {signature}{{\n{body}\n}}\n"


P0 = "  p0 = f32[2] parameter(0)\n"
#: (rule, a module that keeps it, the same module breaking it): hand-written, one fault each.
CASES = [
    ("literal nesting", _module("  ROOT c = f32[2,2] constant({{1, 2}, {3, 4}})"),
     _module("  ROOT c = f32[2,2] constant({1, 2, 3, 4})")),
    ("literal count", _module("  ROOT c = f32[3] constant({1, 2, 3})"),
     _module("  ROOT c = f32[3] constant({1, 2})")),
    ("stray brace", _module("  ROOT c = f32[2] constant({1, 2})"),
     _module("  ROOT c = f32[2] constant(}{1, 2})")),
    ("s8 range", _module("  ROOT c = s8[] constant(-128)"), _module("  ROOT c = s8[] constant(128)")),
    ("f16 range", _module("  ROOT c = f16[] constant(65504)"), _module("  ROOT c = f16[] constant(65536)")),
    ("NaN payload", _module("  ROOT c = bf16[1] constant({nan(0x7f)})"),
     _module("  ROOT c = bf16[1] constant({nan(0x80)})")),
    ("window", _module(P0 + "  i = f32[] constant(0)\n  ROOT r = f32[2] reduce-window(p0, i), window={size=1 pad=0_0}, to_apply=s")
     .replace("ENTRY", "s {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT c = f32[] add(a, b)\n}\n\nENTRY"),
     _module(P0 + "  i = f32[] constant(0)\n  ROOT r = f32[2] reduce-window(p0, i), window={size=1 pad=0}, to_apply=s")
     .replace("ENTRY", "s {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT c = f32[] add(a, b)\n}\n\nENTRY")),
    ("result_accuracy", _module(P0 + "  ROOT x = f32[2] exponential(p0), result_accuracy={mode=highest}"),
     _module(P0 + "  ROOT x = f32[2] exponential(p0), result_accuracy={mode=best}")),
    ("result_accuracy op", _module(P0 + "  ROOT x = f32[2] tanh(p0), result_accuracy={mode=highest}"),
     _module(P0 + "  ROOT x = f32[2] negate(p0), result_accuracy={mode=highest}")),
    ("api_version", _module(P0 + '  ROOT x = f32[2] custom-call(p0), custom_call_target="f", '
                            "api_version=API_VERSION_TYPED_FFI"),
     _module(P0 + '  ROOT x = f32[2] custom-call(p0), custom_call_target="f", api_version=API_VERSION_NEWEST')),
    ("input_output_alias", _module(P0 + "  ROOT x = f32[2] negate(p0)", ", input_output_alias={ {}: (0, {}, may-alias) }"),
     _module(P0 + "  ROOT x = f32[2] negate(p0)", ", input_output_alias={ {}: (0, may-alias) }")),
    ("buffer_donor", _module(P0 + "  ROOT x = f32[2] negate(p0)", ", buffer_donor={ (0, {}) }"),
     _module(P0 + "  ROOT x = f32[2] negate(p0)", ", buffer_donor={ (first, {}) }")),
    ("arity", _module(P0 + "  ROOT x = pred[2] compare(p0, p0), direction=EQ"),
     _module(P0 + "  ROOT x = pred[2] compare(p0), direction=EQ")),
    ("opcode", _module(P0 + "  ROOT x = f32[2] negate(p0)"), _module(P0 + "  ROOT x = f32[2] negated(p0)")),
    ("signature", _module(P0 + "  ROOT x = f32[2] negate(p0)", signature="(p0: f32[2]) -> f32[2] "),
     _module(P0 + "  ROOT x = f32[2] negate(p0)", signature="(p0: f32[2]) -> f32[3] ")),
    ("infeed", _module("  t = token[] after-all()\n  ROOT i = (f32[2], token[]) infeed(t)"),
     _module("  t = token[] after-all()\n  ROOT i = f32[2] infeed(t)")),
    ("layout", _module("  ROOT p = f32[2,2]{1,0:D(D,C)} parameter(0)"),
     _module("  ROOT p = f32[2,2]{1,0:D(D,Q)} parameter(0)")),
]


@pytest.mark.parametrize(("rule", "good", "bad"), CASES, ids=[c[0] for c in CASES])
def test_each_rule_keeps_the_good_module_and_reports_the_broken_one(rule, good, bad):
    assert hloviz.verify(hloviz.parse(good)) == []
    problems = hloviz.verify(hloviz.parse(bad))
    assert len(problems) == 1, problems
    assert str(problems[0]).startswith(("e", "m")), "says where"


@pytest.mark.requires_jax
@pytest.mark.parametrize(("rule", "good", "bad"), CASES, ids=[c[0] for c in CASES])
def test_xla_gives_each_case_the_same_verdict(rule, good, bad):
    from jaxlib import _hlo  # pyright: ignore[reportAttributeAccessIssue]  # private extension module, absent from jaxlib's stubs

    def xla_accepts(text: str) -> bool:
        try:
            _hlo.hlo_module_from_text(text)
        except Exception:  # noqa: BLE001 - XLA raises its own error types
            return False
        return True

    assert xla_accepts(good), f"{rule}: the good module must be one XLA takes"
    assert not xla_accepts(bad), f"{rule}: the broken module must be one XLA refuses"


def test_what_xla_wrote_verifies_clean():
    paths = sorted((ROOT / "samples" / "captures").rglob("*.hlo")) + sorted((ROOT / "samples" / "captures").rglob("*.hlo.gz"))
    assert len(paths) >= 20
    dirty = {str(p.relative_to(ROOT)): [str(x) for x in hloviz.verify(hloviz.parse_file(p))][:2] for p in paths}
    assert {k: v for k, v in dirty.items() if v} == {}
