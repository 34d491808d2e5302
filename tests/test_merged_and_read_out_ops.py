"""Two ways an op's work survives optimization without its own kernel, neither of them a fold nor
an elimination (held-out round 76: ``benchmarks/heldout/round76.py:ctc_step``, TF 2.21, and
``round76_jax.py:viterbi_decode``, XLA:CPU; ``tests/data/steps/``).

* **Merged.** Keras's Adafactor computes the step's decay, ``1 - (step + 1) ** -0.8``, once per
  weight: ``adafactor/Add`` … ``adafactor/Add_31`` are the same ``add`` of the step counter and 1.
  XLA's common-subexpression pass keeps one (``adafactor/Add``'s); the others' names are gone.
  They read the step counter, a parameter: no compile-time value. Walked back from the new
  constant of a mean nearby (``1/48``), they were reported folded into it.
* **Read out of a kernel.** An argmax's two-result reduction fusion carries one op's name; XLA
  leaves ``reduce_max``'s name on the ``get-tuple-element`` that takes the max out of it. The op
  was listed under "no op name after XLA's passes", and its box drawn "eliminated".

Oracles: the HLO text by regular expression. (And a reshape of an iota that still runs, round 79: below.)
"""

from __future__ import annotations

import re

from hloviz.analysis.pre_post.folding import constant_folding
from hloviz.analysis.pre_post.mapping import pre_to_post
from hloviz.parser import parse

from .step_texts import step_texts

#: ``%Add_31.3 = s64[] add(s64[] %arg13.1, s64[] %Add_31.2), … op_name="adafactor/Add_31"``
_COUNTER_PLUS = re.compile(r'^\s*%([\w.-]+) = s64\[\] add\(s64\[\] %(arg[\d.]+), s64\[\] %([\w.-]+)\), '
                           r'metadata=\{op_type="AddV2" op_name="(adafactor/Add(?:_\d+)?)"', re.MULTILINE)
_CONSTANT = re.compile(r'^\s*%([\w.-]+) = s64\[\] constant\((\d+)\)', re.MULTILINE)


def test_an_op_xla_computes_once_under_another_name_is_not_folded():
    pre, post = step_texts("ctc_step")
    literals = dict(_CONSTANT.findall(pre))
    adds = [(op, counter) for _name, counter, one, op in _COUNTER_PLUS.findall(pre) if literals.get(one) == "1"]
    assert len(adds) >= 8 and len({counter for _op, counter in adds}) == 1  # the situation: one counter + 1, again and again
    kept = [op for op, _counter in adds if f'op_name="{op}"' in post]
    assert kept, "one of the equal adds keeps its name"
    copies = {op for op, _counter in adds} - set(kept)
    pre_m, post_m = parse(pre), parse(post)
    folding = constant_folding(pre_m, post_m)
    credited = {op for f in folding.folded for op in f.from_ops}
    assert not copies & credited, sorted(copies & credited)
    status = {m.op_name: m.status for m in pre_to_post(pre_m, post_m, folding=folding).ops}
    assert {status[op] for op in copies} == {"eliminated"}


def test_an_op_whose_result_is_read_out_of_a_kernel_runs_in_that_kernel():
    pre, post = step_texts("viterbi_decode")
    read = re.findall(r'^\s*%[\w.-]+ = \S+ get-tuple-element\(%([\w.-]+)\), index=\d+, '
                      r'metadata=\{op_name="(jit\(viterbi_decode\)/reduce_max)"', post, re.MULTILINE)
    assert len(read) == 1  # the situation
    fusion, op = read[0]
    assert re.search(rf'^\s*%{re.escape(fusion)} = \([^)]*\) fusion\(', post, re.MULTILINE)  # a kernel of two results
    assert f'op_name="{op}"' in pre
    mapping = {m.op_name: m for m in pre_to_post(parse(pre), parse(post)).ops}
    assert mapping[op].status == "kernels"
    assert fusion in mapping[op].kernels


def test_an_op_reshaping_an_iota_that_runs_is_not_folded():
    """Held-out round 79 (``round79_jax.py:reptile_lion_step``): ``jax.random.permutation``'s
    ``vmap()/broadcast_in_dim`` reshapes threefry's ``iota_2x32_shape``. The iota runs after
    optimization (a kernel), and the reshape became a bitcast of it: eliminated, not computed at
    compile time (it was called folded, into no constant, as work on constants alone)."""
    pre, post = step_texts("reptile_lion_step")
    reshapes = re.findall(r'^\s*[\w.-]+ = \S+ reshape\((iota_2x32_shape[\w.-]*)\), metadata=\{op_name="vmap\(\)/broadcast_in_dim"\}',
                          pre, re.MULTILINE)
    assert reshapes  # the situation: the op reshapes (a conversion of) an iota

    def made_of_iota(name: str, steps: int = 8) -> bool:  # through its first operands (a convert, a shift)
        m = re.search(rf"^\s*{re.escape(name)} = \S+ ([\w-]+)\(([\w.-]*)", pre, re.MULTILINE)
        return m is not None and (m.group(1) == "iota" or (steps > 0 and made_of_iota(m.group(2), steps - 1)))

    assert all(made_of_iota(i) for i in reshapes)
    assert re.search(r'^\s*%[\w.-]+ = \S+ iota\(\), iota_dimension=\d+, metadata=\{op_name="[^"]*/iota_2x32_shape"', post,
                     re.MULTILINE)  # and the iota runs after optimization
    op = pre_to_post(parse(pre), parse(post)).get("vmap()/broadcast_in_dim")
    assert op is not None
    assert op.status == "eliminated"


def test_a_reduction_xla_computes_once_is_eliminated_not_unnamed():
    """Held-out round 79 (``round79.py:seq2seq_attention_step``, TF 2.21): the step sums its
    target mask twice (``Sum_1``, ``Sum_3``: the same ``reduce`` of the same ``Cast_1``, each by a
    reducer computation of its own). XLA computes it once, under ``Sum_1``'s name. ``Sum_3`` is a
    heavy op whose result is used and no kernel carries its name: it was listed under "no op name
    after XLA's passes" (hloviz could not tell), while its work is ``Sum_1``'s kernel's."""
    pre, post = step_texts("seq2seq_attention_step")
    sums = {}
    for op in ("Sum_1", "Sum_3"):
        reduce = re.search(rf'^\s*%[\w.-]+ = f32\[\] reduce\(f32\[8,10\]\{{1,0\}} %(Sum_\d+\.\d+), f32\[\] %[\w.-]+\), '
                           rf'dimensions=\{{0,1\}}, to_apply=%([\w.-]+), metadata=\{{op_type="Sum" op_name="{op}"', pre, re.MULTILINE)
        assert reduce is not None
        converted = re.search(rf"^\s*%{re.escape(reduce.group(1))} = \S+ convert\(\S+ %([\w.-]+)\)", pre, re.MULTILINE)
        assert converted is not None
        sums[op] = (converted.group(1), reduce.group(2))
    assert sums["Sum_1"][0] == sums["Sum_3"][0]  # the situation: the same mask, summed twice
    assert sums["Sum_1"][1] != sums["Sum_3"][1]  # by two reducers
    assert 'op_name="Sum_1"' in post and 'op_name="Sum_3"' not in post  # one survives
    op = pre_to_post(parse(pre), parse(post)).get("Sum_3")
    assert op is not None
    assert op.status == "eliminated"
