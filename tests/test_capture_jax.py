"""JAX functions and real XLA dump folders as targets."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path

import pytest

from hloviz.capture import load_target, save_capture, source_for
from hloviz.capture.jax import source_map_from_text
from hloviz.errors import CaptureError, InputError

from . import entry_of, present

pytestmark = pytest.mark.requires_jax

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "samples" / "jax_mlp.py"


def line_of(path: Path, snippet: str) -> int:
    return next(i for i, text in enumerate(Path(path).read_text().splitlines(), 1) if snippet in text)


@pytest.fixture(scope="module")
def mlp():
    notes: list[str] = []
    return load_target(f"{SAMPLE}:mlp", notify=notes.append), notes


def test_jax_sample(mlp):
    cap, notes = mlp
    assert notes == ["mlp is a plain Python function; wrapped it in jax.jit"]
    assert cap.info["framework"] == "jax" and cap.info["arg_source"] == "HLOVIZ_ARGS"
    assert cap.info["args"] == ["f32[8,16]", "f32[16,32]", "f32[32,4]"]
    pre, post = cap.pre_module(), cap.post_module()
    assert [str(p.shape).split("{")[0] for p in pre.entry.parameters] == ["f32[8,16]", "f32[16,32]", "f32[32,4]"]
    assert Counter(i.opcode for i in pre.instructions())["dot"] == 2
    assert post.is_scheduled and any(i.opcode == "fusion" for i in post.instructions())


def test_jax_source_map_reaches_the_users_lines(mlp):
    cap, _ = mlp
    smap = cap.info["source_map"]
    dot_line = line_of(SAMPLE, "h = jax.nn.relu(x @ w1)")
    assert smap["jit(mlp)/dot_general"] == {"file": str(SAMPLE), "line": dot_line, "function": "mlp"}
    assert smap["jit(mlp)/reduce_sum"]["line"] == line_of(SAMPLE, "jnp.sum(")
    post_names = {i.metadata.op_name for i in cap.post_module().instructions() if i.opcode == "fusion"}
    assert post_names and all(source_for(n, smap) for n in post_names)


def test_stack_frame_tables_follow_parents_to_the_user():
    text = textwrap.dedent('''\
        HloModule m

        FileNames
        1 "/site-packages/lib.py"
        2 "/home/me/model.py"

        FunctionNames
        1 "helper"
        2 "model"

        FileLocations
        1 {file_name_id=2 function_name_id=2 line=10 end_line=10 column=1 end_column=2}
        2 {file_name_id=1 function_name_id=1 line=99 end_line=99 column=1 end_column=2}

        StackFrames
        1 {file_location_id=1 parent_frame_id=1}
        2 {file_location_id=2 parent_frame_id=2}

        ENTRY main {
          ROOT p = f32[] parameter(0), metadata={op_name="jit(f)/sin" stack_frame_id=2}
        }
        ''')
    assert source_map_from_text(text) == {"jit(f)/sin": {"file": "/home/me/model.py", "line": 10, "function": "model"}}


def test_jitted_function_static_literals_and_errors(tmp_path):
    path = tmp_path / "jmodel.py"
    path.write_text(textwrap.dedent("""\
        import functools
        import jax
        import jax.numpy as jnp

        @jax.jit
        def jitted(x):
            return jnp.sin(x) * 2

        def scaled(x, k):
            return x * k

        def broken(x):
            return x @ jnp.ones((3, 3))
    """))
    notes: list[str] = []
    cap = load_target(f"{path}:jitted", args=["f32[5]"], notify=notes.append)
    assert notes == [] and cap.info["wrapped"] is None
    assert "sine" in {i.opcode for i in present(cap.pre_module()).instructions()}
    cap = load_target(f"{path}:scaled", args=["bf16[2,3]", "3"])
    assert len(entry_of(present(cap.pre_module())).parameters) == 1  # k was static
    assert str(entry_of(present(cap.pre_module())).parameters[0].shape).startswith("bf16[2,3]")
    with pytest.raises(CaptureError) as info:
        load_target(f"{path}:broken", args=["f32[5]", ])
    assert "tracing broken failed" in str(info.value) and f'File "{path}", line 13, in broken' in str(info.value)
    with pytest.raises(InputError, match="device 'GPU:0' not found"):
        load_target(f"{path}:jitted", args=["f32[5]"], device="GPU:0")


def _make_dump(folder: Path) -> None:
    script = textwrap.dedent("""\
        import jax, jax.numpy as jnp
        def mlp(x, w):
            return jnp.sum(jax.nn.relu(x @ w))
        s = jax.ShapeDtypeStruct
        jax.jit(mlp).lower(s((4, 8), jnp.float32), s((8, 2), jnp.float32)).compile()
        jax.jit(lambda x: jnp.sin(x) * 2).lower(s((4,), jnp.float32)).compile()
    """)
    env = dict(os.environ, XLA_FLAGS=f"--xla_dump_to={folder}", JAX_PLATFORMS="cpu")
    subprocess.run([sys.executable, "-c", script], env=env, check=True, capture_output=True, timeout=300)


def test_xla_dump_folder_from_a_real_jax_run(tmp_path):
    dump = tmp_path / "dump"
    _make_dump(dump)
    with pytest.raises(InputError) as info:
        load_target(str(dump))
    assert "jit_mlp" in str(info.value) and "jit__lambda" in str(info.value)
    cap = load_target(str(dump), module="jit_mlp")
    assert cap.label == "jit_mlp" and cap.info["source"] == "xla_dump"
    pre, post = present(cap.pre_module()), present(cap.post_module())
    assert pre.name == post.name == "jit_mlp"
    assert not pre.is_scheduled and post.is_scheduled
    assert Counter(i.opcode for i in pre.instructions())["dot"] == 1
    # a dump module saved as a capture reads back the same
    out = save_capture(cap, tmp_path / "saved")
    assert load_target(str(out)).post_text == cap.post_text
    lone = load_target(str(cap.info["post_file"]))
    assert lone.info["stage"] == "post" and lone.post_text == cap.post_text


def test_hloviz_args_may_hold_example_arrays_and_an_optimizer_state(tmp_path):
    # HLOVIZ_ARGS written as users write them: the arrays themselves (a model's parameters, an
    # optimizer state of named tuples with an empty one among them, a PRNG key). Oracle: the
    # entry's parameter shapes in the captured HLO text, by regex, against numpy's shapes.
    model = tmp_path / "step.py"
    model.write_text(textwrap.dedent('''
        from collections import namedtuple
        import jax, jax.numpy as jnp
        State = namedtuple("State", ["count", "mu"])
        Empty = namedtuple("Empty", [])
        params = {"w": jnp.zeros((3, 4)), "b": jnp.zeros((4,))}
        def step(params, state, x, key):
            empty, s = state
            g = jax.grad(lambda p: jnp.sum(jnp.tanh(x @ p["w"] + p["b"])))(params)
            mu = jax.tree_util.tree_map(lambda m, gi: 0.9 * m + gi, s.mu, g)
            noise = jax.random.normal(key, (4,))
            return jax.tree_util.tree_map(lambda p, m: p - 0.1 * m, params, mu), (empty, State(s.count + 1, mu)), noise
        HLOVIZ_ARGS = {"step": [params, (Empty(), State(jnp.zeros((), jnp.int32), params)),
                                jnp.ones((2, 3), jnp.float16).astype(jnp.float32), jax.random.PRNGKey(0)]}
    '''))
    cap = load_target(f"{model}:step")
    import re

    shapes = sorted(re.findall(r"parameter\(\d+\)", cap.pre_text))
    entry = cap.pre_text[cap.pre_text.index("ENTRY"):]
    params = re.findall(r"= ([a-z0-9]+\[[\d,]*\])[^\n]*? parameter\((\d+)\)", entry)
    assert sorted(s for s, _n in params) == sorted(["f32[4]", "f32[3,4]", "s32[]", "f32[4]", "f32[3,4]",
                                                   "f32[2,3]", "u32[2]"]), (params, shapes)
