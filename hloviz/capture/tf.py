"""Capture from TensorFlow: trace against TensorSpecs, ask XLA for both stages, map ops to lines.

Nothing is allocated for the arguments: ``tf.TensorSpec`` objects go to
``get_concrete_function`` / ``experimental_get_compiler_ir``, which trace and compile against
shapes only. ``stage='hlo'`` gives the HLO before XLA's optimizations, ``'optimized_hlo'``
after.

The source map comes from the traced graph: every ``tf.Operation`` keeps the Python stack at
its creation (``op.traceback``, outermost frame first); its innermost frame in the user's files
is where the user wrote that op. HLO metadata carries the op's name (``op_name="add_41"``), so
the map links every HLO instruction to a line. Ops of nested graphs are walked too: while/cond
bodies (their op names already carry the ``while/`` prefix) and nested tf.functions (called via
``PartitionedCall``; XLA prefixes their ops with the call op's name).

This module traces and compiles; reading the traced graph (op → line, Keras layers, tensor types,
parameter names) is :mod:`hloviz.capture.tf_graph`'s.
"""

from __future__ import annotations

import inspect
import os
import re
import traceback
from collections.abc import Callable
from typing import Any

from hloviz.capture.dumps.compile_dump import CompileDump
from hloviz.capture.frames import is_user_file
from hloviz.capture.live import python_function, resolve_specs
from hloviz.capture.specs import ArgSpecs, LiteralArg, PytreeArg, TensorSpec
from hloviz.capture.target import PythonTarget, missing_dependency, tracing_hint, user_code
from hloviz.capture.tf_graph import layer_scopes, output_types, parameter_names, source_map
from hloviz.errors import CaptureError, InputError

# HLO element type -> tf.dtypes attribute name.
TF_DTYPES = {
    "pred": "bool", "s4": "int4", "s8": "int8", "s16": "int16", "s32": "int32", "s64": "int64",
    "u4": "uint4", "u8": "uint8", "u16": "uint16", "u32": "uint32", "u64": "uint64",
    "f16": "float16", "bf16": "bfloat16", "f32": "float32", "f64": "float64",
    "c64": "complex64", "c128": "complex128",
    "f8e5m2": "float8_e5m2", "f8e4m3fn": "float8_e4m3fn",
}
_HLO_OF_TF = {v: k for k, v in TF_DTYPES.items()}


def import_tf() -> Any:
    try:
        import tensorflow as tf  # noqa: PLC0415  (lazy on purpose: `import hloviz` stays light)
    except ModuleNotFoundError as exc:
        dep = missing_dependency(exc)
        raise (dep or exc) from None
    return tf


def to_tf_arg(tf: Any, spec: TensorSpec | LiteralArg | PytreeArg, name: str | None = None) -> Any:
    if isinstance(spec, LiteralArg):
        return spec.value
    if isinstance(spec, PytreeArg):
        return spec.map(lambda leaf: to_tf_arg(tf, leaf))
    dtype_name = TF_DTYPES.get(spec.element_type)
    dtype = getattr(tf, dtype_name, None) if dtype_name else None
    if dtype is None:
        raise InputError(f"TensorFlow has no dtype for HLO element type {spec.element_type!r}")
    return tf.TensorSpec(spec.dims, dtype, name=name)


def _signature_specs(tf: Any, fn: Any) -> ArgSpecs | None:
    sig = getattr(fn, "input_signature", None)
    if not sig:
        return None
    out = []
    for s in tf.nest.flatten(sig):
        if not isinstance(s, tf.TensorSpec):
            return None
        if not s.shape.is_fully_defined():
            raise InputError(f"the input_signature of {getattr(fn, '__name__', 'the function')} has a "
                             f"dimension of unknown size ({s}); XLA needs static shapes",
                             hint="give the shapes with --arg, e.g. --arg f32[8,128]")
        tf_dtype: str = s.dtype.name
        out.append(TensorSpec(_HLO_OF_TF.get(tf_dtype, tf_dtype), tuple(int(d) for d in s.shape)))
    return ArgSpecs(tuple(out), (), source="input_signature")


def jit_version(tf: Any, target: PythonTarget, notify: Callable[[str], None]) -> tuple[Any, bool | None]:
    """The function as a ``tf.function(jit_compile=True)``, and the jit_compile it had."""
    fn = target.obj
    name = target.function_name
    if hasattr(fn, "experimental_get_compiler_ir"):
        jit = getattr(fn, "_jit_compile", None)
        if jit:
            return fn, True
        notify(f"{name} is a tf.function without jit_compile=True; hloviz compiles it as "
               f"tf.function(jit_compile=True) (without XLA, TensorFlow runs each op as its own kernel)")
        return tf.function(fn.python_function, jit_compile=True, input_signature=fn.input_signature), jit
    notify(f"{name} is a plain Python function; wrapped it in tf.function(jit_compile=True)")
    return tf.function(fn, jit_compile=True), None


_UNSUPPORTED = re.compile(r"No registered '(\w+)' OpKernel for XLA_")


def unsupported_ops_hint(message: str) -> str | None:
    """One line for XLA's "Detected unsupported operations": which ops, and what to do."""
    ops = sorted(set(_UNSUPPORTED.findall(message)))
    if not ops:
        return None
    python = [o for o in ops if "PyFunc" in o]
    strings = [o for o in ops if o.startswith(("String", "AsString", "Regex", "Substr", "Unicode", "DecodeRaw"))]
    why = ("tf.py_function / tf.numpy_function run Python, which XLA cannot compile" if python else
           "XLA has no string type, so tf.strings ops cannot be compiled" if strings else
           "XLA has no kernel for them")
    return (f"{', '.join(ops)}: {why}; move them out of the jit_compile=True function (do them before calling it, "
            "or in a tf.function without jit_compile) and point hloviz at the numeric part")


#: TensorFlow dtype names → HLO element types.

def _device_context(tf: Any, device: str | None) -> tuple[Any, str | None]:
    """A ``tf.device`` context for ``device`` after checking it exists (None: TF's choice)."""
    import contextlib

    if not device:
        return contextlib.nullcontext(), None
    available = [d.name for d in tf.config.list_logical_devices()]
    want = _short_device(device)
    for full in available:
        if _short_device(full) == want:
            return tf.device(full), full
    raise InputError(f"device {device!r} not found", hint=f"devices TensorFlow sees: {', '.join(available)}")


def _short_device(name: str) -> str:
    """``/job:localhost/replica:0/task:0/device:GPU:0`` and ``gpu:0`` both → ``GPU:0``."""
    tail = name.strip().split("/")[-1]
    if tail.lower().startswith("device:"):
        tail = tail[len("device:"):]
    kind, _, index = tail.partition(":")
    return f"{kind.upper()}:{index or '0'}"


def _current_device(tf: Any) -> str:
    try:
        from tensorflow.python.eager.polymorphic_function.compiler_ir import maybe_get_device_name

        return str(maybe_get_device_name(None))
    except Exception:  # noqa: BLE001 - private API; fall back to where a tiny op lands
        return str(tf.zeros([]).device)


def _xla_platform(tf: Any, device: str) -> str:
    kind = device.upper().rsplit("DEVICE:", 1)[-1].split(":")[0]
    if kind == "GPU":
        return "ROCM" if tf.test.is_built_with_rocm() else "CUDA"
    return {"CPU": "Host"}.get(kind, kind)


_STACK_LINE = re.compile(r'^\s*File "([^"]*)", line (\d+)')


def _only_user_frames(message: str, user_files: tuple[str, ...],
                      caller: frozenset[tuple[str, int]] = frozenset()) -> str:
    """XLA's message as is, minus the "Stack trace for op definition" lines that point into
    hloviz, TensorFlow, the standard library or whoever called hloviz (they run from the
    command line to the op; only the user's own frames help)."""
    out = []
    for line in message.splitlines():
        m = _STACK_LINE.match(line)
        if m:
            path, lineno = m.group(1), int(m.group(2))
            candidates = (path, "/" + path) if not path.startswith("/") else (path,)  # TF may drop the /
            if not any(is_user_file(p, always=user_files) and os.path.exists(p) and (p, lineno) not in caller
                       for p in candidates):
                continue
        out.append(line)
    return "\n".join(out)


def capture_tf(target: PythonTarget, arg_options: tuple[str, ...], *, device: str | None,
               notify: Callable[[str], None]) -> tuple[str, str, dict]:
    """Trace and compile ``target`` with TensorFlow; returns (pre text, post text, info)."""
    tf = import_tf()
    name = target.function_name
    user_files = (target.file,) if target.file else ()
    specs = resolve_specs(target, arg_options, _signature_specs(tf, target.obj))
    jit_fn, jit_before = jit_version(tf, target, notify)

    params = list(inspect.signature(python_function(target.obj)).parameters)
    if specs.source == "input_signature":
        args = list(target.obj.input_signature)  # exactly the specs the function declared
    else:
        args = [to_tf_arg(tf, s, params[i] if i < len(params) else None) for i, s in enumerate(specs.positional)]
    kwargs = {k: to_tf_arg(tf, s, k) for k, s in specs.keyword}
    # experimental_get_compiler_ir takes TensorSpecs or values, not a mix, nor a dict of specs (a
    # layer's weights): those compile the traced concrete function with its flat specs instead
    from_concrete = any(isinstance(s, (LiteralArg, PytreeArg)) for s in specs.positional) or any(
        isinstance(s, (LiteralArg, PytreeArg)) for _, s in specs.keyword)

    ctx, device_name = _device_context(tf, device)
    with ctx:
        caller = frozenset((f.filename, f.lineno or 0) for f in traceback.extract_stack())
        with user_code(f"tracing {name}", file=target.file, hint=tracing_hint(specs)):
            concrete = jit_fn.get_concrete_function(*args, **kwargs)
        if from_concrete:
            from tensorflow.python.eager.polymorphic_function import compiler_ir

            flat = [s for s in tf.nest.flatten(concrete.structured_input_signature) if isinstance(s, tf.TensorSpec)]
            generate = compiler_ir.from_concrete_function(concrete, flat)
        else:
            generate = jit_fn.experimental_get_compiler_ir(*args, **kwargs)
        texts = {}
        dump = CompileDump() if DUMP_THE_COMPILE else None
        try:
            memory = _compile(generate, texts, name, user_files, caller, dump, tf.__version__)
        finally:
            if dump is not None:
                dump.close()
        device_name = device_name or _current_device(tf)

    smap, op_types, op_inputs = source_map(concrete, user_files, caller)
    op_outputs = output_types(concrete)
    reads: list[tuple[str, str]] = []
    names = parameter_names(tf, concrete, target.obj, params, texts["hlo"], reads)
    scopes = layer_scopes(reads)
    info = {
        "framework": "tensorflow",
        "tensorflow": tf.__version__,
        "device": device_name,
        "platform": _xla_platform(tf, device_name),
        "jit_compile": bool(jit_before),
        "wrapped": None if jit_before else "tf.function(jit_compile=True)",
        "args": specs.describe(),
        "arg_source": specs.source,
        "parameter_names": names,
        **({"layer_scopes": scopes} if scopes else {}),  # none without Keras layers: no empty key
        "source_map": smap,
        "tf_ops": op_types,
        "tf_inputs": op_inputs,
        "tf_outputs": op_outputs,
    }
    if memory is not None:
        info["xla_memory"] = memory
    return texts["hlo"], texts["optimized_hlo"], info


#: Set by the capture child (:mod:`hloviz.capture.child`), a process that ends after the capture:
#: the compile dumps its buffer assignment (:class:`~hloviz.capture.dumps.compile_dump.CompileDump`)
#: instead of TensorFlow compiling the module a second time for the ``HloProto``.
DUMP_THE_COMPILE = False


def _compile(generate: Any, texts: dict[str, str], name: str, user_files: tuple[str, ...],
             caller: frozenset[tuple[str, int]], dump: CompileDump | None, version: str) -> dict | None:
    """Both stages into ``texts``; returns XLA's buffer assignment of the optimized module (from
    ``dump``, the compile's own, when it wrote one — its text, read by the process that started
    the capture child, :func:`~hloviz.capture.dumps.compile_dump.read_sent`; else from one more
    compile, for the proto)."""
    for stage in ("hlo", "optimized_hlo"):
        try:
            texts[stage] = generate(stage=stage)
        except (KeyboardInterrupt, SystemExit):
            raise
        except Exception as exc:
            message = _only_user_frames(str(exc).strip(), user_files, caller)
            raise CaptureError(f"XLA could not compile {name} ({'pre' if stage == 'hlo' else 'post'}-"
                               f"optimization stage):\n{message}", hint=unsupported_ops_hint(message)) from exc
    memory = dump.buffer_assignment(texts["optimized_hlo"], version) if dump is not None else None
    return memory if memory is not None else buffer_assignment(generate, version)


def buffer_assignment(generate: Any, version: str) -> dict | None:
    """XLA's own buffer assignment of the compile, as :mod:`hloviz.capture.memory` keeps it: the
    ``HloProto`` of ``stage="optimized_hlo_proto_serialized"`` carries it (no dump, nothing run).
    None when this TensorFlow cannot give it; the memory report then estimates."""
    from hloviz.analysis.memory.readers import from_hlo_proto
    from hloviz.analysis.memory.records import RecordError

    try:
        proto = generate(stage="optimized_hlo_proto_serialized")
        record = from_hlo_proto(bytes(proto), f"XLA's buffer assignment (TensorFlow {version}, "
                                              "experimental_get_compiler_ir)")
    except (KeyboardInterrupt, SystemExit):
        raise
    except (RecordError, Exception):  # noqa: BLE001 - an older TF without the stage: estimate instead
        return None
    return record.to_dict() if record is not None else None
