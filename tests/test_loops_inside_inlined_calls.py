"""A loop inside a called computation: XLA renames it with the call when it inlines the call, body
and all; and XLA's own calls name what they hold as the call.

* Held-out round 78 (``benchmarks/heldout/round78_jax.py:double_dqn_step``, XLA:CPU;
  ``tests/data/steps/``): ``jax.random.bernoulli`` runs threefry's loop inside ``jit(_uniform)``.
  Before optimization the loop's ops are named relative to that function (``while/body/add``);
  after inlining, ``jit(double_dqn_step)/jit(_bernoulli)/jit(_uniform)/while/body/add``. The
  names were looked up as written in the loop's body, not as the inliner renames them: the op was
  called *eliminated* while its kernels ran.
* The ``loops_newton`` sample: XLA:CPU wraps the inner loop in a ``call`` (``xla_cpu_small_call``)
  named as the loop, and the body's instructions carry that very name. Prefixed with it once more,
  they made a scope ``jit(batched_newton)/while/batched_newton`` no op name writes.

Oracles: the HLO text by regular expression.
"""

from __future__ import annotations

import re
from pathlib import Path

from hloviz.analysis.pre_post.mapping import pre_to_post
from hloviz.analysis.scopes import build_scope_tree
from hloviz.parser import parse

from .step_texts import step_texts

TESTS = Path(__file__).resolve().parent
CAPTURES = TESTS.parent / "samples" / "captures"


def test_an_op_of_a_loop_in_an_inlined_function_keeps_its_kernels():
    pre, post = step_texts("double_dqn_step")
    assert 'op_name="while/body/add"' in pre  # the situation: named relative to its function before
    kernels = re.findall(r'^\s*%([\w.-]+) = \S+ fusion\([^)]*\), kind=\w+, calls=%[\w.-]+, '
                         r'metadata=\{op_name="jit\(double_dqn_step\)/[^"]*/while/body/add"', post, re.MULTILINE)
    assert kernels  # and in full after
    assert 'op_name="while/body/add"' not in post
    op = pre_to_post(parse(pre), parse(post)).get("while/body/add")
    assert op is not None
    assert op.status == "kernels"
    assert set(kernels) <= set(op.kernels)


def test_every_scope_of_a_loop_in_an_xla_call_is_written_by_an_op_name():
    text = (CAPTURES / "loops_newton" / "post.hlo").read_text()
    assert re.search(r"call\(.*xla_cpu_small_call", text)  # the situation
    written = set(re.findall(r'op_name="([^"]+)"', text))
    tree = build_scope_tree(parse(text), stage="post")
    paths = [s.path for s in tree.walk() if s.kind == "scope"]
    assert paths
    for path in paths:
        assert any(name == path or name.startswith(path + "/") for name in written), path


def test_a_loop_in_a_called_function_opens_no_scope_of_its_own():
    pre, _post = step_texts("double_dqn_step")
    entry = pre[pre.index("\nENTRY "):]
    entry = entry[:entry.index("\n}")]
    outermost = {name.split("/")[0] for name in re.findall(r'op_name="([^"]+)"', entry) if "/" in name}
    assert outermost == {"jit(double_dqn_step)"}  # every op the step calls is named under it
    tree = build_scope_tree(parse(pre), stage="pre")
    tops = {s.path.split("/")[0] for s in tree.walk() if s.kind == "scope"}
    assert tops == outermost  # threefry's loops made a scope ``while`` beside the step
