"""Argument specs: what the user's function is traced with, without allocating anything.

A spec is written in HLO shape syntax (``f32[100000000]``, ``s32[8,128]``, ``bf16[2,3]``,
``pred[]``) for a tensor argument, or as a Python literal (``3``, ``True``, ``'relu'``,
``(1, 2)``) for an argument the function uses as a plain Python value. The same syntax is
used by ``--arg`` and by the ``HLOVIZ_ARGS`` mapping a model file may define. A tensor spec
only describes a shape: the framework traces and compiles against it, so a spec of 100M
elements costs no memory.

``--arg name=SPEC`` binds a spec to a keyword argument by name.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from hloviz.errors import HloParseError
from hloviz.ir import ELEMENT_BITS

#: Element types a tensor spec may use (XLA's names; token/opaque/tuple are not values).
TENSOR_TYPES = tuple(t for t in ELEMENT_BITS if t not in ("token", "opaque", "tuple"))

# Names users type by habit, mapped to the HLO name we expect instead.
_HABITS = {
    "float32": "f32", "float": "f32", "float16": "f16", "half": "f16", "float64": "f64",
    "double": "f64", "bfloat16": "bf16", "int8": "s8", "int16": "s16", "int32": "s32",
    "int64": "s64", "int": "s32", "uint8": "u8", "uint16": "u16", "uint32": "u32",
    "uint64": "u64", "bool": "pred", "complex64": "c64", "complex128": "c128",
    "i32": "s32", "i64": "s64", "i8": "s8", "i16": "s16",
}

_COMMON = ("f32", "f16", "bf16", "f64", "s8", "s16", "s32", "s64", "u8", "u32", "pred", "c64")

_LOOKS_LIKE_SHAPE = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*\[")
_KEYWORD = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*=(?!=)")


@dataclass(frozen=True)
class TensorSpec:
    """A tensor argument: an HLO element type and static dimensions."""

    element_type: str
    dims: tuple[int, ...]

    @property
    def element_count(self) -> int:
        n = 1
        for d in self.dims:
            n *= d
        return n

    def __str__(self) -> str:
        return f"{self.element_type}[{','.join(map(str, self.dims))}]"


@dataclass(frozen=True)
class LiteralArg:
    """A non-tensor argument, passed to the function as this Python value."""

    value: Any
    text: str

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class PytreeArg:
    """A nested dict / list / tuple of tensor specs: an argument that is a pytree (a model's
    parameters), given in ``HLOVIZ_ARGS`` as the same structure with spec strings as leaves."""

    value: Any
    text: str

    def leaves(self) -> list[tuple[str, TensorSpec]]:
        """``(path, spec)`` of every leaf, the path written as in Python (``['Block_0']['w']``)."""
        out: list[tuple[str, TensorSpec]] = []

        def visit(node: Any, path: str) -> None:
            if isinstance(node, dict):
                for k, v in node.items():
                    visit(v, f"{path}[{k!r}]")
            elif isinstance(node, (list, tuple)):
                for i, v in enumerate(node):
                    visit(v, f"{path}[{i}]")
            else:
                out.append((path, node))

        visit(self.value, "")
        return out

    def map(self, fn: Any) -> Any:
        """The same structure with ``fn(spec)`` at every leaf (a named tuple — an optimizer's
        state, ``ScaleByAdamState(count, mu, nu)`` — stays that type)."""
        def visit(node: Any) -> Any:
            if isinstance(node, dict):
                return {k: visit(v) for k, v in node.items()}
            if isinstance(node, (list, tuple)):
                return _rebuilt(node, [visit(v) for v in node])
            return fn(node)

        return visit(self.value)

    def __str__(self) -> str:
        return self.text


Spec = TensorSpec | LiteralArg | PytreeArg


def _is_spec_tree(value: Any) -> bool:
    """A dict/list/tuple whose leaves are all tensor specs — shape strings, or arrays and shape
    structs (:func:`array_spec`) — with at least one leaf (an optimizer's ``EmptyState()`` inside
    it is an empty branch)."""
    def walk(node: Any) -> int | None:  # leaves below, None when one is no tensor spec
        if isinstance(node, dict):
            found = [walk(v) for v in node.values()]
        elif isinstance(node, (list, tuple)):
            found = [walk(v) for v in node]
        else:
            return 1 if _is_shape_text(node) or array_spec(node) is not None else None
        return None if None in found else sum(n for n in found if n is not None)

    return isinstance(value, (dict, list, tuple)) and bool(walk(value))


def _is_shape_text(value: Any) -> bool:
    return isinstance(value, str) and _LOOKS_LIKE_SHAPE.match(value) is not None


def array_spec(value: Any) -> TensorSpec | None:
    """The spec of an array or a shape struct given where a spec goes (``HLOVIZ_ARGS`` holding
    ``jnp.zeros((8, 128))``, ``jax.ShapeDtypeStruct``, ``np.ndarray``, ``tf.TensorSpec``): its
    shape and element type, none of its values. None for anything else, or a dimension not
    known (``tf.TensorSpec([None, 3])``)."""
    if isinstance(value, (str, bytes, int, float, complex)):
        return None
    try:  # the user's object: any property may raise
        shape, dtype_of = value.shape, value.dtype
        dims = tuple(int(d) for d in shape)
        dtype = getattr(dtype_of, "name", None) or str(dtype_of)
    except Exception:  # noqa: BLE001 — no shape and dtype to read: not an array
        return None
    element = _HABITS.get(dtype, dtype)
    return TensorSpec(element, dims) if element in TENSOR_TYPES and all(d >= 0 for d in dims) else None


def _rebuilt(node: list | tuple, children: list) -> Any:
    """``node``'s type holding ``children``: a named tuple from its fields, a list or tuple."""
    if isinstance(node, tuple) and hasattr(node, "_fields"):
        return type(node)(*children)
    return type(node)(children)


def _parse_tree(value: Any, where: str) -> Any:
    if isinstance(value, dict):
        return {k: _parse_tree(v, f"{where}[{k!r}]") for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return _rebuilt(value, [_parse_tree(v, f"{where}[{i}]") for i, v in enumerate(value)])
    spec = array_spec(value)
    return spec if spec is not None else parse_spec(value, where=where)


@dataclass(frozen=True)
class ArgSpecs:
    """Positional and keyword specs, plus where they came from (for messages and capture.json)."""

    positional: tuple[Spec, ...]
    keyword: tuple[tuple[str, Spec], ...] = ()
    source: str = "none"

    def __len__(self) -> int:
        return len(self.positional) + len(self.keyword)

    def describe(self) -> list[str]:
        """The specs as the user would write them with ``--arg``."""
        return [str(s) for s in self.positional] + [f"{k}={s}" for k, s in self.keyword]


def _error(message: str, text: str, column: int, where: str) -> HloParseError:
    return HloParseError(message, filename=where, line=1, column=max(1, column), source_line=text)


def parse_spec(text: str, *, where: str = "--arg") -> Spec:
    """Parse one spec; a mistake raises :class:`HloParseError` with a caret under it.

    ``where`` names the spec in the message (``--arg 2``, ``model.py: HLOVIZ_ARGS['f'][0]``).
    """
    m = _LOOKS_LIKE_SHAPE.match(text)
    if m is None:
        return _parse_literal(text, where)
    name = m.group(1)
    if name not in TENSOR_TYPES:
        col = m.start(1) + 1
        if name in _HABITS:
            raise _error(f"unknown element type '{name}'; HLO writes it as '{_HABITS[name]}'", text, col, where)
        raise _error(
            f"unknown element type '{name}' (expected one of: {', '.join(_COMMON)}, …)",
            text, col, where,
        )
    pos = m.end()  # just after '['
    close = text.find("]", pos)
    if close < 0:
        raise _error("expected ']' to close the dimensions", text, len(text) + 1, where)
    dims: list[int] = []
    body = text[pos:close]
    if body.strip():
        offset = pos
        for part in body.split(","):
            stripped = part.strip()
            col = offset + (len(part) - len(part.lstrip())) + 1
            if stripped == "?" or stripped.startswith("<="):
                raise _error(
                    "dynamic dimensions cannot be compiled ahead of time; give a static size",
                    text, col, where,
                )
            if not (stripped.isascii() and stripped.isdecimal()):
                raise _error(f"expected a dimension size (a non-negative integer), got '{_short(stripped)}'",
                             text, col, where)
            if len(stripped.lstrip("0")) > 19 or int(stripped) >= 1 << 63:  # XLA's sizes are int64
                raise _error(f"a dimension size must be below 2^63 (XLA's int64), not {_short(stripped)}",
                             text, col, where)
            dims.append(int(stripped))
            offset += len(part) + 1
    rest = text[close + 1:]
    stripped_rest = rest.strip()
    if stripped_rest.startswith("{") and stripped_rest.endswith("}") and "{" not in stripped_rest[1:]:
        stripped_rest = ""  # a layout such as {1,0}: accepted and ignored (the compiler picks layouts)
    if stripped_rest:
        col = close + 2 + (len(rest) - len(rest.lstrip()))
        raise _error(f"unexpected text after the shape: '{stripped_rest}'", text, col, where)
    return TensorSpec(name, tuple(dims))


def _parse_literal(text: str, where: str) -> LiteralArg | PytreeArg:
    """A Python literal; one whose leaves are all shapes (``[('f32[32,64]', 'f32[64]')]``, a
    dict of them) is a pytree of tensors, as in ``HLOVIZ_ARGS``, never a Python list of strings."""
    try:
        value = ast.literal_eval(text.strip())
    except SyntaxError as exc:
        lead = len(text) - len(text.lstrip())
        col = (exc.offset or 1) + lead
        raise _error(
            "not an HLO shape (like f32[8,128] or pred[]) nor a Python literal (like 3, True, 'relu')",
            text, min(col, len(text) + 1), where,
        ) from None
    except ValueError:
        raise _error(
            "not an HLO shape (like f32[8,128] or pred[]) nor a Python literal (like 3, True, 'relu')",
            text, len(text) - len(text.lstrip()) + 1, where,
        ) from None
    if _is_spec_tree(value):
        return PytreeArg(_parse_tree(value, where), _tree_text(value))
    return LiteralArg(value, text.strip())


def parse_arg_options(options: Sequence[str]) -> ArgSpecs:
    """Parse ``--arg`` values in order; ``name=SPEC`` binds by keyword."""
    positional: list[Spec] = []
    keyword: list[tuple[str, Spec]] = []
    for i, text in enumerate(options, 1):
        where = f"--arg {i}"
        km = _KEYWORD.match(text)
        if km and not _LOOKS_LIKE_SHAPE.match(text):
            keyword.append((km.group(1), parse_spec(text[km.end():], where=where)))
            continue
        if keyword:
            raise _error("a positional spec cannot follow a name=SPEC one", text, 1, where)
        positional.append(parse_spec(text, where=where))
    return ArgSpecs(tuple(positional), tuple(keyword), source="--arg")


def _tree_text(value: Any) -> str:
    n = sum(1 for _ in _leaf_strings(value))
    return f"<pytree of {n} tensors>"


def _leaf_strings(value: Any):
    if isinstance(value, dict):
        for v in value.values():
            yield from _leaf_strings(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _leaf_strings(v)
    else:
        yield value


def parse_convention(entry: Any, *, where: str) -> ArgSpecs:
    """Parse one ``HLOVIZ_ARGS`` entry: a list of specs (strings are parsed like ``--arg``; an
    array or a shape struct gives its shape; a dict/list/tuple whose leaves are all such is a
    pytree of tensors; other values are passed through as Python values), or a dict of keyword
    specs."""
    positional: list[Spec] = []
    keyword: list[tuple[str, Spec]] = []
    if isinstance(entry, dict):
        items: list[tuple[str | None, Any]] = [(str(k), v) for k, v in entry.items()]
    elif isinstance(entry, (list, tuple)):
        items = [(None, v) for v in entry]
    elif isinstance(entry, str):
        items = [(None, entry)]
    else:
        from hloviz.errors import InputError

        raise InputError(f"{where} must be a list of specs like [\"f32[8]\", \"s32[]\"], "
                         f"not {type(entry).__name__}")
    for i, (name, value) in enumerate(items):
        label = f"{where}[{name!r}]" if name is not None else f"{where}[{i}]"
        array = array_spec(value)
        if isinstance(value, str):
            spec: Spec = parse_spec(value, where=label)
        elif array is not None:  # an example array or shape struct: its shape, none of its values
            spec = array
        elif _is_spec_tree(value):
            spec = PytreeArg(_parse_tree(value, label), _tree_text(value))
        else:
            spec = LiteralArg(value, repr(value))
        if name is None:
            positional.append(spec)
        else:
            keyword.append((name, spec))
    return ArgSpecs(tuple(positional), tuple(keyword), source="HLOVIZ_ARGS")


def _short(text: str, limit: int = 40) -> str:
    """``text`` cut for a message (a value may be thousands of characters long)."""
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text)} characters)"
