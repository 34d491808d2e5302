"""Names and lines users recognise: what a parameter is, and where the user wrote an op.

HLO calls a TensorFlow function's inputs ``arg0.1``, ``arg58.1`` (op name ``XLA_Args``) and its
metadata points at TensorFlow's own ``ops.py`` for every op. The capture knows better:

* ``info["parameter_names"]`` (written by the TensorFlow capture) maps each entry parameter's
  number to the function argument (``images``, ``params['w']``) or the variable it holds — the
  Keras variable path (``transformer/block_0/attention/query/kernel``) or the ``tf.Variable``
  name. JAX writes the argument's pytree path into the parameter's op name
  (``params['Block_0']['MLP']['up']``), so a JAX module needs no capture for it;
* ``info["source_map"]`` maps op names to the innermost frame in the user's files.

:func:`parameter_names` and :func:`user_source` read them, and never answer with a frame inside
an installed library (TensorFlow, Keras, JAX): a wrong line is worse than none.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..ir import HloModule, Instruction, Metadata
from .frames import frame_lines, instruction_source, is_library_path
from .kernels import SYNTHETIC_OP_NAMES

__all__ = ["instruction_user_source", "is_library_path", "lookup_source", "parameter_names", "user_source"]


def lookup_source(op_name: str, source_map: Mapping[str, dict]) -> dict | None:
    """The source-map entry for an HLO ``op_name``, tolerating XLA's and TF's renaming.

    TF joins the names of ops merged into one instruction with ``;``
    (``Cos;PartitionedCall/Cos``): each part is tried in turn. Post-optimization metadata
    sometimes repeats a scope (TF's ``cond/Sin`` becomes ``cond/cond/Sin``): the name with
    repeated segments collapsed is tried too. No looser matching.
    """
    if not op_name or not source_map:
        return None
    for name in op_name.split(";") if ";" in op_name else (op_name,):
        hit = source_map.get(name)
        if hit is not None:
            return hit
        parts = name.split("/")
        collapsed = "/".join(p for i, p in enumerate(parts) if i == 0 or p != parts[i - 1])
        hit = source_map.get(collapsed)
        if hit is not None:
            return hit
    return None


def user_source(op_name: str, metadata: Metadata | None = None,
                source_map: Mapping[str, dict] | None = None) -> tuple[str, int] | None:
    """``(file, line)`` in the user's code for an op: the capture's source map first, else the
    HLO metadata's ``source_file:source_line`` when that is not inside a library; else None."""
    hit = lookup_source(op_name, source_map or {})
    if hit and hit.get("file"):  # the capture already picked the user's own frame
        return str(hit["file"]), int(hit.get("line") or 0)
    if metadata is not None and metadata.source_file and not is_library_path(metadata.source_file):
        return metadata.source_file, metadata.source_line
    return None


def instruction_user_source(inst: Instruction, module: HloModule,
                            source_map: Mapping[str, dict] | None = None) -> tuple[str, int] | None:
    """``(file, line)`` in the user's code for one instruction: its own stack frame where the
    module's tables give one (:func:`~hloviz.analysis.frames.frame_lines`: an op name stands
    for every line of a scope using one primitive), else :func:`user_source` of its op name."""
    if module.stack_frame_tables:
        own = instruction_source(inst, frame_lines(module))
        if own is not None and not is_library_path(own[0]):
            return own
    return user_source(inst.metadata.op_name, inst.metadata, source_map) if source_map else None


def parameter_names(module: HloModule, info: Mapping | None = None) -> dict[Instruction, str]:
    """Each entry parameter of ``module`` → the name the user knows it by (see the module
    docstring); parameters nobody named are left out."""
    if module.entry is None:
        return {}
    given: Mapping[str, str] = (info or {}).get("parameter_names") or {}
    out: dict[Instruction, str] = {}
    for p in module.entry.parameters:
        name = given.get(str(p.parameter_number))
        if not name:
            op = p.metadata.op_name
            if op and op not in SYNTHETIC_OP_NAMES:
                name = op
        if name:
            out[p] = name
    return out
