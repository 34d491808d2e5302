"""The analyses that answer "what did XLA do?", as typed, frozen results.

- :func:`kernels` — what runs: fusions and unfused work ops, bytes and FLOP estimates
- :func:`constant_folding` — work computed at compile time, and the constants that replaced it
- :func:`pre_to_post` — each pre-optimization op → its kernels, "folded" or "eliminated"
- :func:`build_scope_tree` — the model's own structure (layers, scopes) from op names, with the
  kernels of each scope
- :func:`analyze` — all of them for a (pre, post) pair, with a one-line verdict
"""

from __future__ import annotations

from .folding import FoldedConstant, FoldingReport, constant_folding
from .kernels import ExecutedComputation, Kernel, KernelReport, kernels
from .mapping import Mapping, OpMapping, pre_to_post
from .scopes import Scope, ScopeTree, build_scope_tree
from .summary import Analysis, ModuleCounts, analyze, describe_kernel

__all__ = [
    "Analysis", "ExecutedComputation", "FoldedConstant", "FoldingReport", "Kernel", "KernelReport",
    "Mapping", "ModuleCounts", "OpMapping", "Scope", "ScopeTree", "analyze", "build_scope_tree",
    "constant_folding", "describe_kernel", "kernels", "pre_to_post",
]
