"""An entry computation that only calls another (a JAX function calling a jitted step) is drawn as
what it calls: the step's layers and its update, not one closed ``call`` box and the ROOT.

Fixture: ``tests/data/orders/nested_jit_step.hlo``, made by ``tests/data/orders/nested_jit.py``
(JAX, CPU, pre-optimization: XLA inlines the call when it optimizes). An unseen Flax step written
this way (``benchmarks/heldout/round18_jax.py``) drew two boxes before optimization.

Oracles: the HLO text, read with regular expressions — the entry's instructions (a ``call`` and
what only passes values to and from it), the called computation's name and its instructions'
``op_name`` scopes.
"""

from __future__ import annotations

import re
from pathlib import Path

from hloviz.parser import parse
from hloviz.render.views import OVERVIEW_BUDGET, ViewOptions, draw_module

FIXTURE = Path(__file__).resolve().parent / "data" / "orders" / "nested_jit_step.hlo"
_LINE = re.compile(r"^\s*(?:ROOT\s+)?%?([\w.\-]+) = (?:\([^=]*?\)|\S+) ([\w\-]+)\((.*)$", re.MULTILINE)


def _computations(text: str) -> dict[str, str]:
    """name → body text of each computation (ENTRY included, under ``ENTRY``)."""
    out = {}
    for m in re.finditer(r"^(ENTRY )?%?([\w.\-]+) [^\n]*\{\n(.*?)\n\}", text, re.MULTILINE | re.DOTALL):
        out["ENTRY" if m.group(1) else m.group(2)] = m.group(3)
    return out


def test_the_fixtures_entry_only_calls_the_step():
    comps = _computations(FIXTURE.read_text(encoding="utf-8"))
    ops = [op for _n, op, _r in _LINE.findall(comps["ENTRY"])]
    assert ops.count("call") == 1
    assert set(ops) <= {"parameter", "constant", "call", "get-tuple-element", "tuple"}


def test_the_step_is_drawn_layer_by_layer_not_as_one_call():
    text = FIXTURE.read_text(encoding="utf-8")
    comps = _computations(text)
    callee = re.search(r"call\([^)]*\), to_apply=%?([\w.\-]+)", comps["ENTRY"]).group(1)
    scopes: dict[str, set[str]] = {}
    for name, _op, rest in _LINE.findall(comps[callee]):
        m = re.search(r'op_name="(?:\w+\()*(hidden|out|sgd)[)/]', rest)  # jvp(hidden)/…, transpose(jvp(out))/…, sgd/…
        if m:
            scopes.setdefault(m.group(1), set()).add(name)
    assert set(scopes) == {"hidden", "out", "sgd"}
    view = draw_module(parse(text), options=ViewOptions(budget=OVERVIEW_BUDGET))
    boxes = {s: {view.node_of[n] for n in names if n in view.node_of} for s, names in scopes.items()}
    assert all(boxes.values()), boxes
    assert len(set().union(*boxes.values())) >= 3, boxes  # drawn as the entry, all were the call's one box
    assert any("only calls" in n for n in view.notes)


def test_the_steps_arguments_are_drawn_with_what_reads_them():
    # the weights the call passes in are the step's parameters: each folded into a box that
    # reads it (its layer), as the entry's own parameters are, not left in the call's scope
    text = FIXTURE.read_text(encoding="utf-8")
    comps = _computations(text)
    callee = re.search(r"call\([^)]*\), to_apply=%?([\w.\-]+)", comps["ENTRY"]).group(1)
    lines = _LINE.findall(comps[callee])
    # the weights: the call's operands that are the entry's constants (closed over), by position
    entry = {n: op for n, op, _r in _LINE.findall(comps["ENTRY"])}
    operands = re.search(r"call\(([^)]*)\)", comps["ENTRY"]).group(1).replace("%", "").replace(" ", "").split(",")
    passed = {k for k, name in enumerate(operands) if entry.get(name) == "constant"}
    weights = [n for n, op, rest in lines if op == "parameter" and int(rest.split(")", 1)[0]) in passed]
    view = draw_module(parse(text), options=ViewOptions(budget=OVERVIEW_BUDGET))
    held: dict[str, set[str]] = {}
    for inst, box in view.node_of.items():
        held.setdefault(box, set()).add(inst)
    assert len(weights) >= 2, weights
    for w in weights:
        readers = {n for n, _op, rest in lines if re.search(rf"[(,]\s*%?{re.escape(w)}[,)]", "(" + rest)}
        assert held[view.node_of[w]] & readers, f"{w} is not drawn with what reads it"
