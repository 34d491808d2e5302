"""Op names nested far deeper than any model: a bounded scope tree, no recursion, every command.

A review's input: one op name ``a/a/…/a/neg`` with 40,000 levels, a few hundred bytes as
``.hlo.gz``, cost 6-8 GB (every scope kept its whole path), and 1,500 levels broke
``render -o x.html`` and ``show`` on Python's recursion limit. The expected depths here are hand
counts from the op names the tests write; the growth of the work is
``tests/test_hostile_growth.py``'s ``deep_scope`` case.
"""

from __future__ import annotations

import gzip

import pytest

import hloviz
from hloviz.analysis.opnames import parse_op_name
from hloviz.analysis.scopes import build_scope_tree

from . import hostile_inputs as H
from . import run_cli


def _depth_of_neg(levels: int) -> tuple[int, str]:
    module = hloviz.parse(H.deep_scope(levels))
    tree = build_scope_tree(module)
    neg = next(i for i in module.instructions() if i.opcode == "negate")
    scope = tree.scope_of(neg)
    return scope.depth, scope.path


@pytest.mark.parametrize("levels", [1, 63, 64])
def test_op_names_up_to_64_scopes_keep_every_level(levels):
    assert _depth_of_neg(levels) == (levels, "/".join(["a"] * levels))


@pytest.mark.parametrize("levels", [65, 1_500, 40_000])
def test_deeper_op_names_are_filed_in_their_64th_scope(levels):
    assert _depth_of_neg(levels) == (64, "/".join(["a"] * 64))


@pytest.mark.parametrize("name", [
    "jvp(a/" * 1_500 + "x" + ")" * 1_500,  # JAX transformations around scopes, nested
    "transpose(jvp(a/" * 3_000 + "x" + "))" * 3_000,
    "jvp(" * 40_000 + "Block" + ")" * 40_000,  # wrappers around one name
])
def test_nested_jax_transformations_are_read_without_recursion(name):
    op = parse_op_name(name)
    assert op.op in ("x", "Block")
    assert op.scope in (("a",) * 64, ())
    assert op.phase == ("backward" if name.startswith("transpose") else "forward")


@pytest.mark.requires_dot
@pytest.mark.parametrize("command", [["render", "-o", "x.html"], ["show", "-o", "site"],
                                     ["stats", "--by", "scope"], ["diff", "SELF", "-o", "d.svg"]])
def test_every_command_takes_40000_levels_from_a_tiny_gz(tmp_path, monkeypatch, capsys, command):
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "deep.hlo.gz"
    path.write_bytes(gzip.compress(H.deep_scope(40_000).encode(), 9))
    assert path.stat().st_size < 400
    args = [command[0], str(path), *[str(path) if a == "SELF" else a for a in command[1:]]]
    code, out, err = run_cli(args, capsys)
    assert code == 0, err
    if command[0] == "stats":
        assert "by scope" in out
