"""Turn a target string into something to capture from, and run the user's module safely.

A target is one of: ``path/model.py:fn``, ``package.module:fn``, ``path/model.py`` (when it
defines a single function), a saved capture folder, an XLA dump folder, or one HLO file.

Importing a model file runs it. User code may print, change directory, raise, or call
``sys.exit``; :func:`user_code` contains all of that: prints go to stderr (so ``--json`` output
stays clean), the working directory and ``sys.argv`` are restored, and exceptions become
:class:`~hloviz.errors.CaptureError` naming the line in the user's file.
"""

from __future__ import annotations

import contextlib
import difflib
import importlib
import importlib.util
import inspect
import os
import re
import sys
import traceback
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from hloviz.capture.frames import Frame, innermost_user_frame
from hloviz.errors import CaptureError, DependencyError, InputError, Terminated

#: Extras to name when a framework is missing.
EXTRAS = {"tensorflow": "tf", "jax": "jax", "jaxlib": "jax", "keras": "tf", "tf_keras": "tf"}

_IDENT_PATH = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")


@dataclass
class PythonTarget:
    """A function found in the user's code."""

    text: str  # the target as given
    module: ModuleType
    file: str | None  # the module's file (absolute), when it has one
    function_name: str
    obj: Any


def missing_dependency(exc: ModuleNotFoundError) -> DependencyError | None:
    """A DependencyError naming the extra to install, when ``exc`` is about TF/JAX."""
    top = (exc.name or "").split(".")[0]
    if top in EXTRAS:
        extra = EXTRAS[top]
        return DependencyError(
            f"{top} is not installed, and this target needs it",
            hint=f"install it with: pip install 'hloviz[{extra}]'",
        )
    return None


def tracing_hint(specs: Any) -> str:
    """What to check when tracing fails: the specs the function was traced with, and how a
    pytree argument (a dict or list of arrays) is given."""
    given = ", ".join(specs.describe()) or "none"
    return (f"it was traced with the argument specs ({given}) from {specs.source}; an argument that is a pytree "
            "(a dict or list of arrays) takes its shapes as one spec: --arg \"{'w': 'f32[64,32]', 'b': 'f32[32]'}\" "
            "or in HLOVIZ_ARGS")


def _user_frame_of(exc: BaseException, always: tuple[str, ...]) -> Frame | None:
    frames = [Frame(f.filename, f.lineno or 0, f.name) for f in traceback.extract_tb(exc.__traceback__)]
    return innermost_user_frame(frames, always=always)


@contextlib.contextmanager
def user_code(what: str, *, file: str | None = None, hint: str | None = None) -> Iterator[None]:
    """Run user code (importing, tracing) with its side effects contained.

    ``what`` completes the sentence "… failed" in error messages (``importing model.py``);
    ``hint`` is what to try when the user's code raises (the argument specs it was traced with).
    """
    cwd = os.getcwd()
    argv = list(sys.argv)
    always = (file,) if file else ()
    owner = os.getpid()
    try:
        with contextlib.redirect_stdout(sys.stderr), _fd1_to_stderr():
            yield
    except SystemExit as exc:
        raise CaptureError(f"{what} called sys.exit({exc.code!r})",
                           hint="hloviz imports the file as a module; keep exits under `if __name__ == \"__main__\":`") from None
    except ModuleNotFoundError as exc:
        dep = missing_dependency(exc)
        if dep is not None:
            raise dep from None
        frame = _user_frame_of(exc, always)
        where = f"\n{frame.format()}" if frame else ""
        raise CaptureError(f"{what} failed: {exc}{where}") from exc
    except (CaptureError, DependencyError, InputError):
        raise
    except (KeyboardInterrupt, Terminated):
        raise
    except BaseException as exc:
        frame = _user_frame_of(exc, always)
        where = f"\n{frame.format()}" if frame else ""
        raise CaptureError(f"{what} failed: {type(exc).__name__}: {exc}{where}", hint=hint) from exc
    finally:
        if os.getpid() != owner:  # a process the user's code forked ends here, not in hloviz
            os._exit(0)
        with contextlib.suppress(OSError):
            if os.getcwd() != cwd:
                os.chdir(cwd)
        sys.argv[:] = argv


@contextlib.contextmanager
def _fd1_to_stderr() -> Iterator[None]:
    """File descriptor 1 points at stderr meanwhile: ``os.write(1, …)``, ``os.system`` and C
    code print there too, never into hloviz's stdout (``--json``)."""
    try:
        sys.stdout.flush()
        saved = os.dup(1)
        os.dup2(2, 1)
    except (OSError, ValueError, AttributeError):
        yield  # no such descriptors (an embedding program): nothing to redirect
        return
    try:
        yield
    finally:
        with contextlib.suppress(OSError, ValueError):
            sys.__stdout__.flush() if sys.__stdout__ else None
        os.dup2(saved, 1)
        os.close(saved)


def _module_name_for(path: Path) -> str:
    stem = path.stem if _IDENT_PATH.match(path.stem) else "hloviz_target"
    existing = sys.modules.get(stem)
    taken = existing is not None and os.path.realpath(getattr(existing, "__file__", "") or "") != str(path)
    if taken or stem in sys.stdlib_module_names or stem in ("hloviz", "tensorflow", "jax", "numpy"):
        return f"hloviz_target_{stem}"
    return stem


def import_file(path: Path) -> ModuleType:
    """Import a model file as a module, with its folder on ``sys.path`` (like ``python path``)."""
    path = Path(os.path.realpath(path))
    folder = str(path.parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    name = _module_name_for(path)
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise InputError(f"{path} cannot be imported as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    with user_code(f"importing {path.name}", file=str(path)):
        try:
            spec.loader.exec_module(module)
        except BaseException:
            sys.modules.pop(name, None)
            raise
    return module


def import_dotted(name: str) -> ModuleType:
    """Import ``package.module`` with the current directory on ``sys.path`` (like ``python -m``)."""
    if "" not in sys.path and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        importlib.util.find_spec(name)
    except (ModuleNotFoundError, ValueError):
        raise InputError(f"module {name!r} not found (looked on sys.path and in {os.getcwd()})") from None
    if importlib.util.find_spec(name) is None:
        raise InputError(f"module {name!r} not found (looked on sys.path and in {os.getcwd()})")
    with user_code(f"importing {name}"):
        return importlib.import_module(name)


def _defined_in(obj: Any, module: ModuleType) -> bool:
    inner = getattr(obj, "python_function", None) or getattr(obj, "__wrapped__", None) or obj
    return getattr(inner, "__module__", None) == module.__name__


def available_functions(module: ModuleType) -> list[str]:
    """Public functions defined in ``module`` (plain, tf.function or jax.jit), in file order."""
    names = []
    for name, obj in vars(module).items():
        if name.startswith("_") or inspect.isclass(obj) or inspect.ismodule(obj):
            continue
        if callable(obj) and _defined_in(obj, module):
            names.append(name)
    return names


def find_function(module: ModuleType, name: str | None, *, text: str, file: str | None) -> PythonTarget:
    """Look ``name`` up in ``module`` (``a.b`` for attributes); list what is there if absent."""
    where = file or module.__name__
    funcs = available_functions(module)
    if name is None:
        if len(funcs) == 1:
            name = funcs[0]
        else:
            listing = ", ".join(funcs) if funcs else "(none)"
            raise InputError(f"{where} defines several functions; name one as TARGET:FUNCTION. "
                             f"Functions there: {listing}" if funcs else f"{where} defines no functions")
    obj: Any = module
    for part in name.split("."):
        if not hasattr(obj, part):
            listing = ", ".join(funcs) if funcs else "(none)"
            close = difflib.get_close_matches(name, funcs, n=3, cutoff=0.6)
            raise InputError(f"function {name!r} not found in {where}. Functions there: {listing}",
                             hint=f"did you mean {' or '.join(repr(c) for c in close)}?" if close else None)
        obj = getattr(obj, part)
    if _is_keras_object(obj):
        raise InputError(
            f"{name!r} in {where} is a Keras {type(obj).__name__} object, not a function: hloviz captures a "
            "function of tensors",
            hint=f"wrap the call in a function and name that one, e.g.\n  @tf.function(jit_compile=True)\n"
                 f"  def classify(images):\n      return {name}(images, training=False)\n"
                 f"then: hloviz stats {file or module.__name__}:classify --arg f32[1,224,224,3]")
    if _is_flax_module(obj):
        raise InputError(
            f"{name!r} in {where} is a Flax {type(obj).__name__} module object, not a function: hloviz captures a "
            "function of arrays (a Flax module needs its parameters to run)",
            hint=f"wrap the call in a function and name that one, e.g.\n  params = {name}.init(jax.random.key(0), x)\n"
                 f"  def forward(x):\n      return {name}.apply(params, x)\n"
                 f"then: hloviz stats {file or module.__name__}:forward --arg f32[1,28,28,1]")
    if not callable(obj):
        raise InputError(f"{name!r} in {where} is a {type(obj).__name__}, not a function")
    return PythonTarget(text, module, file, name, obj)


def _is_flax_module(obj: Any) -> bool:
    """A Flax (linen or nnx) module object: callable only inside ``apply`` with its parameters."""
    return any(c.__module__.split(".", 1)[0] == "flax" and c.__name__ == "Module" for c in type(obj).__mro__)


def _is_keras_object(obj: Any) -> bool:
    """A Keras model or layer (callable, but not a function hloviz can trace as it is)."""
    return any(c.__module__.split(".", 1)[0] in ("keras", "tf_keras") and c.__name__ in ("Layer", "Model", "Operation")
               for c in type(obj).__mro__)


def split_function_target(target: str) -> tuple[str, str | None] | None:
    """``("path/model.py", "fn")`` / ``("pkg.mod", "fn")`` / ``("model.py", None)``, or None when
    ``target`` does not name Python code."""
    if ":" in target:
        left, right = target.rsplit(":", 1)
        if _IDENT_PATH.match(right) and left:
            return left, right
        return None
    if target.endswith(".py"):
        return target, None
    return None


def check_python_file(left: str) -> None:
    """:class:`InputError` when the file a ``FILE.py:FUNCTION`` target names exists but is not a
    regular file: Python would wait forever reading a FIFO (``mkfifo model.py``) or read a device
    without end. Checked before any process is started for the capture."""
    import stat

    try:
        mode = os.stat(left).st_mode
    except OSError:
        return  # missing: the import says so, with the usual message
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        kind = "a FIFO" if stat.S_ISFIFO(mode) else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else \
            "not a regular file"
        raise InputError(f"{left} is {kind}, not a regular Python file; hloviz imports only regular files")


def load_python_target(target: str) -> PythonTarget:
    """Import the module a ``model.py:fn`` / ``pkg.mod:fn`` target names and find the function."""
    parts = split_function_target(target)
    if parts is None:
        raise InputError(f"{target!r} is not a file, a folder, or a MODULE:FUNCTION target")
    left, fn = parts
    path = Path(left)
    if left.endswith(".py") or os.sep in left or path.exists():
        if not path.exists():
            raise InputError(f"file not found: {left}")
        if path.is_dir():
            raise InputError(f"{left} is a folder; a FILE.py:FUNCTION target needs a Python file")
        check_python_file(left)
        module = import_file(path)
        return find_function(module, fn, text=target, file=str(Path(os.path.realpath(path))))
    if not _IDENT_PATH.match(left):
        raise InputError(f"{left!r} is neither an existing file nor a module name")
    module = import_dotted(left)
    file = getattr(module, "__file__", None)
    return find_function(module, fn, text=target, file=os.path.realpath(file) if file else None)
