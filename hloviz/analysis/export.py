"""An :class:`~hloviz.analysis.Analysis` as plain JSON-ready data (what ``stats --json`` prints).

The keys are a contract for scripts: ``summary`` (the numbers the ``verdict`` is printed from:
``ops`` and their ``statuses``, ``kernels``, ``folded_constants``…), ``kernel_count``,
``kernels`` (each with ``name``, ``kind``, ``backend_kind`` — XLA's backend kind, e.g.
``__triton_gemm``, or null —, ``instructions`` — its instructions doing work —, ``ops`` — how
many ops have work in it — and ``opcodes`` as a count per opcode), ``folded``
(each with ``constant``, ``value``, ``from``, the op names, and ``note``, why ``from`` is empty
when it is), ``new_constants``, ``mapping`` (each op → ``status``) and ``pre`` / ``post``
(instruction counts, null for a missing stage). The words are those of
:mod:`hloviz.analysis.glossary`. More keys may be added; none of these will change meaning.

Source lines are looked up through a caller-supplied function (op name → ``{"file", "line"}``
or None) so that this module needs nothing from capture; without one, or for an op it does not
know, the HLO metadata's ``source_file:source_line`` is used — unless it lies inside TensorFlow,
Keras, JAX or another installed library, which is never the user's line.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterable

from .kernels import Kernel
from .summary import Analysis, ModuleCounts

SourceLookup = Callable[[str], "dict | None"]


def source_lines(op_names: Iterable[str], metadata_sources: Iterable[tuple[str, int]],
                 lookup: SourceLookup | None = None) -> list[str]:
    """Distinct ``file:line`` strings: where the instructions themselves say they were written
    (``metadata_sources``: each one's own stack frame or metadata position; JAX's name an
    instruction's line exactly, an op name stands for every line of a scope using one
    primitive), else the user's lines ``lookup`` knows for the ops, in op order (TensorFlow's
    metadata points into its own ``ops.py``, never the user's line). Paths under the current
    folder are shown relative to it."""
    from .provenance import is_library_path

    seen: dict[str, None] = {}
    for file, line in metadata_sources:
        if not is_library_path(file):
            seen[f"{_short(file)}:{line}"] = None
    if not seen:
        for op in op_names:
            hit = lookup(op) if lookup else None
            if hit and hit.get("file"):
                seen[f"{_short(hit['file'])}:{hit.get('line', 0)}"] = None
    return list(seen)


def _short(path: str) -> str:
    """Relative to the current folder when under it; inside an installed package (TF's own
    ``ops.py``), from the package folder on."""
    return _short_from(path, os.getcwd())


@functools.lru_cache(maxsize=4096)
def _short_from(path: str, folder: str) -> str:
    """:func:`_short` from ``folder``, kept: a page names the same few files for thousands of
    ops (JAX's GPT step: 29k calls, ``os.path.relpath`` each, ~0.5 s of its ``show``)."""
    for marker in ("/site-packages/", "/dist-packages/"):
        if marker in path:
            return path.split(marker, 1)[1]
    try:
        rel = os.path.relpath(path, folder)
    except ValueError:  # another drive on Windows
        return path
    return path if rel.startswith("..") else rel


def _counts(c: ModuleCounts | None) -> dict | None:
    if c is None:
        return None
    return {"name": c.name, "computations": c.computations, "instructions": c.instructions,
            "work": c.work, "op_names": c.op_names}


def kernel_dict(k: Kernel, lookup: SourceLookup | None = None) -> dict:
    return {
        "name": k.name, "computation": k.computation, "kind": k.kind, "opcode": k.opcode,
        "fused_computation": k.fused_computation, "target": k.target, "backend_kind": k.backend_kind,
        "shape": k.shape, "instructions": k.instructions, "ops": k.ops,
        "opcodes": dict(k.opcodes), "bytes_read": k.bytes_read, "bytes_written": k.bytes_written,
        "flops": k.flops, "runs": k.runs, "op_names": list(k.op_names), "layer": k.layer,
        "source_lines": source_lines(k.op_names, k.sources, lookup),
    }


def to_dict(analysis: Analysis, lookup: SourceLookup | None = None) -> dict:
    """The analysis as JSON-ready data (see the module docstring for the stable keys)."""
    a = analysis
    out: dict = {
        "summary": a.summary.to_dict(),
        "verdict": a.verdict,
        "pre": a.pre.instructions if a.pre else None,
        "post": a.post.instructions if a.post else None,
        "pre_module": _counts(a.pre),
        "post_module": _counts(a.post),
        "kernel_count": a.kernels.count if a.kernels else None,
        "kernels": [kernel_dict(k, lookup) for k in a.kernels.kernels] if a.kernels else [],
        "executed_computations": [
            {"name": c.name, "caller": c.caller, "role": c.role} for c in a.kernels.computations
        ] if a.kernels else [],
        "bytes_read": a.kernels.bytes_read if a.kernels else None,
        "bytes_written": a.kernels.bytes_written if a.kernels else None,
        "flops": a.kernels.flops if a.kernels else None,
        "folded": [_fold_dict(f, lookup) for f in a.folding.folded] if a.folding else [],
        "new_constants": [_fold_dict(f, lookup) for f in a.folding.new_constants] if a.folding else [],
        "computed": list(a.folding.computed) if a.folding else [],
    }
    if a.mapping is not None:
        out["mapping_counts"] = a.mapping.counts
        out["mapping"] = {m.op_name: {"type": m.op_type, "status": m.status, "kernels": list(m.kernels),
                                      "constants": list(m.constants)} for m in a.mapping.ops}
    return out


def _fold_dict(f, lookup: SourceLookup | None) -> dict:
    return {"constant": f.constant, "computation": f.computation, "value": f.value, "shape": f.shape,
            "from": list(f.from_ops), "note": f.note, "into": list(f.into), "by": f.by,
            "source_lines": source_lines(f.from_ops, (), lookup) if lookup else []}
