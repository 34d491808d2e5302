"""Stand-ins for TensorFlow releases: tiny wheels built by the tests, installed by real uv/pip.

:func:`build_tf_wheel` writes ``tensorflow_cpu-<version>-py3-none-any.whl`` (or
``tensorflow-…`` off Linux x86-64, whatever :class:`hloviz.capture.releases.envs.Framework` installs
here) into a folder that serves as the package index (``--find-links``). Its ``tensorflow``
package is just enough of TensorFlow's API for :func:`hloviz.capture.tf.capture_tf`: a
``tf.function`` whose ``experimental_get_compiler_ir`` returns the HLO of a saved capture, so a
capture under the fake "2.17.9" gives exactly the saved TF 2.17 HLO. The user's function is
really called on stand-in tensors, so code that uses an API this "release" lacks fails to trace
as under a real old TensorFlow. ``behaviour="import-error"`` makes ``import tensorflow`` fail,
``"crash"`` makes the compiler kill the process (as a segfault in XLA would).
"""

from __future__ import annotations

import base64
import hashlib
import zipfile
from pathlib import Path

from hloviz.capture.releases.envs import FRAMEWORKS

FAKE_TF = '''
"""A stand-in for TensorFlow {version}, made by hloviz's tests."""
import os as _os
__version__ = "{version}"
if "{behaviour}" == "import-error":
    raise ImportError("libtensorflow_framework.so.2: cannot open shared object file: No such file or directory")
_HERE = _os.path.dirname(__file__)


class DType:
    def __init__(self, name):
        self.name = name


float32, int32, bool = DType("float32"), DType("int32"), DType("bool")


class TensorSpec:
    def __init__(self, shape, dtype, name=None):
        self.shape, self.dtype, self.name = list(shape), dtype, name


class _Tensor:
    device = "/job:localhost/replica:0/task:0/device:CPU:0"

    def __add__(self, other):
        return self

    __radd__ = __mul__ = __rmul__ = __sub__ = __add__


def zeros(shape):
    return _Tensor()


class _Graph:
    inputs = ()     # a stand-in graph has no inputs: hloviz then writes no parameter names
    captures = ()

    def get_operations(self):
        return []


class _Concrete:
    graph = _Graph()
    variables = ()
    structured_input_signature = ((), {{}})


class _Namespace:
    pass


math = _Namespace()
math.add = lambda a, b: a + b
if tuple(int(p) for p in __version__.split(".")[:2]) >= (2, 21):
    math.only_in_2_21 = lambda a: a


class _Function:
    def __init__(self, fn, jit_compile=None, input_signature=None):
        self.python_function = fn
        self._jit_compile = jit_compile
        self.input_signature = input_signature
        self.__name__ = fn.__name__
        self.__module__ = fn.__module__

    def __call__(self, *args, **kwargs):
        return self.python_function(*args, **kwargs)

    def get_concrete_function(self, *args, **kwargs):
        self.python_function(*[_Tensor() for _ in args], **{{k: _Tensor() for k in kwargs}})
        return _Concrete()

    def experimental_get_compiler_ir(self, *args, **kwargs):
        def generate(stage):
            if "{behaviour}" == "crash":
                import sys
                print("Fatal Python error: Segmentation fault", file=sys.stderr, flush=True)
                _os._exit(139)
            name = "pre.hlo" if stage == "hlo" else "post.hlo"
            with open(_os.path.join(_HERE, "_hlo", name), encoding="utf-8") as f:
                return f.read()
        return generate


def function(fn=None, jit_compile=None, input_signature=None):
    if fn is None:
        return lambda f: _Function(f, jit_compile, input_signature)
    return _Function(fn, jit_compile, input_signature)
'''


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def build_tf_wheel(folder: Path, version: str, capture: Path | None, behaviour: str = "ok") -> Path:
    """A wheel of the stand-in TensorFlow ``version`` whose HLO is that of the saved ``capture``."""
    package = FRAMEWORKS["tensorflow"].package()
    dist = package.replace("-", "_")
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{dist}-{version}-py3-none-any.whl"
    files = {"tensorflow/__init__.py": FAKE_TF.format(version=version, behaviour=behaviour).encode()}
    if capture is not None:
        files["tensorflow/_hlo/pre.hlo"] = (capture / "pre.hlo").read_bytes()
        files["tensorflow/_hlo/post.hlo"] = (capture / "post.hlo").read_bytes()
    info = f"{dist}-{version}.dist-info"
    files[f"{info}/METADATA"] = f"Metadata-Version: 2.1\nName: {package}\nVersion: {version}\n".encode()
    files[f"{info}/WHEEL"] = b"Wheel-Version: 1.0\nGenerator: hloviz-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    record = [_record_line(n, d) for n, d in files.items()] + [f"{info}/RECORD,,"]
    files[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode()
    with zipfile.ZipFile(path, "w") as z:
        for name, data in files.items():
            z.writestr(name, data)
    return path


def placeholder_wheel(folder: Path, version: str, python_tags: list[str], platform_tag: str) -> Path:
    """An empty file named like a wheel: the index lookup only reads names."""
    dist = FRAMEWORKS["tensorflow"].package().replace("-", "_")
    folder.mkdir(parents=True, exist_ok=True)
    out = None
    for tag in python_tags:
        out = folder / f"{dist}-{version}-{tag}-{tag}-{platform_tag}.whl"
        out.write_bytes(b"")
    assert out is not None
    return out


TARGET = '''
import tensorflow as tf

HLOVIZ_ARGS = {"fused_additions": ["f32[100000000]", "f32[]"], "new_api": ["f32[4]"]}


@tf.function(jit_compile=True)
def fused_additions(x, delta):
    for _ in range(1000):
        x = x + delta
    return x


@tf.function(jit_compile=True)
def new_api(x):
    return tf.math.only_in_2_21(x)
'''


def write_target(folder: Path) -> Path:
    """A model file for the stand-in TensorFlow (the seed function, and one using a 2.21-only API)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "model.py"
    path.write_text(TARGET, encoding="utf-8")
    return path
