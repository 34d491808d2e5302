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

Importing hloviz never imports TensorFlow or JAX; capture does, when asked. Nor does it import
the names above until one is used (:func:`__getattr__`): a process that only captures — the
capture child, ``hloviz dump`` — or only parses does not pay for the analyses' and the diff's
imports (~45 ms of every capture's start, issue 32).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .lazy import lazy_names

if TYPE_CHECKING:  # what the names are, for type checkers and readers; imported on first use below
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
    from .errors import CaptureError, DependencyError, HloParseError, HlovizError, InputError, RenderError
    from .graph import check, to_networkx
    from .ir import Computation, HloModule, Instruction, Layout, Metadata, Shape, summarize
    from .parser import parse, parse_file, parse_shape
    from .printer import to_text
    from .verify import verify

__version__ = "0.1.0"

__getattr__, __dir__ = lazy_names(globals(), {
    ".errors": ("CaptureError", "DependencyError", "HloParseError", "HlovizError", "InputError", "RenderError"),
    ".ir": ("Computation", "HloModule", "Instruction", "Layout", "Metadata", "Shape", "summarize"),
    ".graph": ("check", "to_networkx"),
    ".parser": ("parse", "parse_file", "parse_shape"),
    ".printer": ("to_text",),
    ".verify": ("verify",),  # the function; hloviz.verify stays it when the package is imported
    ".analysis": ("Analysis", "FoldedConstant", "FoldingReport", "Kernel", "KernelReport", "Mapping", "OpMapping",
                  "analyze", "constant_folding", "kernels", "pre_to_post"),
    ".analysis.diff": ("ModuleDiff", "diff_modules"),
    ".analysis.pre_post.mapping": ("PrePostMapping",),
})

__all__ = [
    "CaptureError", "Computation", "DependencyError", "HloModule", "HloParseError", "HlovizError",
    "InputError", "Instruction", "Layout", "Metadata", "RenderError", "Shape", "parse", "parse_file",
    "parse_shape", "summarize", "to_text", "to_networkx", "check", "verify", "__version__",
    "Analysis", "FoldedConstant", "FoldingReport", "Kernel", "KernelReport", "Mapping", "OpMapping", "PrePostMapping",
    "analyze", "constant_folding", "kernels", "pre_to_post", "ModuleDiff", "diff_modules",
]

