"""Target resolution and running user code safely (no TensorFlow or JAX needed)."""

from __future__ import annotations

import os
import sys
import textwrap

import pytest

from hloviz.capture import load_target
from hloviz.capture.live import check_against_signature, detect_framework, resolve_specs
from hloviz.capture.specs import ArgSpecs, TensorSpec
from hloviz.capture.target import available_functions, load_python_target, split_function_target
from hloviz.errors import CaptureError, DependencyError, HloParseError, InputError


def write(tmp_path, name, body):
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return path


@pytest.fixture
def plain_model(tmp_path):
    return write(tmp_path, "plain_model.py", """
        import math

        HLOVIZ_ARGS = {"two": ["f32[8]", "s32[]"], "kw": {"x": "f32[4]", "k": 3}}

        def two(x, n):
            return x

        def kw(x, *, k=1):
            return x

        def _private():
            pass

        class NotAFunction:
            pass
    """)


def test_split_function_target():
    assert split_function_target("a/b.py:fn") == ("a/b.py", "fn")
    assert split_function_target("pkg.mod:fn") == ("pkg.mod", "fn")
    assert split_function_target("model.py") == ("model.py", None)
    assert split_function_target("model.py:Model.call") == ("model.py", "Model.call")
    assert split_function_target("nothing") is None


def test_finds_the_function_and_lists_what_is_there(plain_model):
    t = load_python_target(f"{plain_model}:two")
    assert t.function_name == "two" and t.obj.__name__ == "two"
    assert t.file == str(plain_model.resolve())
    assert available_functions(t.module) == ["two", "kw"]
    with pytest.raises(InputError) as info:
        load_python_target(f"{plain_model}:three")
    msg = str(info.value)
    assert "'three' not found" in msg and "Functions there: two, kw" in msg
    assert "_private" not in msg and "NotAFunction" not in msg and "sqrt" not in msg


def test_a_file_without_function_name_needs_a_single_function(tmp_path, plain_model):
    with pytest.raises(InputError, match=r"defines several functions.*two, kw"):
        load_python_target(str(plain_model))
    single = write(tmp_path, "single.py", "def only(x):\n    return x\n")
    assert load_python_target(str(single)).function_name == "only"


def test_missing_file_and_module(tmp_path):
    with pytest.raises(InputError, match=r"file not found: .*nothere.py"):
        load_target(str(tmp_path / "nothere.py") + ":f")
    with pytest.raises(InputError, match="module 'no_such_module_xyz' not found"):
        load_target("no_such_module_xyz:f")
    with pytest.raises(InputError, match="not a file, a folder, or a MODULE:FUNCTION"):
        load_target("just-some-words")
    with pytest.raises(InputError, match="no target given"):
        load_target(None)


def test_module_target(tmp_path, monkeypatch):
    pkg = tmp_path / "mypkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "models.py").write_text("def f(x):\n    return x\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    t = load_python_target("mypkg.models:f")
    assert t.function_name == "f" and t.module.__name__ == "mypkg.models"


def test_user_code_that_prints_chdirs_and_edits_argv(tmp_path, capsys):
    path = write(tmp_path, "noisy.py", """
        import os, sys
        print("hello from the model")
        os.chdir("/")
        sys.argv[:] = ["changed"]
        def f(x):
            return x
    """)
    cwd, argv = os.getcwd(), list(sys.argv)
    t = load_python_target(f"{path}:f")
    assert t.function_name == "f"
    assert os.getcwd() == cwd and sys.argv == argv
    out = capsys.readouterr()
    assert out.out == ""  # prints go to stderr, keeping stdout clean for --json
    assert "hello from the model" in out.err


def test_user_code_that_exits(tmp_path):
    path = write(tmp_path, "exits.py", "import sys\nsys.exit(3)\ndef f(): pass\n")
    with pytest.raises(CaptureError, match=r"importing exits.py called sys.exit\(3\)"):
        load_python_target(f"{path}:f")


def test_user_code_that_raises_names_the_line(tmp_path):
    path = write(tmp_path, "raises.py", "def f(): pass\n\nx = 1 / 0\n")
    with pytest.raises(CaptureError) as info:
        load_python_target(f"{path}:f")
    msg = str(info.value)
    assert "importing raises.py failed: ZeroDivisionError: division by zero" in msg
    assert f'File "{path.resolve()}", line 3' in msg and "x = 1 / 0" in msg


def test_missing_framework_names_the_extra(tmp_path, monkeypatch):
    path = write(tmp_path, "needs_tf.py", "import tensorflow as tf\ndef f(x):\n    return x\n")
    monkeypatch.setitem(sys.modules, "tensorflow", None)  # makes `import tensorflow` fail
    with pytest.raises(DependencyError) as info:
        load_target(f"{path}:f")
    assert "pip install 'hloviz[tf]'" in str(info.value)
    path = write(tmp_path, "needs_jax.py", "import jax.numpy as jnp\ndef f(x):\n    return x\n")
    monkeypatch.setitem(sys.modules, "jax", None)
    with pytest.raises(DependencyError, match=r"hloviz\[jax\]"):
        load_target(f"{path}:f")


def test_arg_syntax_errors_come_before_importing_the_model(tmp_path):
    path = write(tmp_path, "boom.py", "raise RuntimeError('must not be imported')\n")
    with pytest.raises(HloParseError) as info:
        load_target(f"{path}:f", args=["f32[8", "f32[]"])
    assert info.value.column == 6


def test_spec_precedence_and_signature_check(plain_model):
    t = load_python_target(f"{plain_model}:two")
    conv = resolve_specs(t, ())
    assert conv.source == "HLOVIZ_ARGS" and conv.positional == (TensorSpec("f32", (8,)), TensorSpec("s32", ()))
    given = resolve_specs(t, ("f32[2]", "s32[]"))
    assert given.source == "--arg" and given.positional[0] == TensorSpec("f32", (2,))
    sig = ArgSpecs((TensorSpec("f32", (3,)),), (), source="input_signature")
    assert resolve_specs(t, (), sig) is sig  # input_signature beats HLOVIZ_ARGS
    assert resolve_specs(t, ("f32[1]", "s32[]"), sig).source == "--arg"  # --arg beats both
    kw = resolve_specs(load_python_target(f"{plain_model}:kw"), ())
    assert dict(kw.keyword)["x"] == TensorSpec("f32", (4,))


def test_wrong_number_of_specs_shows_the_signature(plain_model):
    t = load_python_target(f"{plain_model}:two")
    with pytest.raises(InputError) as info:
        check_against_signature(t, ArgSpecs((TensorSpec("f32", (8,)),), (), "--arg"))
    msg = str(info.value)
    assert "two(x, n) does not accept the 1 argument spec(s) from --arg options (--arg f32[8])" in msg
    assert "2 required: x, n" in msg
    with pytest.raises(InputError, match="two\\(x, n\\) does not accept the 3"):
        resolve_specs(t, ("f32[1]", "f32[1]", "f32[1]"))


def test_bad_hloviz_args_table(tmp_path):
    path = write(tmp_path, "badtable.py", "HLOVIZ_ARGS = ['f32[8]']\ndef f(x):\n    return x\n")
    with pytest.raises(InputError, match="HLOVIZ_ARGS must be a dict"):
        resolve_specs(load_python_target(f"{path}:f"), ())


@pytest.mark.requires_tf
@pytest.mark.requires_jax
def test_framework_detection(tmp_path):
    j = write(tmp_path, "jaxish.py", "import jax.numpy as jnp\ndef f(x):\n    return x + 1\n")
    t = write(tmp_path, "tfish.py", "import tensorflow as tf\ndef f(x):\n    return x + 1\n")
    both = write(tmp_path, "both.py", """
        import tensorflow as tf
        import jax.numpy as jnp
        def uses_jax(x):
            return jnp.sin(x)
        def uses_tf(x):
            return tf.sin(x)
    """)
    assert detect_framework(load_python_target(f"{j}:f")) == "jax"
    assert detect_framework(load_python_target(f"{t}:f")) == "tensorflow"
    assert detect_framework(load_python_target(f"{both}:uses_jax")) == "jax"
    assert detect_framework(load_python_target(f"{both}:uses_tf")) == "tensorflow"
