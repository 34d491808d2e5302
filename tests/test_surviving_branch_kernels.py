"""A loop or conditional XLA keeps runs its bodies' kernels, named or not.

* The Keras LSTM's backward loop (the ``keras_text_train`` sample, TF 2.21): TensorFlow names
  ``while_grad``'s body ops under the *forward* loop (``gradient_tape/…/lstm_1/while/add``), so
  no kernel carries a name below ``…/while_grad``; the loop survives, and its body runs copies
  without an op name. It was called *eliminated* — the whole backward pass through the LSTM.
* Held-out round 77 (``benchmarks/heldout/round77_jax.py:siamese_topk_step``, XLA:CPU;
  ``tests/data/steps/``): the step's ``lax.cond`` on the step counter chooses between two constants. XLA keeps the
``conditional`` (named ``jit(siamese_topk_step)/jvp()/cond``); each branch copies its constant
into the result with a ``copy`` that carries no op name. No kernel carries the op's name, so it
was called *eliminated* while its conditional ran every step.

Oracles: the HLO text by regular expression.
"""

from __future__ import annotations

import re
from pathlib import Path

from hloviz.analysis.pre_post.mapping import pre_to_post
from hloviz.parser import parse

from .step_texts import step_texts

CAPTURES = Path(__file__).resolve().parent.parent / "samples" / "captures"
_OP = "jit(siamese_topk_step)/jvp()/cond"


def _branch_copies(post: str) -> list[str]:
    """The unnamed copies in the branches of the conditional carrying ``_OP``'s name."""
    cond = re.search(r'^\s*%[\w.-]+ = \S+ conditional\([^)]*\), branch_computations=\{([^}]*)\}, '
                     rf'metadata=\{{op_name="{re.escape(_OP)}"', post, re.MULTILINE)
    assert cond is not None  # the situation: the conditional survives, under the op's name
    copies = []
    for branch in re.findall(r"%([\w.-]+)", cond.group(1)):
        body = re.search(rf"^%{re.escape(branch)} \(.*?\n}}", post, re.MULTILINE | re.DOTALL)
        assert body is not None
        copies += re.findall(r"^\s*%([\w.-]+) = \S+ copy\([^)]*\)$", body.group(0), re.MULTILINE)
    return copies


def test_a_kept_conditional_runs_its_branches_unnamed_kernels():
    pre, post = step_texts("siamese_topk_step")
    copies = _branch_copies(post)
    assert len(copies) == 2  # one unnamed copy a branch
    assert f'op_name="{_OP}"' in pre
    op = pre_to_post(parse(pre), parse(post)).get(_OP)
    assert op is not None
    assert op.status == "kernels"
    assert set(copies) <= set(op.kernels)


def test_a_kept_backward_loop_is_not_eliminated():
    pre = (CAPTURES / "keras_text_train" / "pre.hlo").read_text()
    post = (CAPTURES / "keras_text_train" / "post.hlo").read_text()
    loop = re.search(r' while\(.*?, body=%([\w.-]+), metadata=\{op_type="StatelessWhile" op_name="([^"]+/while_grad)"', post)
    assert loop is not None  # the situation: the backward loop survives, under its op's name
    body_name, op_name = loop.groups()
    assert f'op_name="{op_name}/' not in post  # nothing is named below it
    body = re.search(rf"^%{re.escape(body_name)} \(.*?\n}}", post, re.MULTILINE | re.DOTALL)
    assert body is not None
    unnamed = re.findall(r"^\s*%([\w.-]+) = \S+ copy\([^)]*\)(?:, control-predecessors=\{[^}]*\})?$",
                         body.group(0), re.MULTILINE)
    assert unnamed
    op = pre_to_post(parse(pre), parse(post)).get(op_name)
    assert op is not None
    assert op.status == "kernels"
    assert set(unnamed) <= set(op.kernels)
