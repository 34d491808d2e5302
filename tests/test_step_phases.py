"""A training step without scopes of its own reads forward, loss, backward, optimizer.

Found on a held-out JAX step (``samples/jax_resmlp.py``: a residual MLP trained with an optax
chain): the ops computing the loss the step returns (its cross entropy's sum and mean) were
filed with the optimizer, because the ROOT that returns them also returns the new weights; and
the optimizer's box, holding optax's step count ``count + 1`` (named like forward work in JAX),
stood between the model and its backward pass. The GPT step's loss sat in the optimizer's
frame the same way. Oracles: the HLO text — the loss is what the ROOT returns as a scalar,
followed back through the instructions read by nothing else; backward work is named
``transpose(jvp(…))`` — and the laid-out picture's own coordinates.
"""

from __future__ import annotations

import gzip
import re
from pathlib import Path

import pytest

from hloviz.parser import parse
from hloviz.render.views import OVERVIEW_BUDGET, ViewOptions, draw_module

CAPTURES = Path(__file__).resolve().parent.parent / "samples" / "captures"
STEPS = ["jax_resmlp_train", "jax_gpt_step"]
_HEAD = re.compile(r"^\s*(ROOT )?%?([\w.-]+) = (.*)$")


def _split(rest: str) -> tuple[str, list[str]]:
    """A line's shape and operand names (a tuple shape is parenthesized, holding spaces)."""
    depth, cut = 0, rest.index(" ")
    if rest.startswith("("):
        for i, ch in enumerate(rest):
            depth += ch == "("
            depth -= ch == ")"
            if depth == 0:
                cut = i + 1
                break
    call = rest[cut:]
    inner = call[call.index("(") + 1:call.index(")")]
    return rest[:cut], [o.strip().split()[-1].lstrip("%") for o in inner.split(",") if o.strip()]


def _text(capture: str) -> str:
    plain = CAPTURES / capture / "pre.hlo"
    if plain.exists():
        return plain.read_text(encoding="utf-8")
    return gzip.decompress((CAPTURES / capture / "pre.hlo.gz").read_bytes()).decode("utf-8")


def _loss_ops(text: str) -> set[str]:
    """The instructions of the entry that compute the scalar the ROOT returns and feed nothing
    else: the ROOT's ``f32[]`` operand, then its operands while only the loss reads them."""
    body = text[text.index("\nENTRY "):]
    body = body[:body.index("\n}")]
    lines = {}
    users: dict[str, list[str]] = {}
    root = None
    for line in body.splitlines():
        m = _HEAD.match(line)
        if not m or "(" not in m.group(3):
            continue
        name, (shape, operands) = m.group(2), _split(m.group(3))
        lines[name] = (shape, operands)
        for o in operands:
            users.setdefault(o, []).append(name)
        if m.group(1):
            root = name
    assert root is not None
    scalar = [o for o in lines[root][1] if lines.get(o, ("",))[0].startswith("f32[]")]
    assert len(scalar) == 1, scalar  # the loss: the one scalar the step returns
    loss = {scalar[0]}
    stack = list(scalar)
    while stack:
        for o in lines[stack.pop()][1]:
            if o in lines and o not in loss and all(u in loss for u in users.get(o, ())) \
                    and "parameter(" not in body.split(f"{o} = ", 1)[1].split("\n", 1)[0]:
                loss.add(o)
                stack.append(o)
    # the work among them (a constant, a tuple's element, are drawn with what reads them)
    return {n for n in loss if not re.search(rf"\b{re.escape(n)} = .*? (constant|get-tuple-element|tuple)\(", body)}


@pytest.mark.parametrize("capture", STEPS)
def test_the_loss_a_step_returns_is_drawn_as_its_loss_not_as_the_optimizers(capture):
    text = _text(capture)
    loss = _loss_ops(text)
    assert len(loss) >= 2
    view = draw_module(parse(text), options=ViewOptions(budget=OVERVIEW_BUDGET))
    clusters = {n: c.rows[0].text for c in view.scene.all_clusters() for n in c.nodes if c.rows}
    for name in loss:
        key = view.node_of[name]
        title = view.scene.nodes[key].rows[0].text
        assert title == "loss" or clusters.get(key) == "loss", (name, title, clusters.get(key))


_TITLE = re.compile(r'<text [^>]*?y="([-\d.]+)"[^>]*font-weight="bold"[^>]*>([^<]*)</text>')


@pytest.mark.requires_dot
@pytest.mark.parametrize("capture", STEPS)
def test_the_step_reads_forward_loss_backward_optimizer_top_to_bottom(capture, tmp_path):
    from hloviz.cli import main

    out = tmp_path / "pre.svg"
    assert main(["render", str(CAPTURES / capture), "--stage", "pre", "-o", str(out)]) in (0, None)
    titles = [(float(y), t.strip()) for y, t in _TITLE.findall(out.read_text(encoding="utf-8"))]

    def ys(prefix: str) -> list[float]:
        found = [y for y, t in titles if t == prefix or t.startswith(prefix + " · ")]
        assert found, (prefix, [t for _, t in titles])
        return found

    forward, loss, backward, optimizer = ys("forward"), ys("loss"), ys("backward"), ys("optimizer")
    root = [y for y, t in titles if t.startswith("ROOT")]
    assert max(forward) < min(loss) <= max(loss) < min(backward)
    assert max(backward) < min(optimizer) and max(optimizer) < min(root)


def test_the_gpt_steps_forward_pass_stays_open_beside_its_loss():
    """Its loss is three ops (sum, mean, negation); opened first, they left the overview's 24
    boxes too few for the forward pass, drawn then as one closed box of 1,226 ops (or, once the
    forward pass was opened, for the backward pass: one closed box of 1,251 ops)."""
    view = draw_module(parse(_text("jax_gpt_step")), options=ViewOptions(budget=OVERVIEW_BUDGET))
    titles = [n.rows[0].text for n in view.scene.nodes.values() if n.rows]
    assert "forward" not in titles  # the pass is a frame of blocks, not one box
    assert "backward" not in titles  # and so is the backward pass
    frames = {c.rows[0].text: c for c in view.scene.all_clusters() if c.rows}
    assert len(frames["forward"].nodes) >= 8
    assert "loss" in titles or "loss" in frames


_COUNTED_STEP = """HloModule counted_step

ENTRY %step (x: f32[4,3], w: f32[3,2], it: s64[]) -> (f32[], f32[3,2], s64[]) {
  %x = f32[4,3]{1,0} parameter(0), metadata={op_name="XLA_Args"}
  %w = f32[3,2]{1,0} parameter(1), metadata={op_name="XLA_Args"}
  %it = s64[] parameter(2), metadata={op_name="XLA_Args"}
  %y = f32[4,2]{1,0} dot(f32[4,3]{1,0} %x, f32[3,2]{1,0} %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, metadata={op_name="model/dense/MatMul"}
  %zero = f32[] constant(0), metadata={op_name="Mean"}
  %sum = f32[] reduce(f32[4,2]{1,0} %y, f32[] %zero), dimensions={0,1}, to_apply=%add, metadata={op_name="Mean"}
  %g1 = f32[4,2]{1,0} broadcast(f32[] %zero), dimensions={}, metadata={op_name="gradient_tape/Mean/Tile"}
  %dw = f32[3,2]{1,0} dot(f32[4,3]{1,0} %x, f32[4,2]{1,0} %g1), lhs_contracting_dims={0}, rhs_contracting_dims={0}, metadata={op_name="gradient_tape/model/dense/MatMul_1"}
  %lr = f32[] constant(0.1), metadata={op_name="sgd/Mul"}
  %lrb = f32[3,2]{1,0} broadcast(f32[] %lr), dimensions={}, metadata={op_name="sgd/Mul"}
  %step = f32[3,2]{1,0} multiply(f32[3,2]{1,0} %lrb, f32[3,2]{1,0} %dw), metadata={op_name="sgd/Mul"}
  %new_w = f32[3,2]{1,0} subtract(f32[3,2]{1,0} %w, f32[3,2]{1,0} %step), metadata={op_name="sgd/AssignSubVariableOp"}
  %one = s64[] constant(1), metadata={op_name="Add_1"}
  %next = s64[] add(s64[] %it, s64[] %one), metadata={op_name="Add_1"}
  ROOT %out = (f32[], f32[3,2]{1,0}, s64[]) tuple(f32[] %sum, f32[3,2]{1,0} %new_w, s64[] %next), metadata={op_name="XLA_Retvals"}
}

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(f32[] %a, f32[] %b)
}
"""


def test_a_named_optimizers_step_count_is_its_work_where_nothing_else_reads_gradients():
    # a Keras step whose optimizer is named (``sgd/…``) and whose top-level ops read no
    # gradient: its step count, TensorFlow's unscoped ``Add_1`` of the iteration parameter and a
    # one, is returned by the ROOT and read by nothing else — the optimizer's bookkeeping, which
    # was forward work once no other op was re-phased (an unseen multi-task step's ``sgd/iteration``,
    # after its sum of losses stopped being taken for the optimizer's). Oracle: this module, as
    # written here: the add reads the parameter and a constant, and only the ROOT reads it.
    from hloviz.analysis.scopes import build_scope_tree

    module = parse(_COUNTED_STEP)
    scopes = build_scope_tree(module, stage="pre", ordered=False)
    by_name = {i.name: i for i in module.entry.instructions}
    assert scopes.phase_of(by_name["next"]) == "optimizer"
    assert scopes.phase_of(by_name["sum"]) == "forward"  # the loss reads no gradient
    assert scopes.phase_of(by_name["dw"]) == "backward" and scopes.phase_of(by_name["step"]) == "optimizer"
