"""The analyses that answer "what did XLA do?", as typed, frozen results.

- :func:`kernels` — what runs: fusions and unfused work ops, bytes and FLOP estimates
- :func:`constant_folding` — work computed at compile time, and the constants that replaced it
- :func:`pre_to_post` — each op of the function → in kernels, folded, eliminated, no op name
  after XLA's passes, or no work
- :mod:`~hloviz.analysis.glossary` — the words every output uses, each with one meaning
- :func:`build_scope_tree` — the model's own structure (layers, scopes) from op names, with the
  kernels of each scope; :func:`scope_rows` — ``stats --by scope``'s numbers per scope
- :func:`parameter_names`, :func:`user_source` — the names and lines users recognise
- :func:`analyze` — all of them for a (pre, post) pair, with a one-line verdict

Each is imported on first use (:mod:`hloviz.lazy`): a command that needs one analysis (``diff``
its own) does not import the others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import lazy_names

if TYPE_CHECKING:  # what the names are, for type checkers and readers; imported on first use below
    from .kernels import ExecutedComputation, Kernel, KernelReport, kernels
    from .pre_post.folding import FoldedConstant, FoldingReport, constant_folding
    from .pre_post.mapping import Mapping, OpMapping, pre_to_post
    from .provenance import parameter_names, user_source
    from .scopes import Scope, ScopeTree, build_scope_tree
    from .scopes.stats import ScopeRow, scope_rows
    from .summary import Analysis, ModuleCounts, Summary, analyze, describe_kernel

__getattr__, __dir__ = lazy_names(globals(), {
    ".kernels": ("ExecutedComputation", "Kernel", "KernelReport", "kernels"),
    ".pre_post.folding": ("FoldedConstant", "FoldingReport", "constant_folding"),
    ".pre_post.mapping": ("Mapping", "OpMapping", "pre_to_post"),
    ".provenance": ("parameter_names", "user_source"),
    ".scopes": ("Scope", "ScopeTree", "build_scope_tree"),
    ".scopes.stats": ("ScopeRow", "scope_rows"),
    ".summary": ("Analysis", "ModuleCounts", "Summary", "analyze", "describe_kernel"),
})

__all__ = [
    "Analysis", "ExecutedComputation", "FoldedConstant", "FoldingReport", "Kernel", "KernelReport",
    "Mapping", "ModuleCounts", "OpMapping", "Scope", "ScopeRow", "ScopeTree", "Summary", "analyze",
    "build_scope_tree", "constant_folding", "describe_kernel", "kernels", "parameter_names", "pre_to_post",
    "scope_rows", "user_source",
]
