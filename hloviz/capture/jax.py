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

import contextlib
import dataclasses
import functools
import os
import re
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from hloviz.capture.dumps.compile_dump import fresh_folder
from hloviz.capture.frames import Frame, innermost_user_frame
from hloviz.capture.live import resolve_specs
from hloviz.capture.specs import LiteralArg, PytreeArg, TensorSpec
from hloviz.capture.target import PythonTarget, missing_dependency, tracing_hint, user_code
from hloviz.errors import CaptureError, HlovizError, InputError
from hloviz.ir import quoted_string_pattern, stack_frames, unescape_string

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


def _equinox_jit(fn: Any) -> bool:
    """Whether ``fn`` is Equinox's ``filter_jit``, which traces arrays only: its ``lower`` gives no
    JAX ``Lowered`` and takes shape structs for values ("A ShapeDtypeStruct does not have a
    value"), so the function it wraps is lowered here. (Not Flax's ``nnx.jit``: it lowers as JAX
    does, and hands the state an NNX step changes in place — the optimizer's update — back out,
    which a function lowered here would drop as dead code.)"""
    return type(fn).__module__.split(".")[0] == "equinox" and callable(getattr(fn, "__wrapped__", None))


def _filtered_jit(jax: Any, fn: Callable, args: list, kwargs: dict,
                  donated: tuple[int, ...] = ()) -> tuple[Any, list, dict]:
    """``jax.jit`` of ``fn`` tracing the arrays and shape structs among the leaves of ``args`` and
    ``kwargs`` (a model object's weights, as their shapes: nothing copied) and holding every other
    leaf static (a layer's sizes, its activation function), its result's non-array leaves
    dropped; with the arguments to lower it on. The traced leaves keep their places in the
    user's objects, so JAX names each parameter by its path (``model.conv1.weight``). ``donated``:
    the positional arguments whose buffers the function may reuse (``jit``'s ``donate_argnums``)."""
    import numpy as np

    flat, tree = jax.tree_util.tree_flatten((args, kwargs))
    traced = [isinstance(leaf, (jax.ShapeDtypeStruct, jax.Array, np.ndarray)) for leaf in flat]
    shapes = [(leaf if isinstance(leaf, jax.ShapeDtypeStruct) else jax.ShapeDtypeStruct(leaf.shape, leaf.dtype))
              if t else None for leaf, t in zip(flat, traced, strict=True)]
    # two trees of one shape, each None where the other holds the leaf (an optimizer's state holds Nones
    # of its own, in both): the traced part, handed to jit, and the static part, kept here
    dynamic_args, dynamic_kwargs = jax.tree_util.tree_unflatten(tree, shapes)
    static = jax.tree_util.tree_unflatten(tree, [None if t else leaf for leaf, t in zip(flat, traced, strict=True)])

    def none(x: Any) -> bool:
        return x is None

    @functools.wraps(fn)  # the user's signature and name: ``jit_<name>``, parameters by argument
    def staged(*a: Any, **k: Any) -> list:
        a2, k2 = jax.tree_util.tree_map(lambda d, s: s if d is None else d, (list(a), k), static, is_leaf=none)
        return [leaf for leaf in jax.tree_util.tree_leaves(fn(*a2, **k2)) if isinstance(leaf, jax.Array)]

    return jax.jit(staged, donate_argnums=donated), list(dynamic_args), dict(dynamic_kwargs)


def capture_jax(target: PythonTarget, arg_options: tuple[str, ...], *, device: str | None,
                notify: Callable[[str], None]) -> tuple[str, str, dict]:
    """Lower and compile ``target`` with JAX; returns (pre text, post text, info)."""
    jax = import_jax()
    name = target.function_name
    specs = resolve_specs(target, arg_options)
    dev = _device(jax, device)
    # --device places every argument on that device; without it the function's own shardings
    # decide (``jit(in_shardings=…)``, ``shard_map``, ``pmap``: a program for several devices),
    # and a plain function runs on the first device, as JAX runs it
    sharding = jax.sharding.SingleDeviceSharding(dev) if device else None
    args = [_to_jax_arg(jax, s, sharding) for s in specs.positional]
    kwargs = {k: _to_jax_arg(jax, s, sharding) for k, s in specs.keyword}

    fn = target.obj
    wrapped = None
    if hasattr(fn, "lower") and _equinox_jit(fn):
        # its donate= ("all": every argument's arrays; "all-except-first"), as filter_jit donates them
        first, rest = bool(getattr(fn, "donate_first", False)), bool(getattr(fn, "donate_rest", False))
        donated = tuple(i for i in range(len(args)) if (first if i == 0 else rest))
        jitted, args, kwargs = _filtered_jit(jax, fn.__wrapped__, args, kwargs, donated)
        notify(f"{name} is Equinox's filter_jit; lowered its function with jax.jit, arrays traced and "
               "everything else static, as filter_jit does")
        wrapped = "jax.jit (arrays traced)"
    elif hasattr(fn, "lower"):
        jitted = fn
    else:
        static_nums = tuple(i for i, s in enumerate(specs.positional) if isinstance(s, LiteralArg))
        static_names = tuple(k for k, s in specs.keyword if isinstance(s, LiteralArg))
        jitted = jax.jit(fn, static_argnums=static_nums, static_argnames=static_names)
        notify(f"{name} is a plain Python function; wrapped it in jax.jit")
        wrapped = "jax.jit"

    hint = tracing_hint(specs) + ("; --device puts every argument on that one device: leave it out where the "
                                  "function places its own (jit's in_shardings, shard_map, pmap)" if device else "")
    with user_code(f"tracing {name}", file=target.file, hint=hint):
        lowered = jitted.lower(*args, **kwargs)
    try:
        pre = lowered.as_text(dialect="hlo", debug_info=True)
    except TypeError:  # JAX before debug_info existed
        pre = lowered.as_text(dialect="hlo")
    with _assignment_dump(dev.platform) as dump:
        try:
            compiled = _compile(lowered, dump)
            post = compiled.as_text()
        except (KeyboardInterrupt, SystemExit):
            raise
        except Exception as exc:
            raise CaptureError(f"XLA could not compile {name}:\n{str(exc).strip()}") from exc
        memory = buffer_assignment(compiled, jax.__version__)
        if memory is None and dump is not None:
            memory = dumped_assignment(dump[0], post, _stats(compiled), jax.__version__)

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


@contextlib.contextmanager
def _assignment_dump(platform: str) -> Iterator[tuple[Path, bool] | None]:
    """Where XLA dumps this compile, and whether hloviz asked for it (``True``: a temporary
    folder of its own, passed as a compile option) — None on CPU.

    JAX's ``memory_analysis`` carries the buffer assignment as a proto on CPU, but on GPU
    (JAX 0.11, CUDA) that proto is empty, while XLA's dump of the same compile holds the
    assignment as text. On CPU a dump would also write every kernel's LLVM IR: no folder. When
    the user's ``XLA_FLAGS`` already dump somewhere, that folder is read, and nothing redirected."""
    if platform == "cpu":
        yield None
        return
    users = re.search(r"--xla_dump_to=(\S+)", os.environ.get("XLA_FLAGS", ""))
    if users:
        yield Path(users.group(1)), False
        return
    folder = fresh_folder()
    try:
        yield folder, True
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _compile(lowered: Any, dump: tuple[Path, bool] | None) -> Any:
    """``lowered.compile()``, asking XLA to dump this compile (and no other) into hloviz's own
    folder: a compile option, so later compiles are left alone. A JAX whose ``compile`` takes
    no options compiles without the dump (the memory report then estimates)."""
    if dump is None or not dump[1]:
        return lowered.compile()
    try:
        return lowered.compile(compiler_options={"xla_dump_to": str(dump[0])})
    except TypeError:
        return lowered.compile()


def _stats(compiled: Any) -> dict[str, int]:
    try:
        stats = compiled.memory_analysis()
    except Exception:  # noqa: BLE001 - a JAX or backend without it: the record stands without them
        return {}
    return {k: int(getattr(stats, k)) for k in _STATS if isinstance(getattr(stats, k, None), int)}


def dumped_assignment(folder: Path, post: str, stats: dict[str, int], version: str) -> dict | None:
    """The record of the buffer assignment XLA dumped into ``folder`` for the module whose
    optimized text is ``post`` (XLA names the files, so the text picks the module); None when
    the compile dumped none or the files cannot be read."""
    from hloviz.analysis.memory.readers import from_dump_texts
    from hloviz.analysis.memory.records import RecordError
    from hloviz.capture.dumps.xla_dump import list_modules, memory_files

    # The dumped text is not byte-equal to ``compiled.as_text()``: the header line is compared,
    # which names the module and its layouts; in a user's folder that several compiles wrote,
    # the latest module with that header is this compile's.
    header = post.split("\n", 1)[0].strip()
    if not folder.is_dir():
        return None
    dumped = [(m.after, files) for m in list_modules(folder) if m.after is not None and m.after.suffix == ".txt"
              and (files := memory_files(folder, m)) is not None]
    for after, files in reversed(dumped):
        if _first_line(after) != header:
            continue
        try:
            record = from_dump_texts(_text(files["assignment"]), where=Path(files["assignment"]).name,
                                     values_text=_text(files.get("values")), live_text=_text(files.get("live")),
                                     origin=f"XLA's buffer assignment (JAX {version}, dumped by the compile)",
                                     live_where=Path(files.get("live") or "").name)
        except (RecordError, OSError):
            return None
        return dataclasses.replace(record, stats=stats, wrapped=_async_names(after, post)).to_dict()
    return None


def _async_names(dumped: Path, post: str) -> dict[str, tuple[str, str]]:
    """Which pair of ``post`` runs each op XLA's record names inside an async computation
    (:mod:`hloviz.capture.dumps.async_names`); empty when the dump runs nothing asynchronously or a
    text cannot be read (the report then says it cannot place those names)."""
    text = _text(str(dumped))
    if " async-start(" not in text:
        return {}
    from hloviz import parse
    from hloviz.capture.dumps.async_names import async_wrapped

    try:
        return async_wrapped(parse(text), parse(post))
    except HlovizError:  # a text hloviz cannot read: the record stands without the names
        return {}


def _first_line(path: Path) -> str:
    with path.open(encoding="utf-8", errors="replace") as f:
        return f.readline().strip()


def _text(path: str | None) -> str:
    return Path(path).read_text(encoding="utf-8", errors="replace") if path else ""


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
        numbers = _stats(compiled)
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


def source_map_from_text(text: str, user_files: tuple[str, ...] = ()) -> dict[str, dict]:
    """op_name → {file, line, function} of the innermost user frame, from JAX's frame tables:
    the first instruction's of each name (the kernel table reads each instruction's own frame,
    :func:`hloviz.analysis.frames.frame_lines`; this map serves an op name alone)."""
    frames = stack_frames(_tables(text))
    if not frames:
        return {}
    smap: dict[str, dict] = {}
    for quoted, frame_id in _META_FRAME.findall(text):
        op_name = unescape_string(quoted[1:-1])
        if op_name in smap:
            continue
        chain = [Frame(*f) for f in frames.get(int(frame_id), ())]
        fr = innermost_user_frame(chain, always=user_files)
        if fr is not None:
            smap[op_name] = {"file": fr.file, "line": fr.line, "function": fr.function}
    return smap
