"""What the traced TensorFlow graph says about the HLO: each op's line, layer and tensor types.

In: a traced ``ConcreteFunction`` (its graph, nested while/cond bodies and called functions
included) and the user's files. Out: plain dicts keyed by op name — where the user wrote each op
(:func:`source_map`), the Keras layer path of each variable read (:func:`layer_scopes`), the
types of each op's outputs (:func:`output_types`) — and the names of the entry's parameters
(:func:`parameter_names`). Its own module because it only reads a graph that has been traced;
:mod:`.tf` does the tracing and the compiling.
"""

from __future__ import annotations

import re
from typing import Any

from hloviz.capture.frames import Frame, is_user_file
from hloviz.capture.live import python_function

_SUBGRAPH_ATTRS = ("_body_graph", "_cond_graph", "_true_graph", "_false_graph")


def _walk(graph: Any, prefix: str, seen: set[int]) -> Any:
    """Every op of ``graph`` and its nested graphs, with the name XLA's metadata will use."""
    if id(graph) in seen:
        return
    seen.add(id(graph))
    functions = getattr(graph, "_functions", {}) or {}
    for op in graph.get_operations():
        yield prefix + op.name, op
        for attr in _SUBGRAPH_ATTRS:
            sub = getattr(op, attr, None)
            if sub is not None:
                yield from _walk(sub, prefix, seen)
        if op.type in ("PartitionedCall", "StatefulPartitionedCall"):
            try:
                fname = op.get_attr("f").name
            except (ValueError, AttributeError):
                continue
            fn = functions.get(fname)
            sub = getattr(fn, "graph", None)
            if sub is not None:
                yield from _walk(sub, prefix + op.name + "/", seen)


_ELEMENT_TYPES = {"float32": "f32", "float16": "f16", "bfloat16": "bf16", "float64": "f64", "int8": "s8",
                  "int16": "s16", "int32": "s32", "int64": "s64", "uint8": "u8", "uint16": "u16", "uint32": "u32",
                  "uint64": "u64", "bool": "pred", "complex64": "c64", "complex128": "c128"}


def output_types(concrete_fn: Any) -> dict[str, list[str]]:
    """TF op name → its outputs' types as HLO writes them (``f32[128,128]``; "" where the dtype
    has no HLO name or the shape is not static), for ops with outputs. The folding analysis
    checks a folded value's constant against them."""
    out: dict[str, list[str]] = {}
    for name, op in _walk(concrete_fn.graph, "", set()):
        types = []
        for t in op.outputs:
            element = _ELEMENT_TYPES.get(getattr(t.dtype, "name", ""), "")
            try:
                dims = t.shape.as_list()
            except ValueError:  # unknown rank
                dims = None
            static = element and dims is not None and all(d is not None for d in dims)
            types.append(f"{element}[{','.join(str(d) for d in dims or ())}]" if static else "")
        if any(types):
            out[name] = types
    return out


def source_map(concrete_fn: Any, user_files: tuple[str, ...],
               caller: frozenset[tuple[str, int]] = frozenset()
               ) -> tuple[dict[str, dict], dict[str, str], dict[str, list[str]]]:
    """op name → {file, line, function} of its innermost user frame; op name → op type; and
    op name → the names of the ops feeding it (the graph's edges, which the folding analysis
    needs to tell what TensorFlow folded before XLA saw the graph).

    ``caller`` holds the (file, line) frames that called hloviz: every op's traceback starts
    with them, and a script or test calling :func:`load_target` must not count as the place
    where the op was written.
    """
    smap: dict[str, dict] = {}
    types: dict[str, str] = {}
    inputs: dict[str, list[str]] = {}
    for name, op in _walk(concrete_fn.graph, "", set()):
        types[name] = op.type
        prefix = name[: len(name) - len(op.name)]
        feeding = [prefix + t.op.name for t in op.inputs]
        if feeding:
            inputs[name] = feeding
        fr = _user_frame(_candidate_frames(op), caller, user_files)
        if fr is not None:
            smap[name] = {"file": fr.file, "line": fr.line, "function": fr.function}
    return smap, types, inputs


def _roots(fn: Any) -> list[tuple[str, Any]]:
    """What the function can reach by name: its module's globals, its closure's variables and
    the object of a method (named ``self``)."""
    py = python_function(fn)
    py = getattr(py, "__wrapped__", py)
    roots: list[tuple[str, Any]] = list((getattr(py, "__globals__", None) or {}).items())
    code = getattr(py, "__code__", None)
    free = code.co_freevars if code is not None else ()
    cells = getattr(py, "__closure__", None) or ()
    roots += [(name, c.cell_contents) for name, c in zip(free, cells, strict=False) if _cell_set(c)]
    owner = getattr(py, "__self__", None) or getattr(fn, "__self__", None)  # a model's own method
    if owner is not None:
        roots.append(("self", owner))
    return roots


def _keras_paths(tf: Any, fn: Any) -> dict[int, str]:
    """id(tf.Variable handle) → Keras 3 variable path (``model/dense/kernel``), for the Keras
    layers, models and optimizers the function can reach (:func:`_roots`): a ``tf.Variable``'s
    own name (``model/kernel:0``) leaves the layer out."""
    out: dict[int, str] = {}
    for _name, obj in _roots(fn):
        variables = getattr(obj, "variables", None) if _is_keras(obj) else None
        if not isinstance(variables, (list, tuple)):
            continue
        for v in variables:
            path = getattr(v, "path", None)
            inner = getattr(v, "value", None)
            handle = getattr(inner, "handle", None)
            if isinstance(path, str) and handle is not None:
                out.setdefault(id(handle), path)
    return out


def _tensor_names(tf: Any, fn: Any) -> dict[int, str]:
    """id(tensor) → where the function's code keeps a tensor it captures, not a variable: the
    global or closure variable holding it (``_we``, a ``tf.constant`` at module level), else
    the Keras layer attribute (``normalize/mean``: an adapted ``Normalization`` normalizes by
    tensors, its variables only store them). Without these an entry parameter was named by
    XLA alone (``arg1.1``)."""
    out: dict[int, str] = {}
    keras: list[Any] = []
    for name, obj in _roots(fn):
        if isinstance(obj, tf.Tensor):
            out.setdefault(id(obj), name)
        elif _is_keras(obj) and callable(getattr(obj, "_flatten_layers", None)):
            keras.append(obj)
    for obj in keras:
        try:
            layers = list(obj._flatten_layers(include_self=True, recursive=True))
        except Exception:  # noqa: BLE001 - the names are a nicety; the capture stands without them
            continue
        for layer in layers:
            path = getattr(layer, "path", None) or getattr(layer, "name", None)
            if not isinstance(path, str):
                continue
            for attr, value in vars(layer).items():
                if not attr.startswith("_") and isinstance(value, tf.Tensor):
                    out.setdefault(id(value), f"{path}/{attr}")
    return out


def _cell_set(cell: Any) -> bool:
    try:
        cell.cell_contents  # noqa: B018 - an empty cell raises
    except ValueError:
        return False
    return True


def _is_keras(obj: Any) -> bool:
    return any(c.__module__.split(".")[0] == "keras" for c in type(obj).__mro__)


def layer_scopes(reads: list[tuple[str, str]]) -> dict[str, str]:
    """Op-name scope → the Keras layer path it is (``sequential_1/dense_1_2`` →
    ``sequential/dense_1``), from where each variable is read (``(graph input name, Keras
    variable path)``): Keras reads a layer's weights inside the layer's scope, whose op-name
    segments are the layer path's segments, each perhaps with TF's ``_N``. A scope claimed by
    two layers is left out."""
    out: dict[str, str] = {}
    clash: set[str] = set()
    for read, path in reads:
        ops = read.split(":", 1)[0].split("/")
        layers = path.split("/")[:-1]  # the variable's own name is not a layer
        if not layers:
            continue
        # a functional model's variable paths leave the model out (``Conv1/kernel`` is read in
        # ``mobilenetv2_1.00_224_1/Conv1_1/…``): the layers may start below the first segment
        for start in range(len(ops) - len(layers)):
            window = ops[start:start + len(layers)]
            if all(o == lay or re.fullmatch(re.escape(lay) + r"_\d+", o) for o, lay in zip(window, layers)):
                for k in range(1, len(layers) + 1):
                    scope, layer = "/".join(ops[:start + k]), "/".join(layers[:k])
                    if out.setdefault(scope, layer) != layer:
                        clash.add(scope)
                break
    return {k: v for k, v in out.items() if k not in clash}


def parameter_names(tf: Any, concrete: Any, fn: Any, params: list[str], module_text: str,
                    reads: list[tuple[str, str]] | None = None) -> dict[str, str]:
    """HLO entry parameter number (as text, for JSON) → what it is: the function argument
    (``images``, ``params['w']``), the variable (Keras path, else the ``tf.Variable`` name), or
    where the code keeps a captured tensor (:func:`_tensor_names`).

    XLA's entry parameters are the concrete function's graph inputs, in order: the flattened
    arguments, then the captured variables. The names are written only when the pre-opt module's
    parameter count and shapes agree with that list, so a mismatch gives no names, never wrong ones.
    """
    hlo_shapes = _entry_parameter_shapes(module_text)
    if hlo_shapes is None:
        return {}
    inputs = list(concrete.graph.inputs)
    if len(hlo_shapes) != len(inputs):
        return {}
    captured = {id(internal): external for external, internal in concrete.graph.captures}
    variables = {id(v.handle): v for v in concrete.variables}
    keras = _keras_paths(tf, fn)
    tensors: dict[int, str] | None = None  # what names a captured tensor, made on first need
    structured = concrete.structured_input_signature
    arg_names = _argument_names(tf, structured, params)
    names: dict[str, str] = {}
    for number, (tensor, shape) in enumerate(zip(inputs, hlo_shapes)):
        external = captured.get(id(tensor))
        if external is None:
            name = arg_names[number] if number < len(arg_names) else None
            expected = tuple(tensor.shape) if tensor.shape.rank is not None else None
        else:
            var = variables.get(id(external))
            if var is None:
                if tensors is None:
                    tensors = _tensor_names(tf, fn)
                name = tensors.get(id(external))
                if name is None:
                    continue
                expected = tuple(external.shape)
            else:
                name = keras.get(id(external)) or var.name.rsplit(":", 1)[0]
                expected = tuple(var.shape)
                if reads is not None and name:  # a Keras path, or a TF name such as ``Conv1/kernel``
                    reads.append((tensor.name, name))
        if expected is None:
            continue
        if tuple(shape.dims) != tuple(int(d) for d in expected):
            if reads is not None:
                reads.clear()
            return {}  # not the order assumed above: no names rather than wrong ones
        if name:
            names[str(number)] = name
    return names


#: The entry computation's header line: ``ENTRY %main.5 (a.1: f32[2], b.2: s32[]) -> f32[2] {``.
_COMMENT = re.compile(r"/\*.*?\*/")  # XLA's ``/*index=5*/`` in a long tuple
_ENTRY_LINE = re.compile(r"^ENTRY[ \t]+%?[^\s(]+[ \t]*(\(.*\)[ \t]*->.*?)[ \t]*\{[ \t]*$", re.MULTILINE)


def _entry_parameter_shapes(module_text: str) -> list[Any] | None:
    """The entry computation's parameter shapes, in parameter order (XLA writes its signature
    so), read from its header line alone: parsing the whole module for them took 0.13 s of a
    MobileNetV3 training step's capture (issue 32). The module parsed whole where the header is
    not one line; None where neither reads."""
    from hloviz import parse
    from hloviz.parser.shapes import parse_signature

    try:
        m = _ENTRY_LINE.search(module_text)
        if m is not None:
            return [shape for _name, shape in parse_signature(_COMMENT.sub("", m.group(1)))[0]]
        entry = parse(module_text).entry
    except Exception:  # noqa: BLE001 - the names are a nicety; the capture stands without them
        return None
    return [p.shape for p in entry.parameters] if entry is not None else []


def _argument_names(tf: Any, structured: Any, params: list[str]) -> list[str]:
    """The flattened tensor arguments' names, in order: the parameter name, with the path into
    a nested argument (``params['dense']['w']``)."""
    args, kwargs = structured if isinstance(structured, tuple) and len(structured) == 2 else (structured, {})
    out: list[str] = []

    def visit(node: Any, path: str) -> None:
        if isinstance(node, dict):
            for k in sorted(node):  # tf.nest flattens dicts by sorted key
                visit(node[k], f"{path}[{k!r}]")
        elif isinstance(node, (list, tuple)):
            for i, v in enumerate(node):
                visit(v, f"{path}[{i}]")
        elif isinstance(node, tf.TensorSpec):
            out.append(path)

    for i, a in enumerate(args or ()):
        visit(a, params[i] if i < len(params) else f"arg{i}")
    for k in sorted(kwargs or {}):
        visit(kwargs[k], k)
    return out


def _candidate_frames(op: Any) -> Any:
    """The frames of ``op``'s traceback that may be the user's, outermost first.

    TensorFlow filters its own frames out in C++ (``StackTrace.get_user_frames``), far faster
    than reading each frame here; a frame it drops is inside TensorFlow, which is never the
    user's file. Older TensorFlow without the method: the whole traceback.
    """
    tb = op.traceback
    if not tb:
        return ()
    user_frames = getattr(tb, "get_user_frames", None)
    return user_frames() if user_frames is not None else tb


def _user_frame(tb: Any, caller: frozenset[tuple[str, int]], always: tuple[str, ...]) -> Frame | None:
    """The innermost frame of an op's traceback (outermost first) in a user file, the caller's
    frames left out.

    Read from the innermost end, file first: each frame of TF's ``StackTrace`` is a C++ object
    read field by field, a real model has hundreds of thousands of them, and the search stops at
    the first user frame (a MobileNetV3 training step: 9,647 ops, ~10 frames read each).
    """
    for i in range(len(tb) - 1, -1, -1):
        f = tb[i]
        file = f.filename
        if is_user_file(file, always=always):
            line = f.lineno
            if (file, line) not in caller:
                return Frame(file, line, getattr(f, "name", ""))
    return None
