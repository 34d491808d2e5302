"""Work a JAX step does with the weights it just updated is no optimizer work; work that serves
only the update is, fused or not. The first (held-out round 78:
``benchmarks/heldout/round78_jax.py:double_dqn_step``, XLA:CPU; ``tests/data/steps/``).

The double-DQN step updates the Q-network with optax, then picks its next actions ε-greedily:
``argmax`` of the Q-network at the *new* weights (no ``jvp``: not differentiated), a
``jax.random.bernoulli`` draw and a ``randint``, joined by ``jnp.where``. The Q-network's second
pass reads the update, so it was the optimizer's; optimized, its ``dot`` runs inside a YNNPACK
fusion, which was not seen as the product of the data that marks an evaluation of the model; and
the ``argmax`` between them is a ``call`` named ``jit(double_dqn_step)`` alone, where following
the evaluation stopped, so the ``jnp.where`` and the random draws feeding only it were the
optimizer's too.

Oracles: the op names in the HLO text (``jvp(`` marks what is differentiated).
"""

from __future__ import annotations

import gzip
import re
from pathlib import Path

import pytest

from hloviz.analysis.scopes import build_scope_tree
from hloviz.parser import parse

from .step_texts import step_text

CAPTURES = Path(__file__).resolve().parent.parent / "samples" / "captures"
_STEP = "jit(double_dqn_step)"
#: what picks the next actions: the Q-network at the new weights, the random draws, the ε-greedy choice
_ACTING = re.compile(rf"^{re.escape(_STEP)}/(QNetwork/|jit\(_bernoulli\)|jit\(_randint\)|jit\(_where\))")


#: Held-out round 79 (``benchmarks/heldout/round79_jax.py``), optimized: a Reptile step that
#: evaluates the new weights on query points gathered by task (the gather is the data: no parameter
#: reaches the product directly), its first layer's ``dot_general`` of one contracted element
#: rewritten by XLA into a ``multiply``; a REINFORCE step that samples the next actions
#: (``jax.random.categorical``, ``_gumbel``) from the policy at the new weights and the rollout's
#: last state (a loop's result, not a parameter).
_AFTER_UPDATE = {
    "reptile_lion_step": re.compile(r"^jit\(reptile_lion_step\)/vmap\(Regressor\)/"),
    "reinforce_step": re.compile(r"^jit\(reinforce_step\)/(ActorCritic/|jit\(_gumbel\))"),
}


@pytest.mark.parametrize("step", sorted(_AFTER_UPDATE))
def test_the_model_evaluated_after_the_update_is_forward_work(step):
    text = step_text(step, "post")
    after = {n for n in re.findall(r'op_name="([^"]+)"', text)
             if _AFTER_UPDATE[step].match(n) and "jvp(" not in n and "/while/" not in n}
    assert any(n.endswith("/dot_general") for n in after)  # the situation: the model, not differentiated
    module = parse(text)
    tree = build_scope_tree(module, stage="post")
    assert "optimizer" in tree.phases.values()
    wrong = sorted({inst.metadata.op_name for inst in module.instructions()
                    if inst.metadata.op_name in after and tree.phases.get(inst) == "optimizer"})
    assert not wrong, wrong


@pytest.mark.parametrize("stage", ["pre", "post"])
def test_the_actions_picked_after_the_update_are_forward_work(stage):
    text = step_text("double_dqn_step", stage)
    acting = {n for n in re.findall(r'op_name="([^"]+)"', text) if _ACTING.match(n) and "jvp(" not in n}
    assert any(n.startswith(f"{_STEP}/QNetwork/torso1/dot_general") for n in acting)  # the situation
    module = parse(text)
    tree = build_scope_tree(module, stage=stage)
    assert "optimizer" in tree.phases.values()  # there is an update, and it is the optimizer's
    wrong = sorted({inst.metadata.op_name for inst in module.instructions()
                    if inst.metadata.op_name in acting and tree.phases.get(inst) == "optimizer"})
    assert not wrong, wrong


def test_a_fused_bias_correction_is_the_optimizers_inside_too():
    """The ``jax_gpt_step`` sample: Adam's bias correction ``1 / (1 - 0.999**t)`` of the step ``t``
    is one fusion reading ``t`` alone, re-phased ``optimizer`` as a whole (it serves only the
    update) while the ``power``, ``subtract`` and ``divide`` it holds stayed forward — and the
    kernel's layer said ``train_step``, the forward pass's."""
    text = gzip.decompress((CAPTURES / "jax_gpt_step" / "post.hlo.gz").read_bytes()).decode()
    fused = dict(re.findall(r"^\s*%([\w.-]+) = f32\[\] fusion\(%t\.1\), kind=kLoop, calls=%([\w.-]+)", text, re.MULTILINE))
    assert fused  # the situation: fusions of the step count alone
    module = parse(text)
    tree = build_scope_tree(module, stage="post")
    entry = {i.name: i for i in module.entry.instructions}
    for name, comp in fused.items():
        assert tree.phases.get(entry[name]) == "optimizer"
        inside = [i for i in module.get_computation(comp).instructions if i.opcode not in ("parameter", "constant")]
        assert inside and {tree.phases.get(i) for i in inside} == {"optimizer"}, (name, comp)
