"""The canonical printer: round trips, and XLA's own parser accepts what it prints."""

from __future__ import annotations

import json

import pytest

import hloviz

from . import root_of
from .conftest import CONFORMANCE


def _accepted():
    path = CONFORMANCE / "MANIFEST.json"
    if not path.exists():
        return []
    return [e["file"] for e in json.loads(path.read_text()) if e["xla_parses"]]


def _accepted_or_skip() -> list[str]:
    """The corpus files XLA accepts; the test is skipped (not passed over an empty list) when
    ../shared/conformance is not beside this checkout."""
    names = _accepted()
    if not names:
        pytest.skip("../shared/conformance is not beside this checkout")
    return names


def _fields(module):
    return [
        (c.name, c.is_entry, c.execution_thread,
         [(i.name, i.opcode, str(i.shape), [o.name for o in i.operands], i.literal, i.parameter_number,
           {k: " ".join(v.split()) for k, v in i.attributes.items()},
           {k: [c.name for c in v] for k, v in i.calls_by_attribute.items()},
           [p.name for p in i.control_predecessors], i is c.root) for i in c.instructions])
        for c in module.computations
    ]


@pytest.mark.parametrize("name", _accepted())
def test_round_trip_is_stable_and_equal(name):
    first = hloviz.parse((CONFORMANCE / name).read_text(), filename=name)
    text = hloviz.to_text(first)
    second = hloviz.parse(text, filename="printed")
    assert hloviz.to_text(second) == text
    assert _fields(second) == _fields(first)


@pytest.mark.requires_jax
def test_xla_accepts_everything_the_printer_writes():
    from jaxlib import _hlo  # pyright: ignore[reportAttributeAccessIssue]  # private extension module, absent from jaxlib's stubs

    rejected = []
    for name in _accepted_or_skip():
        text = hloviz.to_text(hloviz.parse((CONFORMANCE / name).read_text()))
        try:
            _hlo.hlo_module_from_text(text)
        except Exception as err:  # noqa: BLE001 - XLA raises its own error types
            rejected.append((name, str(err).splitlines()[0]))
    assert rejected == []


def test_printer_writes_names_with_percent_and_keeps_metadata():
    text = """HloModule m

ENTRY e {
  x = f32[2]{0} parameter(0), metadata={op_name="x"}
  ROOT y = f32[2]{0} negate(x), metadata={op_type="Neg" op_name="neg"}
}
"""
    printed = hloviz.to_text(hloviz.parse(text))
    assert "ENTRY %e (x: f32[2]{0}) -> f32[2]{0} {" in printed
    assert '  ROOT %y = f32[2]{0} negate(%x), metadata={op_type="Neg" op_name="neg"}' in printed


def test_names_free_form_for_fingerprints():
    from hloviz.printer import instruction_text

    m = hloviz.parse("HloModule m\n\nENTRY e {\n  a = f32[] parameter(0)\n"
                     "  ROOT b = f32[] add(a, a), metadata={op_name=\"q\"}\n}\n")
    assert instruction_text(root_of(m), names=False, metadata=False) == "f32[] add($0, $1)"


def _literal_over_lines(spaces: int) -> str:
    """A constant whose literal goes on over two lines and holds a run of ``spaces`` spaces."""
    return ("HloModule m\n\nENTRY e {\n  ROOT c = f32[3] constant({1,\n    2," + " " * spaces + "3})\n}\n")


def test_a_value_over_lines_prints_on_one_line_in_linear_time():
    """The spaces around a newline are replaced by one; a pattern tried from every space of a long
    run (``\\s*\\n``) scanned the rest of the run each time: quadratic (100k spaces: seconds).
    CPU time of 1x, 10x and 100x in the same run, as in ``test_hostile_growth.py``."""
    import time

    from hloviz.printer import to_text

    printed = to_text(hloviz.parse(_literal_over_lines(3)))
    assert "constant({1, 2,   3})" in printed and "\n    2" not in printed
    times = {}
    for factor in (1, 10, 100):
        module = hloviz.parse(_literal_over_lines(1_000 * factor))
        best = float("inf")
        for _ in range(3):
            started = time.process_time()
            to_text(module)
            best = min(best, time.process_time() - started)
        times[factor] = best
    growth = (times[100] - times[1]) / max(times[10] - times[1], 5e-3)
    assert growth < 30, times


def _gemm_config_over_lines(contracting: str) -> str:
    """A custom-call whose backend_config dict goes on over two lines, as XLA's GPU dumps
    write cuBLAS configs; ``contracting`` is the text between the first ``[`` and ``]``."""
    return ('HloModule m\n\nENTRY e {\n  p = f16[8,8]{1,0} parameter(0)\n'
            '  ROOT c = f16[8,8]{1,0} custom-call(p, p), custom_call_target="__cublas$gemm",\n'
            '    backend_config={"lhs":[' + contracting + '],\n      "rhs":["0"]}\n}\n')


def test_a_config_over_lines_round_trips_and_a_stray_quote_in_it_is_rejected():
    """Found by tests/test_fuzz.py: ``[01"]`` (a quote dropped) was accepted line by line, where
    the stray quote is skipped, and printed on one line, where it opens a string running into
    the next line's ``"rhs"``: the printed text did not parse. The statement over lines now
    reads as its one-line print does: rejected, at the stray quote."""
    from hloviz.printer import to_text

    printed = to_text(hloviz.parse(_gemm_config_over_lines('"1"')))
    assert 'backend_config={"lhs":["1"], "rhs":["0"]}' in printed
    assert to_text(hloviz.parse(printed)) == printed
    bad = _gemm_config_over_lines('01"')
    with pytest.raises(hloviz.HloParseError) as raised:
        hloviz.parse(bad, filename="gemm.hlo")
    message = str(raised.value)
    assert "gemm.hlo:6:" in message and "unterminated string" in message, message
    column = int(message.split("gemm.hlo:6:")[1].split(":")[0])
    assert bad.splitlines()[5][column - 1] == '"', message  # the caret is on the stray quote
