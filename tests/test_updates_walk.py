"""update_targets on a long optimizer chain: walked on an explicit stack, so a chain deeper than
the interpreter's recursion limit is followed all the way (the answer is known by construction:
every op of the chain reads the gradient of one layer)."""

from __future__ import annotations

import gc
import sys
from pathlib import Path

import hloviz
from hloviz.analysis.scopes import build_scope_tree
from hloviz.analysis.updates import optimizer_targets, update_targets
from hloviz.collector import collector_paused


def _chain_module(n: int) -> str:
    lines = ["HloModule chain", "", "ENTRY main {",
             "  x = f32[4] parameter(0)",
             '  f = f32[4] negate(x), metadata={op_name="dense/MatMul"}',
             '  g = f32[4] negate(f), metadata={op_name="gradient_tape/dense/MatMul"}',
             '  a0 = f32[4] negate(g), metadata={op_name="adam/Mul_0"}']
    for k in range(1, n):
        lines.append(f'  a{k} = f32[4] add(a{k - 1}, a{k - 1}), metadata={{op_name="adam/Mul_{k}"}}')
    lines.append(f"  ROOT r = (f32[4]) tuple(a{n - 1})")
    lines.append("}")
    return "\n".join(lines) + "\n"


def test_a_chain_deeper_than_the_recursion_limit_updates_its_layer():
    n = 300
    module = hloviz.parse(_chain_module(n))
    tree = build_scope_tree(module, stage="pre")
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(150)  # far below the chain's depth: a recursive walk would fail
    try:
        targets = update_targets(tree)
    finally:
        sys.setrecursionlimit(limit)
    chain = {i.name: s for i, s in targets.items()}
    assert sorted(chain) == sorted(f"a{k}" for k in range(n))  # every optimizer op, nothing else
    assert {s.path if s is not None else None for s in chain.values()} == {"dense"}
    assert optimizer_targets(tree) == {f"adam/Mul_{k}": "dense" for k in range(n)}


def _fused_chain_module(n: int) -> str:
    """``n`` optimizer fusions in a chain, their fused computations listed last first (as the
    walk meets them in text order): the first op asked is the far end of the whole chain."""
    lines = ["HloModule fused_chain", ""]
    for k in reversed(range(n)):
        lines += [f"fc{k} {{", "  p = f32[4] parameter(0)",
                  f'  ROOT m = f32[4] negate(p), metadata={{op_name="adam/Mul_{k}"}}', "}", ""]
    lines += ["ENTRY main {", "  x = f32[4] parameter(0)",
              '  f = f32[4] negate(x), metadata={op_name="dense/MatMul"}',
              '  g = f32[4] negate(f), metadata={op_name="gradient_tape/dense/MatMul"}']
    for k in range(n):
        src = "g" if k == 0 else f"u{k - 1}"
        lines.append(f'  u{k} = f32[4] fusion({src}), kind=kLoop, calls=fc{k}, metadata={{op_name="adam/Mul_{k}"}}')
    lines += [f"  ROOT r = (f32[4]) tuple(u{n - 1})", "}"]
    return "\n".join(lines) + "\n"


def test_a_fused_chain_walked_from_its_far_end_needs_no_recursion():
    n = 120  # three steps per fusion (fused root, fused parameter, the fusion): 360 < the walk's 400
    module = hloviz.parse(_fused_chain_module(n))
    tree = build_scope_tree(module, stage="pre")
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(150)  # a recursive walk from fc119's root would need ~720 frames
    try:
        targets = update_targets(tree)
    finally:
        sys.setrecursionlimit(limit)
    fused = [i for i in targets if i.opcode == "negate"]
    fusions = [i for i in targets if i.opcode == "fusion"]
    assert len(fused) == n and len(fusions) == n
    assert {t.path if (t := targets[i]) is not None else None for i in fused + fusions} == {"dense"}


def test_the_collector_pause_is_reentrant_and_restores_the_state():
    was = gc.isenabled()
    gc.enable()
    try:
        with collector_paused():
            assert not gc.isenabled()
            with collector_paused():
                assert not gc.isenabled()
            assert not gc.isenabled()  # the inner pause leaves the outer one in force
        assert gc.isenabled()
        gc.disable()
        with collector_paused():
            pass
        assert not gc.isenabled()  # paused by the caller: stays paused
    finally:
        (gc.enable if was else gc.disable)()


def test_an_update_fed_by_several_layers_goes_to_the_scope_holding_them():
    """The common scope of what feeds an update, by hand: two layers of one block → the block;
    layers of two blocks → the model; a layer and the top level → none (the root is no layer)."""
    lines = ["HloModule m", "", "ENTRY main {", "  x = f32[4] parameter(0)"]
    grads = {"a": "model/block_0/dense", "b": "model/block_0/norm", "c": "model/block_1/dense", "d": "top"}
    for k, scope in grads.items():
        lines.append(f'  f{k} = f32[4] negate(x), metadata={{op_name="{scope}/MatMul"}}')
        lines.append(f'  g{k} = f32[4] negate(f{k}), metadata={{op_name="gradient_tape/{scope}/MatMul"}}')
    lines += ['  u0 = f32[4] add(ga, gb), metadata={op_name="adam/Mul_0"}',
              '  u1 = f32[4] add(gb, gc), metadata={op_name="adam/Mul_1"}',
              '  u2 = f32[4] add(ga, gd), metadata={op_name="adam/Mul_2"}',
              '  u3 = f32[4] add(u0, gc), metadata={op_name="adam/Mul_3"}',
              "  ROOT r = (f32[4], f32[4], f32[4], f32[4]) tuple(u0, u1, u2, u3)", "}", ""]
    tree = build_scope_tree(hloviz.parse("\n".join(lines)), stage="pre")
    got = {i.name: (s.path if s is not None else None) for i, s in update_targets(tree).items()}
    assert got == {"u0": "model/block_0", "u1": "model", "u2": None, "u3": "model"}


def test_a_tree_is_walked_once_for_all_the_pictures_that_ask(monkeypatch):
    """The explorer draws many pictures of one training step from one reused scope tree; the
    optimizer's targets are found once per tree, not once per picture (issue 32), and every
    caller gets its own copy with the same answer."""
    from hloviz.analysis.scopes import build_scope_tree, scope_trees_reused
    from hloviz.analysis.updates import targets as updates_module
    from hloviz.capture import load_target
    from hloviz.render.pictures import module_picture
    from hloviz.render.views import ViewOptions

    cap = load_target(str(Path(__file__).resolve().parent.parent / "samples" / "captures" / "cnn_adam"))
    pre = cap.pre_module()
    assert pre is not None
    walks = 0
    real = updates_module._update_targets

    def counted(tree):
        nonlocal walks
        walks += 1
        return real(tree)

    monkeypatch.setattr(updates_module, "_update_targets", counted)
    with scope_trees_reused():
        tree = build_scope_tree(pre, stage="pre", ordered=False)
        first = update_targets(tree)
        assert first and walks == 1
        first.clear()  # a caller's copy: the kept answer is untouched
        again = update_targets(tree)
        assert again and walks == 1
        for budget in (8, 24, 60):  # pictures of the same module, as the explorer draws them
            module_picture(pre, options=ViewOptions(budget=budget), fmt="dot")
        assert walks == 1
