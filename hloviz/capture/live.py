"""What a live capture needs before it calls a framework: which framework, and which specs.

Argument specs come from the first source that has them:

1. ``--arg`` options (``--arg f32[100000000] --arg f32[]``, ``--arg delta=f32[]``);
2. the function's ``input_signature`` (TensorFlow);
3. the model file's ``HLOVIZ_ARGS`` mapping, function name → list of specs::

       HLOVIZ_ARGS = {
           "fused_additions": ["f32[100000000]", "f32[]"],
           "scaled": ["f32[8,128]", "2"],          # strings are parsed like --arg
           "by_name": {"x": "f32[4]", "k": 3},     # keywords; non-strings pass through as values
           "step": [params, opt_state, jnp.zeros((8, 4))],  # arrays give their shapes (a pytree of them)
       }

4. nothing, when the function takes no required arguments.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable, Sequence
from typing import Any

from hloviz.capture.specs import ArgSpecs, parse_arg_options, parse_convention
from hloviz.capture.target import PythonTarget
from hloviz.errors import DependencyError, InputError

_TF_PREFIXES = ("tensorflow", "keras", "tf_keras")
_JAX_PREFIXES = ("jax", "jaxlib", "flax", "equinox", "haiku")


def _framework_of_object(obj: Any) -> str | None:
    mod = getattr(obj, "__name__", None) if inspect.ismodule(obj) else getattr(type(obj), "__module__", "")
    if not isinstance(mod, str):
        return None
    top = mod.split(".")[0]
    if top in _TF_PREFIXES:
        return "tensorflow"
    if top in _JAX_PREFIXES:
        return "jax"
    if not inspect.ismodule(obj) and (inspect.isfunction(obj) or inspect.isbuiltin(obj)):
        top = (getattr(obj, "__module__", "") or "").split(".")[0]
        if top in _TF_PREFIXES:
            return "tensorflow"
        if top in _JAX_PREFIXES:
            return "jax"
    return None


def detect_framework(target: PythonTarget) -> str:
    """``"tensorflow"`` or ``"jax"``: by the function's type, then by what its code refers to,
    then by what its module imports. A plain function in a file that imports jax but not
    tensorflow is JAX."""
    own = _framework_of_object(target.obj)
    if own is not None and not inspect.isfunction(target.obj):
        return own
    fn = inspect.unwrap(target.obj) if callable(target.obj) else target.obj
    glb = vars(target.module)
    code = getattr(fn, "__code__", None)
    if code is not None:
        used = {fw for n in code.co_names if n in glb and (fw := _framework_of_object(glb[n])) is not None}
        if len(used) == 1:
            return used.pop()
    imported = {_framework_of_object(v) for v in glb.values()}
    imported.discard(None)
    if imported == {"jax"}:
        return "jax"
    if imported == {"tensorflow"}:
        return "tensorflow"
    for name in ("tensorflow", "jax"):  # ambiguous: whichever is installed, TensorFlow first
        if name in sys.modules:
            return name
    import importlib.util

    for name in ("tensorflow", "jax"):
        if importlib.util.find_spec(name) is not None:
            return name
    raise DependencyError("neither TensorFlow nor JAX is installed; hloviz needs one to capture a function",
                          hint="install one with: pip install 'hloviz[tf]'  (or 'hloviz[jax]')")


def python_function(obj: Any) -> Callable[..., Any]:
    """The Python function behind a tf.function / jax.jit wrapper (for its signature)."""
    return getattr(obj, "python_function", None) or obj


def signature_text(target: PythonTarget) -> str:
    fn = python_function(target.obj)
    try:
        return f"{target.function_name}{inspect.signature(fn)}"
    except (TypeError, ValueError):
        return f"{target.function_name}(...)"


def convention_specs(target: PythonTarget) -> ArgSpecs | None:
    """The ``HLOVIZ_ARGS`` entry for this function, if the module has one."""
    table = getattr(target.module, "HLOVIZ_ARGS", None)
    if table is None:
        return None
    where = f"{target.file or target.module.__name__}: HLOVIZ_ARGS"
    if not isinstance(table, dict):
        raise InputError(f"{where} must be a dict of function name → list of specs, not {type(table).__name__}")
    if target.function_name not in table:
        return None
    return parse_convention(table[target.function_name], where=f"{where}[{target.function_name!r}]")


def check_against_signature(target: PythonTarget, specs: ArgSpecs) -> None:
    """Raise a clear InputError when the specs do not fit the function's parameters."""
    fn = python_function(target.obj)
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return
    try:
        sig.bind(*specs.positional, **dict(specs.keyword))
    except TypeError as exc:
        required = [p.name for p in sig.parameters.values()
                    if p.default is inspect.Parameter.empty
                    and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
        given = " ".join(f"--arg {d}" for d in specs.describe()) or "none"
        source = {"--arg": "--arg options", "HLOVIZ_ARGS": "HLOVIZ_ARGS"}.get(specs.source, specs.source)
        if not len(specs) and specs.source == "none":
            raise InputError(_no_shapes(target, required), hint=_no_shapes_hint(target, required)) from None
        raise InputError(
            f"{signature_text(target)} does not accept the {len(specs)} argument spec(s) from {source} "
            f"({given}): {exc}",
            hint=f"give one spec per parameter ({len(required)} required: {', '.join(required) or 'none'}), "
                 "e.g. --arg f32[8,128] --arg s32[]",
        ) from None


def _no_shapes(target: PythonTarget, required: list[str]) -> str:
    return (f"{signature_text(target)} takes {len(required)} argument{'s' if len(required) != 1 else ''} "
            f"({', '.join(required)}) and hloviz knows none of their shapes: XLA compiles for shapes, so each "
            "needs one (no array is allocated)")


def _no_shapes_hint(target: PythonTarget, required: list[str]) -> str:
    example = ", ".join("'f32[8,128]'" if i == 0 else "'s32[8]'" for i, _ in enumerate(required[:2]))
    file = target.file or "its file"
    return (f"give one --arg per argument (e.g. --arg f32[8,128]; a pytree such as a dict of weights as "
            f"--arg \"{{'w': 'f32[64,32]', 'b': 'f32[32]'}}\"), or write them once in {file}: "
            f"HLOVIZ_ARGS = {{{target.function_name!r}: [{example}]}} (a dict or list of shapes for a pytree argument)")


def resolve_specs(target: PythonTarget, arg_options: Sequence[str],
                  input_signature: ArgSpecs | None = None) -> ArgSpecs:
    """Pick the specs by the precedence in the module docstring and check them."""
    if arg_options:
        specs = parse_arg_options(arg_options)
    elif input_signature is not None:
        return input_signature  # the framework checks it against the function itself
    else:
        specs = convention_specs(target) or ArgSpecs((), (), source="none")
    check_against_signature(target, specs)
    return specs
