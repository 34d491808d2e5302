"""The errors a newcomer meets first: each is one message (what, where) with what to do, exit 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from hloviz.capture.specs import PytreeArg, TensorSpec, parse_arg_options
from hloviz.capture.tf import unsupported_ops_hint

from . import run_cli

SAMPLES = Path(__file__).resolve().parent.parent / "samples"

#: TensorFlow 2.21's own message for a tf.py_function under jit_compile=True (captured with
#: hloviz from a two-line function; the file path shortened).
PY_FUNCTION_ERROR = (
    "Failed getting HLO text: 'Detected unsupported operations when trying to compile graph __inference_f_7[] on "
    "XLA_CPU_JIT: EagerPyFunc (No registered 'EagerPyFunc' OpKernel for XLA_CPU_JIT devices compatible with node "
    "{{node EagerPyFunc}}){{node EagerPyFunc}}\nThe op is created at: \nFile \"pyfunc.py\", line 8, in f\n"
    "\ttf2xla conversion failed while converting __inference_f_7[]. Run with TF_DUMP_GRAPH_PREFIX=/path/to/dump/dir "
    "and --vmodule=xla_compiler=2 to obtain a dump of the compiled functions.'")


def test_tf_py_function_under_xla_gets_a_one_line_hint():
    hint = unsupported_ops_hint(PY_FUNCTION_ERROR)
    assert hint is not None and "\n" not in hint
    assert hint.startswith("EagerPyFunc:") and "tf.py_function" in hint and "jit_compile" in hint
    strings = unsupported_ops_hint(PY_FUNCTION_ERROR.replace("EagerPyFunc", "AsString"))
    assert strings is not None and "string" in strings
    assert unsupported_ops_hint("some other XLA error") is None


def test_a_pytree_given_to_arg_is_a_pytree_of_tensors_not_a_python_list():
    specs = parse_arg_options(["[('f32[32,64]','f32[64]')]", "f32[8,32]"])
    tree, x = specs.positional
    assert isinstance(tree, PytreeArg) and isinstance(x, TensorSpec)
    assert [str(s) for _, s in tree.leaves()] == ["f32[32,64]", "f32[64]"]
    assert tree.map(str) == [("f32[32,64]", "f32[64]")]  # the structure as written: a list of one tuple


@pytest.mark.requires_jax
def test_a_typo_in_the_function_name_gets_did_you_mean(capsys):
    code, _out, err = run_cli(["stats", f"{SAMPLES / 'jax_mlp.py'}:mpl"], capsys)
    assert code == 2
    assert "did you mean 'mlp'?" in err and "Traceback" not in err


@pytest.mark.requires_jax
def test_missing_shapes_say_what_is_missing_and_both_ways_to_give_them(tmp_path, capsys):
    model = tmp_path / "mine.py"
    model.write_text("import jax.numpy as jnp\n\n\ndef f(params, x):\n    return jnp.tanh(x @ params['w'])\n")
    code, _out, err = run_cli(["stats", f"{model}:f"], capsys)
    assert code == 2 and "Traceback" not in err
    assert "f(params, x) takes 2 arguments (params, x)" in err
    assert "--arg" in err and "HLOVIZ_ARGS = {'f': [" in err and "pytree" in err
    code, out, err = run_cli(["stats", f"{model}:f", "--arg", "{'w': 'f32[32,4]'}", "--arg", "f32[8,32]"], capsys)
    assert code == 0, err
    assert "kernel" in out


@pytest.mark.requires_jax
def test_a_tracing_error_says_which_specs_and_how_a_pytree_is_given(tmp_path, capsys):
    model = tmp_path / "mine.py"
    model.write_text("import jax.numpy as jnp\n\n\ndef f(params, x):\n    return jnp.tanh(x @ params['w'])\n")
    code, _out, err = run_cli(["stats", f"{model}:f", "--arg", "f32[32,4]", "--arg", "f32[8,32]"], capsys)
    assert code == 2 and "Traceback" not in err
    assert "traced with the argument specs (f32[32,4], f32[8,32]) from --arg" in err
    assert "HLOVIZ_ARGS" in err


@pytest.mark.requires_tf
@pytest.mark.slow
def test_a_keras_model_object_as_target_says_to_wrap_it(capsys):
    code, _out, err = run_cli(["stats", f"{SAMPLES / 'keras_resblock.py'}:relu_model"], capsys)
    assert code == 2 and "Traceback" not in err
    assert "Keras" in err and "not a function" in err and "def classify(images)" in err
    assert "inspect.py" not in err and "keras/src" not in err


def test_version_prints_the_packages_version(capsys):
    import re

    declared = re.search(r'^version = "([^"]+)"', (SAMPLES.parent / "pyproject.toml").read_text(), re.MULTILINE)
    assert declared
    code, out, _err = run_cli(["--version"], capsys)
    assert code == 0
    assert out.startswith(f"hloviz {declared.group(1)} (Python ")
