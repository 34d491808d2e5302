"""Which layer a kernel or an unnamed instruction belongs to (hloviz/analysis/attribution.py),
on small modules written by hand, each built so that one rule decides and the answer is
obvious from the text: a tie goes to the layer nearest the result, broadcasts do not vote, the
optimizer's reading of a weight does not pull it out of its layer, and an instruction read by a
layer and by its gradient is the forward pass (it runs before both). The picture, panel, table and JSON all ask this function
(tests/test_scratch_models.py checks they agree); these tests check the function's answer itself."""

from __future__ import annotations

import hloviz
from hloviz.analysis.scopes import build_scope_tree


def _fusion_module(body: str, root_type: str = "f32[4]") -> hloviz.HloModule:
    text = f"""HloModule m, is_scheduled=true

%fused (p: f32[4], q: f32[]) -> {root_type} {{
  %p = f32[4]{{0}} parameter(0)
  %q = f32[] parameter(1)
{body}
}}

ENTRY %main (x: f32[4], y: f32[]) -> {root_type} {{
  %x = f32[4]{{0}} parameter(0)
  %y = f32[] parameter(1)
  ROOT %k = {root_type} fusion(%x, %y), kind=kLoop, calls=%fused
}}
"""
    return hloviz.parse(text)


def _kernel_layers(module: hloviz.HloModule) -> list[str]:
    tree = build_scope_tree(module, stage="post")
    assert module.entry is not None and module.entry.root is not None
    kernel = module.entry.root
    return [s.path for s in tree.layers_of(kernel)]


def test_a_tie_goes_to_the_layer_whose_work_is_nearest_the_kernels_result():
    module = _fusion_module(
        '  %a = f32[4]{0} add(%p, %p), metadata={op_name="model/first/add"}\n'
        '  ROOT %b = f32[4]{0} multiply(%a, %a), metadata={op_name="model/second/mul"}')
    # one elementwise op each (one vote each); second's multiply writes the result
    assert _kernel_layers(module)[0] == "model/second"


def test_broadcasts_do_not_outvote_real_work():
    module = _fusion_module(
        '  %b1 = f32[4]{0} broadcast(%q), dimensions={}, metadata={op_name="model/spread/b1"}\n'
        '  %b2 = f32[4]{0} broadcast(%q), dimensions={}, metadata={op_name="model/spread/b2"}\n'
        '  %s = f32[4]{0} add(%b1, %b2), metadata={op_name="model/spread/s"}\n'
        '  %u = f32[4]{0} multiply(%p, %s), metadata={op_name="model/work/mul"}\n'
        '  ROOT %v = f32[4]{0} subtract(%u, %p), metadata={op_name="model/work/sub"}')
    # work: multiply + subtract = 2 votes; spread: two broadcasts (0 each) + one add = 1 vote
    assert _kernel_layers(module) == ["model/work", "model/spread"]


def _entry_module(users: str) -> hloviz.HloModule:
    return hloviz.parse(f"""HloModule m, is_scheduled=true

ENTRY %main (w: f32[4]) -> (f32[4], f32[4]) {{
  %w = f32[4]{{0}} parameter(0)
  %c = f32[4]{{0}} copy(%w)
{users}
}}
""")


def _filed(module: hloviz.HloModule, name: str) -> tuple[str, str]:
    tree = build_scope_tree(module, stage="post")
    inst = next(i for i in module.instructions() if i.name == name)
    return tree.scope_of(inst).path, tree.phase_of(inst)


def test_a_weight_read_by_its_layer_and_by_the_optimizer_stays_in_its_layer():
    module = _entry_module(
        '  %m = f32[4]{0} multiply(%c, %c), metadata={op_name="model/dense/MatMul"}\n'
        '  %s = f32[4]{0} subtract(%c, %c), metadata={op_name="adam/update"}\n'
        '  ROOT %t = (f32[4]{0}, f32[4]{0}) tuple(%m, %s)')
    # the unnamed copy is read by dense (forward) and by adam (optimizer, which reads every weight)
    assert _filed(module, "c") == ("model/dense", "forward")


def test_an_instruction_read_by_a_layer_and_by_its_gradient_is_the_forward_pass():
    module = _entry_module(
        '  %m = f32[4]{0} multiply(%c, %c), metadata={op_name="model/dense/MatMul"}\n'
        '  %g = f32[4]{0} add(%c, %c), metadata={op_name="gradient_tape/model/dense/MatMul/MatMul_1"}\n'
        '  %h = f32[4]{0} subtract(%c, %g), metadata={op_name="gradient_tape/model/dense/MatMul/MatMul"}\n'
        '  ROOT %t = (f32[4]{0}, f32[4]{0}) tuple(%m, %h)')
    # one forward reader, two backward readers of the same layer: the copy runs before the
    # forward multiply reads it, so it is forward work however many gradients read it too
    assert _filed(module, "c") == ("model/dense", "forward")


def test_an_instruction_no_layer_reads_follows_the_latest_of_its_producers():
    module = hloviz.parse("""HloModule m, is_scheduled=true

ENTRY %main (w: f32[4]) -> f32[4] {
  %w = f32[4]{0} parameter(0)
  %m = f32[4]{0} multiply(%w, %w), metadata={op_name="model/dense/MatMul"}
  %n = f32[4]{0} add(%m, %w), metadata={op_name="model/dense/BiasAdd"}
  %p = pred[4]{0} compare(%m, %n), direction=GT, metadata={op_name="model/dense/Greater"}
  %g = f32[4]{0} negate(%m), metadata={op_name="gradient_tape/model/dense/MatMul/MatMul_1"}
  ROOT %j = f32[4]{0} select(%p, %n, %g)
}
""")
    # the unnamed ROOT reads two forward values and one gradient: it runs after the gradient
    assert _filed(module, "j") == ("model/dense", "backward")


def test_a_weight_read_by_its_layer_and_by_a_jax_update_stays_in_its_layer():
    """JAX names an update in the traced function itself (``jit(step)/sub``, the optimizer's by
    what it reads), which holds every layer: the layer and the update share that scope, and a
    copy both read would be filed in the function, not in the layer."""
    module = _entry_module(
        '  %m = f32[4]{0} multiply(%c, %c), metadata={op_name="jit(step)/jvp(Net)/dense/dot_general"}\n'
        '  %g = f32[4]{0} add(%c, %m), metadata={op_name="jit(step)/transpose(jvp(Net))/dense/dot_general"}\n'
        '  %s = f32[4]{0} subtract(%c, %g), metadata={op_name="jit(step)/sub"}\n'
        '  ROOT %t = (f32[4]{0}, f32[4]{0}) tuple(%m, %s)')
    assert _filed(module, "s") == ("jit(step)", "optimizer")  # the situation: the update is the optimizer's
    assert _filed(module, "c") == ("jit(step)/Net/dense", "forward")
