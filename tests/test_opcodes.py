"""One vocabulary: every set of opcodes lives in hloviz/opcodes.py under a name that says what it is.

Checked two ways: the sets' relations (a role is not a category, and the roles do not overlap
where they must not), and an AST walk that fails when a module outside ``opcodes.py`` spells out
a set of opcodes of its own instead of importing one.
"""

from __future__ import annotations

import ast
from pathlib import Path

from hloviz import opcodes

PACKAGE = Path(__file__).resolve().parent.parent / "hloviz"

ROLE_SETS = ("BOOKKEEPING", "BODY_CALLERS", "ASYNC_TAILS", "INLINING_CALLERS", "PASS_THROUGH_CALLERS",
             "VALUE_FORWARDING_CALLERS", "NOT_FOLDABLE", "COMMUTATIVE")
CATEGORY_SETS = ("ELEMENTWISE", "DATA_MOVEMENT", "DOT", "CONVOLUTION", "REDUCE", "CONTROL_FLOW", "COLLECTIVE",
                 "TUPLE")
#: Sets outside opcodes.py that are known and why they stay (each entry: module path, name).
ALLOWED_ELSEWHERE = {
    # The parser's own tables (syntax, not analysis): which opcodes may skip attribute splitting,
    # which "-start" forms are instructions of their own, which shapes follow the first operand.
    # The parser's rework (issue 11) decides whether they move here.
    ("parser/calls.py", "NEVER_CALLS"),
    ("parser/asynchronous.py", "NATIVE_START"),
    ("parser/shapes.py", "_SAME_AS_FIRST_OPERAND"),
}


def known_opcodes() -> set[str]:
    return set().union(*(getattr(opcodes, n) for n in ROLE_SETS + CATEGORY_SETS),
                       {"parameter", "constant", "fusion", "custom-call"})


def test_roles_and_categories_are_different_words():
    # Ops whose bodies run are control flow to the eye; the async finishers are drawn the same
    # way but run no body, and the kernel count must tell them apart.
    assert opcodes.BODY_CALLERS < opcodes.CONTROL_FLOW
    assert {"async-update", "async-done"} <= opcodes.CONTROL_FLOW - opcodes.BODY_CALLERS
    assert not opcodes.ASYNC_TAILS & opcodes.BODY_CALLERS
    assert opcodes.VALUE_FORWARDING_CALLERS <= opcodes.PASS_THROUGH_CALLERS
    assert opcodes.INLINING_CALLERS <= opcodes.BODY_CALLERS
    assert opcodes.BODY_CALLERS <= opcodes.NOT_FOLDABLE  # a loop is not folded as a whole
    assert opcodes.COMMUTATIVE <= opcodes.ELEMENTWISE_BINARY
    assert {opcodes.category(op) for op in opcodes.BODY_CALLERS} == {"control-flow"}


def test_every_category_set_maps_to_its_category():
    expected = {"ELEMENTWISE": "elementwise", "DOT": "dot", "CONVOLUTION": "convolution", "REDUCE": "reduce",
                "CONTROL_FLOW": "control-flow", "COLLECTIVE": "collective", "TUPLE": "tuple"}
    for name, cat in expected.items():
        wrong = {op: opcodes.category(op) for op in getattr(opcodes, name) if opcodes.category(op) != cat}
        assert not wrong, f"{name}: {wrong}"
    assert opcodes.category("an-opcode-from-a-newer-xla") == "other"


def test_no_module_spells_out_its_own_opcode_set():
    known = known_opcodes()
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel == "opcodes.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, (ast.Assign, ast.AnnAssign)) or node.value is None:
                continue
            strings = [c.value for c in ast.walk(node.value) if isinstance(c, ast.Constant) and isinstance(c.value, str)]
            is_set = any(isinstance(c, ast.Set) or (isinstance(c, ast.Call) and getattr(c.func, "id", "") == "frozenset")
                         for c in ast.walk(node.value))
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = [t.id for t in targets if isinstance(t, ast.Name)]
            if is_set and len(strings) >= 2 and sum(s in known for s in strings) >= 2 \
                    and not any((rel, n) in ALLOWED_ELSEWHERE for n in names):
                found.append(f"{rel}:{node.lineno} {names}: {sorted(strings)[:6]}")
    assert not found, "opcode sets outside hloviz/opcodes.py (import or add one there):\n" + "\n".join(found)
