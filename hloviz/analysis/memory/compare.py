"""Memory before and after (``diff``, ``versions``): totals, peaks, kinds, layers, and the buffers
at the peak that are new or grew.

Buffers of two compiles are matched by what they hold, not by instruction name (XLA renumbers
names between releases): the op name of the instruction defining them and the shape index, then
the instruction name for buffers without an op name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...units import binary_size
from .report import LiveBuffer, MemoryReport, kind_label

__all__ = ["MemoryChange", "compare_memory"]


@dataclass(frozen=True)
class MemoryChange:
    """Memory of two sides (``before`` → ``after``) and what changed at the peak."""

    before: MemoryReport
    after: MemoryReport
    #: (layer, bytes at the peak before, after), largest change first (layers on either side).
    layers: tuple[tuple[str, int, int], ...]
    #: (buffer after, bytes before or 0 when new), for buffers at the peak that are new or grew.
    grown: tuple[tuple[LiveBuffer, int], ...]

    def to_dict(self) -> dict[str, Any]:
        b, a = self.before, self.after
        return {
            "source": {"before": b.source, "after": a.source},
            "total_bytes": {"before": b.total_bytes, "after": a.total_bytes},
            "peak_bytes": {"before": b.peak.bytes, "after": a.peak.bytes},
            "by_kind": {k: {"before": b.by_kind.get(k, 0), "after": a.by_kind.get(k, 0)}
                        for k in dict.fromkeys([*b.by_kind, *a.by_kind])},
            "scopes": [{"scope": s, "before": x, "after": y} for s, x, y in self.layers],
            "buffers_new_or_grown": [{**buf.to_dict(), "bytes_before": old} for buf, old in self.grown],
        }

    def lines(self, limit: int = 10) -> list[str]:
        """The text ``diff`` prints."""
        b, a = self.before, self.after
        src = b.source if b.source == a.source else f"{b.source} → {a.source}"
        out = [(f"memory ({src}): total {binary_size(b.total_bytes)} → {binary_size(a.total_bytes)} "
                f"({_pct(b.total_bytes, a.total_bytes)}); peak {binary_size(b.peak.bytes)} → {binary_size(a.peak.bytes)} "
                f"({_pct(b.peak.bytes, a.peak.bytes)})")]
        kinds = [f"{kind_label(k)} {binary_size(b.by_kind.get(k, 0))} → {binary_size(a.by_kind.get(k, 0))}"
                 for k in dict.fromkeys([*b.by_kind, *a.by_kind]) if b.by_kind.get(k, 0) != a.by_kind.get(k, 0)]
        if kinds:
            out.append("  by kind: " + "; ".join(kinds))
        changed = [(s, x, y) for s, x, y in self.layers if x != y][:limit]
        if changed:
            out.append("  by layer at the peak: " + "; ".join(f"{s} {binary_size(x)} → {binary_size(y)}" for s, x, y in changed))
        for buf, old in self.grown[:limit]:
            what = "new" if not old else f"grew from {binary_size(old)}"
            label = buf.op_name or buf.instruction
            out.append(f"  at the peak, {what}: {buf.instruction} {buf.shape} {binary_size(buf.bytes)} ({label})")
        if len(self.grown) > limit:
            out.append(f"  … {len(self.grown) - limit} more buffers new or grown at the peak")
        return out


def _key(b: LiveBuffer) -> tuple[str, tuple[int, ...]]:
    return (_from_the_model(b.op_name) if b.op_name else b.instruction, b.index)


def _from_the_model(path: str) -> str:
    """A scope path or op name without JAX's ``jit(f)`` in front: the traced function's name is
    not a layer, and two functions (``vit_forward``, ``vit_forward_relu``) hold the same model
    (``jit(vit_forward)/ViT/blocks`` and ``jit(vit_forward_relu)/ViT/blocks`` are one layer).
    The function's own row is ``(function)``."""
    if not path.startswith(("jit(", "pjit(")):
        return path
    depth = 0
    for i, ch in enumerate(path):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                rest = path[i + 1:]
                if not rest:
                    return "(function)"
                return rest[1:] if rest.startswith("/") and len(rest) > 1 else path
    return path


def _by_model_path(report: MemoryReport) -> dict[str, int]:
    """The report's scope rows keyed by the model's paths; the traced function's own row, which
    the report names by the function (``vit_forward``), is ``(function)``, so that two functions
    holding one model compare row by row."""
    functions = {_function_of(b.op_name) for b in report.buffers_at_peak} - {""}
    out: dict[str, int] = {}
    for s, n in report.scopes:
        key = "(function)" if s in functions else _from_the_model(s)
        out[key] = out.get(key, 0) + n
    return out


def _function_of(op_name: str) -> str:
    """``vit_forward`` for an op name ``jit(vit_forward)/…``; "" for any other."""
    if not op_name.startswith(("jit(", "pjit(")):
        return ""
    depth = 0
    for i, ch in enumerate(op_name):
        depth += (ch == "(") - (ch == ")")
        if ch == ")" and depth == 0:
            return op_name[op_name.index("(") + 1:i]
    return ""


def compare_memory(before: MemoryReport, after: MemoryReport) -> MemoryChange:
    """What changed between two memory reports (see the module docstring)."""
    x, y = _by_model_path(before), _by_model_path(after)
    layers = sorted(((s, x.get(s, 0), y.get(s, 0)) for s in dict.fromkeys([*x, *y])),
                    key=lambda r: (-abs(r[2] - r[1]), r[0]))
    old: dict[tuple[str, tuple[int, ...]], int] = {}
    for b in before.buffers_at_peak:
        old[_key(b)] = max(old.get(_key(b), 0), b.bytes)
    grown = tuple(sorted(((b, old.get(_key(b), 0)) for b in after.buffers_at_peak
                          if b.bytes > old.get(_key(b), 0)), key=lambda r: (-(r[0].bytes - r[1]), r[0].instruction)))
    return MemoryChange(before, after, tuple(layers), grown)


def _pct(a: int, b: int) -> str:
    if a == b:
        return "same"
    if not a:
        return "new"
    return f"{100 * (b - a) / a:+.1f}%"
