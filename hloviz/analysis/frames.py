"""Where the user wrote an instruction: its own stack frame, read from the module's tables.

Newer XLA prints ``FileNames``, ``FunctionNames``, ``FileLocations`` and ``StackFrames`` tables
after the module header, and each instruction's metadata names its frame (``stack_frame_id``).
An op name stands for every instruction one primitive makes in one scope — JAX's ``jit(f)/mul``
on every line of ``f`` that multiplies — so only the instruction's own frame says its line.
In: a module (its tables) and an instruction. Out: ``(file, line)`` of the innermost frame
outside the libraries. Its own module because the kernel table (:mod:`.kernels`), the memory
report and the explorer each read it, below everything that reads op names
(:mod:`.provenance`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path

from ..ir import HloModule, Instruction, stack_frames

__all__ = ["frame_lines", "instruction_source", "is_library_path"]

#: Path fragments of frames inside the frameworks (as absolute paths or as XLA's metadata
#: writes them, relative to the package root).
_LIBRARY = re.compile(
    r"(^|/)(site-packages|dist-packages)/|(^|/)(tensorflow|keras|tf_keras|jax|jaxlib|flax|optax|absl)/"
)


def is_library_path(path: str) -> bool:
    """Is ``path`` inside an installed library (never the user's line)?"""
    return not path or path.startswith("<") or bool(_LIBRARY.search(path))


def frame_lines(module: HloModule) -> dict[int, tuple[str, int]]:
    """Each ``stack_frame_id`` of ``module``'s own frame tables (newer XLA) → ``(file, line)`` of
    its innermost frame outside the libraries; frames wholly inside them are left out. An op
    name stands for every instruction a primitive makes in one scope (JAX's ``jit(f)/mul`` on
    every line of ``f`` that multiplies), so only an instruction's own frame says its line: by
    op name, half the kernels of the GPT step named the line of the scope's first ``mul``."""
    hit = _frame_lines.get(id(module))
    if hit is not None and hit[0] is module:
        return hit[1]
    out: dict[int, tuple[str, int]] = {}
    for frame_id, chain in stack_frames(module.stack_frame_tables).items():
        mine = [(file, line) for file, line, _function in chain if not is_library_path(file) and not _ours(file)]
        if mine:
            out[frame_id] = mine[-1]
    if len(_frame_lines) > 8:
        _frame_lines.clear()
    _frame_lines[id(module)] = (module, out)
    return out


#: :func:`frame_lines`' answers for the last few modules (kept with the module, keyed by its id).
_frame_lines: dict[int, tuple[HloModule, dict[int, tuple[str, int]]]] = {}


def instruction_source(inst: Instruction, frames: Mapping[int, tuple[str, int]]) -> tuple[str, int] | None:
    """Where the user wrote ``inst``: its own stack frame (``frames``: :func:`frame_lines` of its
    module), else its metadata's ``source_file:source_line``, library paths included (the
    caller filters them: TensorFlow's point into its ``ops.py``)."""
    md = inst.metadata
    if frames and md.extra:
        for key, value in md.extra:
            if key == "stack_frame_id" and value.isdecimal():
                return frames.get(int(value))
    return (md.source_file, md.source_line) if md.source_file else None


#: hloviz's own package folder (its frames are never the user's line).
_HLOVIZ = Path(__file__).resolve().parent.parent


@lru_cache(maxsize=256)
def _ours(file: str) -> bool:
    """Whether ``file`` is one of hloviz's own (the capture's frames run through it: an op JAX
    makes outside the user's function has no other frame)."""
    try:
        return Path(file).resolve().is_relative_to(_HLOVIZ)
    except (OSError, ValueError):
        return False
