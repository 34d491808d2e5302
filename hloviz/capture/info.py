"""What ``capture.json`` holds, as a typed value: :class:`CaptureInfo`.

A capture's info travels as JSON between machines and hloviz versions, and an edited or damaged
file must be an input error that names the key and what is wrong with it — never a
``TypeError`` deep inside an analysis. :meth:`CaptureInfo.from_dict` is that check: the known
keys have the types below; keys it does not know (a newer hloviz may add some) are kept in
``extra``, untouched, and :meth:`CaptureInfo.to_dict` gives back the same JSON object.

Stdlib only: reading a capture needs neither TensorFlow nor JAX.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from hloviz.errors import InputError

__all__ = ["CaptureInfo", "SourceLocation", "surrogates_possible"]

_HINT = "the file was edited or damaged; capture it again (hloviz dump)"


@dataclass(frozen=True)
class SourceLocation:
    """Where the user wrote a framework op: ``file``, 1-based ``line`` and the enclosing ``function``."""

    file: str
    line: int
    function: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"file": self.file, "line": self.line, "function": self.function}


@dataclass(frozen=True)
class CaptureInfo:
    """Where a capture came from. Every field is optional: HLO files and XLA dumps know less
    than a live capture.

    ``source`` says which: ``live`` (a traced function), ``hlo_file``, ``hlo_files``,
    ``xla_dump`` or ``module``. ``source_map`` maps TF op names (or JAX name stacks) to the
    user's line; ``tf_ops`` maps TF op names to op types, ``tf_inputs`` to the names of the
    ops feeding them and ``tf_outputs`` to the types of their outputs (the traced graph, which
    the folding analysis reads).
    """

    hloviz: str | None = None
    python: str | None = None
    machine: str | None = None
    time: str | None = None
    source: str | None = None
    label: str | None = None
    target: str | None = None
    function: str | None = None
    file: str | None = None
    module: str | None = None
    framework: str | None = None
    tensorflow: str | None = None
    jax: str | None = None
    jaxlib: str | None = None
    device: str | None = None
    platform: str | None = None
    jit_compile: bool | None = None
    wrapped: str | None = None
    args: tuple[str, ...] = ()
    arg_source: str | None = None
    capture_seconds: float | None = None
    stage: str | None = None
    stage_reason: str | None = None
    pre_file: str | None = None
    post_file: str | None = None
    dump_folder: str | None = None
    #: The file beside the HLO that keeps XLA's own buffer assignment (``memory.json``), when the
    #: capture read it (a live capture, a dump folder with ``*-buffer-assignment.txt``).
    memory_file: str | None = None
    source_map: Mapping[str, SourceLocation] = field(default_factory=dict)
    tf_ops: Mapping[str, str] = field(default_factory=dict)
    tf_inputs: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: TF op name → the type of each of its outputs in HLO's words (``f32[128,128]``, ``s32[]``;
    #: "" where the shape is not static): what a folded value must look like.
    tf_outputs: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: Keys this version does not know, as they were.
    extra: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, info: object, *, where: str = "capture.json", text_known: bool = False) -> CaptureInfo:
        """Check ``info`` (a parsed ``capture.json``) and build the typed value.

        Raises :class:`InputError` naming ``where``, the key and what was found, e.g.
        ``run/capture.json: source_map["add"].line must be an integer, not a string``.
        ``text_known``: the caller knows every string is text (:func:`surrogates_possible` said
        no of the JSON it was read from), so the search for lone surrogates is skipped.
        """
        if not isinstance(info, Mapping):
            raise InputError(f"{where} must hold a JSON object, not {_kind(info)}", hint=_HINT)
        if not text_known:
            _refuse_surrogates(info, where)
        values: dict[str, Any] = {}
        extra: dict[str, Any] = {}
        for key, value in info.items():
            if not isinstance(key, str):  # only from Python callers: JSON keys are strings
                raise InputError(f"{where}: key {key!r} must be a string", hint=_HINT)
            check = _CHECKS.get(key)
            if check is None:
                extra[key] = value
            elif value is not None:
                values[key] = check(value, key, where)
        return cls(**values, extra=extra)

    def to_dict(self) -> dict[str, Any]:
        """The JSON object again: the known keys that are set (empty lists and maps left out), in
        field order, then ``extra``."""
        out: dict[str, Any] = {}
        for f in fields(self):
            if f.name == "extra":
                continue
            value = getattr(self, f.name)
            if value is None or (f.name in _CONTAINERS and not value):
                continue
            if f.name == "source_map":
                value = {k: loc.to_dict() for k, loc in value.items()}
            elif f.name in ("tf_inputs", "tf_outputs"):
                value = {k: list(v) for k, v in value.items()}
            elif f.name == "tf_ops":
                value = dict(value)
            elif f.name == "args":
                value = list(value)
            out[f.name] = value
        out.update(self.extra)
        return out

    @property
    def framework_version(self) -> str | None:
        """``TensorFlow 2.21.0`` / ``JAX 0.4.30``, or None when the HLO came without a framework."""
        if self.tensorflow:
            return f"TensorFlow {self.tensorflow}"
        if self.jax:
            return f"JAX {self.jax}"
        return None


def _refuse_surrogates(info: Mapping[Any, Any], where: str) -> None:
    """:class:`InputError` naming the first key whose name or text holds a lone UTF-16 surrogate
    (``"2.17\\ud800"`` is valid JSON, but not text: it cannot be printed or written as UTF-8).
    Every key is looked at, those this version does not know too (they are printed and saved
    again); a stack, not recursion, for any nesting the JSON reader allowed.

    First the whole value is written as JSON by the C encoder and encoded as UTF-8, which fails
    on a lone surrogate anywhere: a clean capture.json (every real one) is checked in one pass
    at C speed (MobileNetV3's 128,000 strings: 1 s of Python walking before); only one that
    fails, or holds what JSON cannot write, is walked to name the key."""
    if _all_text(info):
        return
    stack: list[tuple[str, object]] = [(_quote(k) if not isinstance(k, str) else k, v) for k, v in info.items()]
    for key in info:
        if isinstance(key, str) and not _is_text(key):
            raise InputError(f"{where}: the key {_escaped(key)} holds a lone surrogate, which is not text", hint=_HINT)
    while stack:
        at, value = stack.pop()
        if isinstance(value, str):
            if not _is_text(value):
                raise InputError(f"{where}: {at} holds a lone surrogate, which is not text: {_escaped(value)}",
                                 hint=_HINT)
        elif isinstance(value, Mapping):
            for k, v in value.items():
                name = f"{at}[{_escaped(k) if isinstance(k, str) else repr(k)}]"
                if isinstance(k, str) and not _is_text(k):
                    raise InputError(f"{where}: the key {name} holds a lone surrogate, which is not text", hint=_HINT)
                stack.append((name, v))
        elif isinstance(value, (list, tuple)):
            stack.extend((f"{at}[{i}]", v) for i, v in enumerate(value))


# A JSON escape of a UTF-16 surrogate (D800-DFFF): the only way JSON read from UTF-8 bytes can
# hold one. (It also matches an escaped backslash before "ud8…", text: then the strings are checked.)
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def surrogates_possible(raw: bytes) -> bool:
    """Whether the JSON ``raw`` (UTF-8 bytes) may hold a lone surrogate: only through a
    ``\\uD800``-``\\uDFFF`` escape. A capture.json of a training step is 5 MB, and writing it
    again to look for one (:func:`_refuse_surrogates`) cost 36 ms of every command."""
    return _SURROGATE_ESCAPE.search(raw) is not None


def _all_text(info: Mapping[Any, Any]) -> bool:
    """Whether every key and string in ``info`` is sure to be text (False: walk it to find out)."""
    try:
        json.dumps(info, ensure_ascii=False, check_circular=False).encode("utf-8")
    except (TypeError, ValueError, UnicodeEncodeError, RecursionError):
        return False
    return True


def _is_text(value: str) -> bool:
    if value.isascii():
        return True
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _escaped(value: str) -> str:
    """``value`` quoted with its surrogates (and anything unprintable) as escapes, cut short."""
    text = value if len(value) <= 60 else value[:57] + "…"
    return '"' + text.encode("unicode_escape", "backslashreplace").decode("ascii").replace('"', '\\"') + '"'


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, Mapping):
        return "an object"
    return type(value).__name__


def _bad(where: str, key: str, expected: str, got: object) -> InputError:
    return InputError(f"{where}: {key} must be {expected}, not {_kind(got)}", hint=_HINT)


def _text(value: object, key: str, where: str) -> str:
    if not isinstance(value, str):
        raise _bad(where, key, "a string", value)
    return value


def _flag(value: object, key: str, where: str) -> bool:
    if not isinstance(value, bool):
        raise _bad(where, key, "true or false", value)
    return value


def _seconds(value: object, key: str, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise _bad(where, key, "a number of seconds", value)
    return float(value)


def _texts(value: object, key: str, where: str) -> tuple[str, ...]:
    if not isinstance(value, (list, tuple)):
        raise _bad(where, key, "a list of strings", value)
    return tuple(_text(v, f"{key}[{i}]", where) for i, v in enumerate(value))


def _object(value: object, key: str, where: str) -> Mapping[Any, Any]:
    if not isinstance(value, Mapping):
        raise _bad(where, key, "an object", value)
    return value


# The maps below hold one entry per framework op (a training step's capture.json: 3 MB, 50k
# entries), read by every command: each entry is checked with plain type tests, and the words
# that say where a bad one is are made only for the entry that fails.


def _source_map(value: object, key: str, where: str) -> dict[str, SourceLocation]:
    out: dict[str, SourceLocation] = {}
    for op, loc in _object(value, key, where).items():
        if isinstance(loc, Mapping):
            line, file, function = loc.get("line"), loc.get("file"), loc.get("function") or ""
            if (type(line) is int and line >= 0 and isinstance(file, str)  # type(): a bool is no line
                    and isinstance(function, str)):
                out[op] = SourceLocation(file, line, function)
                continue
        out[op] = _source_location(op, loc, key, where)  # raises, saying what is wrong
    return out


def _source_location(op: object, loc: object, key: str, where: str) -> SourceLocation:
    """One entry of a source map, checked field by field (each failure named)."""
    at = f"{key}[{_quote(op)}]"
    entry = _object(loc, at, where)
    line = entry.get("line")
    if isinstance(line, bool) or not isinstance(line, int) or line < 0:
        raise _bad(where, f"{at}.line", "a line number", line)
    return SourceLocation(_text(entry.get("file"), f"{at}.file", where), line,
                          _text(entry.get("function") or "", f"{at}.function", where))


def _tf_ops(value: object, key: str, where: str) -> dict[str, str]:
    return {op: t if isinstance(t, str) else _text(t, f"{key}[{_quote(op)}]", where)
            for op, t in _object(value, key, where).items()}


def _tf_inputs(value: object, key: str, where: str) -> dict[str, tuple[str, ...]]:
    return {op: tuple(v) if isinstance(v, (list, tuple)) and all(isinstance(x, str) for x in v)
            else _texts(v, f"{key}[{_quote(op)}]", where)
            for op, v in _object(value, key, where).items()}


def _quote(name: object) -> str:
    text = str(name)
    return '"' + (text if len(text) <= 60 else text[:57] + "…") + '"'


_TEXT_KEYS = ("hloviz", "python", "machine", "time", "source", "label", "target", "function", "file", "module",
              "framework", "tensorflow", "jax", "jaxlib", "device", "platform", "wrapped", "arg_source", "stage",
              "stage_reason", "pre_file", "post_file", "dump_folder", "memory_file")
_CHECKS: dict[str, Any] = {
    **dict.fromkeys(_TEXT_KEYS, _text),
    "jit_compile": _flag,
    "capture_seconds": _seconds,
    "args": _texts,
    "source_map": _source_map,
    "tf_ops": _tf_ops,
    "tf_inputs": _tf_inputs,
    "tf_outputs": _tf_inputs,
}
_CONTAINERS = frozenset({"args", "source_map", "tf_ops", "tf_inputs", "tf_outputs"})
