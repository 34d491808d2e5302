"""hloviz: see what XLA did to your TensorFlow or JAX function.

The public API, top-down:

- :func:`parse`, :func:`parse_file` — HLO text → :class:`HloModule` (``hloviz.ir``)
- :func:`to_text` — the canonical printer (``hloviz.printer``)
- :func:`to_networkx`, :func:`check` — the graph view (``hloviz.graph``)
- :func:`verify` — what XLA would refuse that the tolerant parser read (``hloviz.verify``)
- :func:`kernels`, :func:`constant_folding`, :func:`pre_to_post`, :func:`analyze` — what XLA did
  (``hloviz.analysis``)
- :func:`diff_modules` — what changed between two modules (``hloviz.analysis.diff``)
- ``hloviz.api`` — what the commands do, as functions: ``stats``, ``dump``, ``show``, ``render``,
  ``diff``

Importing hloviz never imports TensorFlow or JAX; capture does, when asked.
"""

from __future__ import annotations

from .errors import (
    CaptureError,
    DependencyError,
    HloParseError,
    HlovizError,
    InputError,
    RenderError,
)
from .ir import Computation, HloModule, Instruction, Layout, Metadata, Shape, summarize
from .graph import check, to_networkx
from .verify import verify
from .parser import parse, parse_file, parse_shape
from .printer import to_text
from .analysis import (
    Analysis,
    FoldedConstant,
    FoldingReport,
    Kernel,
    KernelReport,
    Mapping,
    OpMapping,
    analyze,
    constant_folding,
    kernels,
    pre_to_post,
)
from .analysis.diff import ModuleDiff, diff_modules
from .analysis.pre_post.mapping import PrePostMapping

__version__ = "0.1.0"

__all__ = [
    "CaptureError", "Computation", "DependencyError", "HloModule", "HloParseError", "HlovizError",
    "InputError", "Instruction", "Layout", "Metadata", "RenderError", "Shape", "parse", "parse_file",
    "parse_shape", "summarize", "to_text", "to_networkx", "check", "verify", "__version__",
    "Analysis", "FoldedConstant", "FoldingReport", "Kernel", "KernelReport", "Mapping", "OpMapping", "PrePostMapping",
    "analyze", "constant_folding", "kernels", "pre_to_post", "ModuleDiff", "diff_modules",
]


def __getattr__(name: str):
    # `hloviz.api` on first use, so `import hloviz` stays light.
    if name == "api":
        import importlib

        return importlib.import_module(".api", __name__)
    raise AttributeError(f"module 'hloviz' has no attribute {name!r}")
