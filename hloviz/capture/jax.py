"""Capture from JAX: ``jax.jit(fn).lower(*ShapeDtypeStructs)`` — shapes only, nothing allocated.

Pre-optimization HLO is ``lowered.as_text(dialect="hlo", debug_info=True)`` (debug info keeps
the ``metadata={op_name=... stack_frame_id=...}`` that links instructions to source lines);
post-optimization HLO is ``lowered.compile().as_text()``.

Since JAX 0.5 the HLO text carries the stack frames as tables before the first computation
(``FileNames``, ``FunctionNames``, ``FileLocations``, ``StackFrames``) and instructions refer to
them by ``stack_frame_id``. :func:`source_map_from_text` reads those tables so that a JAX
capture has the same ``source_map`` (op_name → innermost user frame) as a TensorFlow one.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from hloviz.capture.frames import Frame, innermost_user_frame
from hloviz.capture.live import resolve_specs
from hloviz.capture.specs import LiteralArg, PytreeArg, TensorSpec
from hloviz.capture.target import PythonTarget, missing_dependency, tracing_hint, user_code
from hloviz.errors import CaptureError, InputError
from hloviz.ir import quoted_string_pattern, unescape_string

JAX_DTYPES = {
    "pred": "bool", "s4": "int4", "s8": "int8", "s16": "int16", "s32": "int32", "s64": "int64",
    "u4": "uint4", "u8": "uint8", "u16": "uint16", "u32": "uint32", "u64": "uint64",
    "f16": "float16", "bf16": "bfloat16", "f32": "float32", "f64": "float64",
    "c64": "complex64", "c128": "complex128", "f8e5m2": "float8_e5m2", "f8e4m3fn": "float8_e4m3fn",
}


def import_jax() -> Any:
    try:
        import jax  # noqa: PLC0415  (lazy on purpose)
    except ModuleNotFoundError as exc:
        dep = missing_dependency(exc)
        raise (dep or exc) from None
    return jax


def _device(jax: Any, device: str | None) -> Any:
    devices = jax.devices()
    if not device:
        return devices[0]
    kind, _, index = device.strip().lstrip("/").split("/")[-1].replace("device:", "").partition(":")
    try:
        candidates = jax.devices(kind.lower())
    except RuntimeError:
        candidates = []
    # ASCII digits, few enough for int(): a 5,000-digit index is just a device that is not there
    idx = (int(index) if len(index) <= 9 else len(candidates)) if index.isascii() and index.isdecimal() else 0
    if idx >= len(candidates):
        listing = ", ".join(f"{d.platform.upper()}:{d.id}" for d in devices)
        raise InputError(f"device {device!r} not found", hint=f"devices JAX sees: {listing}")
    return candidates[idx]


def _to_jax_arg(jax: Any, spec: TensorSpec | LiteralArg | PytreeArg, sharding: Any) -> Any:
    if isinstance(spec, LiteralArg):
        return spec.value
    if isinstance(spec, PytreeArg):
        return spec.map(lambda leaf: _to_jax_arg(jax, leaf, sharding))
    import jax.numpy as jnp

    dtype = getattr(jnp, JAX_DTYPES.get(spec.element_type, ""), None)
    if dtype is None:
        raise InputError(f"JAX has no dtype for HLO element type {spec.element_type!r}")
    return jax.ShapeDtypeStruct(spec.dims, dtype, sharding=sharding)


def capture_jax(target: PythonTarget, arg_options: tuple[str, ...], *, device: str | None,
                notify: Callable[[str], None]) -> tuple[str, str, dict]:
    """Lower and compile ``target`` with JAX; returns (pre text, post text, info)."""
    jax = import_jax()
    name = target.function_name
    specs = resolve_specs(target, arg_options)
    dev = _device(jax, device)
    sharding = jax.sharding.SingleDeviceSharding(dev)
    args = [_to_jax_arg(jax, s, sharding) for s in specs.positional]
    kwargs = {k: _to_jax_arg(jax, s, sharding) for k, s in specs.keyword}

    fn = target.obj
    wrapped = None
    if hasattr(fn, "lower"):
        jitted = fn
    else:
        static_nums = tuple(i for i, s in enumerate(specs.positional) if isinstance(s, LiteralArg))
        static_names = tuple(k for k, s in specs.keyword if isinstance(s, LiteralArg))
        jitted = jax.jit(fn, static_argnums=static_nums, static_argnames=static_names)
        notify(f"{name} is a plain Python function; wrapped it in jax.jit")
        wrapped = "jax.jit"

    with user_code(f"tracing {name}", file=target.file, hint=tracing_hint(specs)):
        lowered = jitted.lower(*args, **kwargs)
    try:
        pre = lowered.as_text(dialect="hlo", debug_info=True)
    except TypeError:  # JAX before debug_info existed
        pre = lowered.as_text(dialect="hlo")
    try:
        compiled = lowered.compile()
        post = compiled.as_text()
    except (KeyboardInterrupt, SystemExit):
        raise
    except Exception as exc:
        raise CaptureError(f"XLA could not compile {name}:\n{str(exc).strip()}") from exc
    memory = buffer_assignment(compiled, jax.__version__)

    user_files = (target.file,) if target.file else ()
    names = _parameter_names(pre)
    smap = source_map_from_text(pre, user_files)
    for op, where in source_map_from_text(post, user_files).items():
        smap.setdefault(op, where)
    info = {
        "framework": "jax",
        "jax": jax.__version__,
        "jaxlib": _jaxlib_version(),
        "device": str(dev),
        "platform": dev.platform,
        "jit_compile": True,
        "wrapped": wrapped,
        "args": specs.describe(),
        "arg_source": specs.source,
        "parameter_names": names,
        "source_map": smap,
    }
    if memory is not None:
        info["xla_memory"] = memory
    return pre, post, info


#: The numbers of JAX's ``CompiledMemoryStats`` kept with the record (as JAX gives them).
_STATS = ("argument_size_in_bytes", "output_size_in_bytes", "alias_size_in_bytes", "temp_size_in_bytes",
          "generated_code_size_in_bytes", "peak_memory_in_bytes")


def buffer_assignment(compiled: Any, version: str) -> dict | None:
    """XLA's own buffer assignment of ``compiled``, as :mod:`hloviz.capture.memory` keeps it:
    ``memory_analysis().serialized_buffer_assignment_proto``, its instruction ids named through
    the executable's module proto. None when this JAX cannot give it."""
    from hloviz.analysis.memory.readers import from_buffer_assignment_proto, instruction_names

    try:
        stats = compiled.memory_analysis()
        data = getattr(stats, "serialized_buffer_assignment_proto", None)
        if not data:
            return None
        modules = compiled.runtime_executable().hlo_modules()
        names = instruction_names(bytes(modules[0].as_serialized_hlo_module_proto())) if modules else {}
        numbers = {k: int(getattr(stats, k)) for k in _STATS if isinstance(getattr(stats, k, None), int)}
        record = from_buffer_assignment_proto(bytes(data), names, f"XLA's buffer assignment (JAX {version}, "
                                              "memory_analysis)", numbers)
    except (KeyboardInterrupt, SystemExit):
        raise
    except Exception:  # noqa: BLE001 - an older JAX without these: the memory report estimates instead
        return None
    return record.to_dict()


def _parameter_names(pre_text: str) -> dict[str, str]:
    """Entry parameter number (as text) → the argument's pytree path, which JAX writes as the
    parameter's op name (``params['Dense_0']['kernel']``, ``x``)."""
    from hloviz import parse

    try:
        entry = parse(pre_text).entry
    except Exception:  # noqa: BLE001 - the names are a nicety; the capture stands without them
        return {}
    if entry is None:
        return {}
    return {str(p.parameter_number): p.metadata.op_name for p in entry.parameters if p.metadata.op_name}


def _jaxlib_version() -> str | None:
    try:
        import jaxlib

        return getattr(jaxlib, "__version__", None) or getattr(getattr(jaxlib, "version", None), "__version__", None)
    except ImportError:
        return None


_TABLE_ROW = re.compile(r"^(\d+)\s+(.*)$")
_KV = re.compile(r"(?<!\w)(\w++)=(\d+)")
# op_name's string without backtracking (see quoted_string_pattern): hostile dumps hold huge names.
_META_FRAME = re.compile(r'metadata=\{[^{}]*?op_name=(' + quoted_string_pattern(newlines=True)
                         + r')[^{}]*?stack_frame_id=(\d+)')


def _tables(text: str) -> dict[str, dict[int, str]]:
    """The stack-frame tables at the top of a module's text (before the first computation)."""
    tables: dict[str, dict[int, str]] = {}
    current: dict[int, str] | None = None
    for line in text.splitlines()[1:]:
        if line.startswith(("FileNames", "FunctionNames", "FileLocations", "StackFrames")):
            current = tables.setdefault(line.strip(), {})
            continue
        if not line.strip():
            continue
        m = _TABLE_ROW.match(line)
        if current is None or not m:
            if line.rstrip().endswith("{") or line.startswith(("ENTRY", "%")):
                break
            continue
        current[int(m.group(1))] = m.group(2).strip()
    return tables


def _unquote(s: str) -> str:
    return s[1:-1].replace('\\"', '"').replace("\\\\", "\\") if s.startswith('"') else s


def source_map_from_text(text: str, user_files: tuple[str, ...] = ()) -> dict[str, dict]:
    """op_name → {file, line, function} of the innermost user frame, from JAX's frame tables."""
    t = _tables(text)
    files = {k: _unquote(v) for k, v in t.get("FileNames", {}).items()}
    funcs = {k: _unquote(v) for k, v in t.get("FunctionNames", {}).items()}
    locs = {k: {a: int(b) for a, b in _KV.findall(v)} for k, v in t.get("FileLocations", {}).items()}
    frames = {k: {a: int(b) for a, b in _KV.findall(v)} for k, v in t.get("StackFrames", {}).items()}
    if not frames:
        return {}

    def chain(frame_id: int) -> list[Frame]:
        out: list[Frame] = []
        seen: set[int] = set()
        while frame_id in frames and frame_id not in seen:
            seen.add(frame_id)
            loc = locs.get(frames[frame_id].get("file_location_id", -1), {})
            out.append(Frame(files.get(loc.get("file_name_id", -1), ""), loc.get("line", 0),
                             funcs.get(loc.get("function_name_id", -1), "")))
            # XLA prints the parent as (parent row + 1); 1 means "no parent". Verified on
            # JAX 0.10: a helper's frame points at its caller's row this way.
            frame_id = frames[frame_id].get("parent_frame_id", 0) - 1
        return list(reversed(out))  # outermost first

    smap: dict[str, dict] = {}
    for quoted, frame_id in _META_FRAME.findall(text):
        op_name = unescape_string(quoted[1:-1])
        if op_name in smap:
            continue
        fr = innermost_user_frame(chain(int(frame_id)), always=user_files)
        if fr is not None:
            smap[op_name] = {"file": fr.file, "line": fr.line, "function": fr.function}
    return smap
