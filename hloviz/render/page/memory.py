"""Memory pictures: the timeline (SVG) and the report's memory section (HTML).

The timeline shows bytes live along the schedule, stacked by kind (parameters at the bottom,
then outputs, constants and temporaries), x being the position in the flattened schedule (not
time), with the peak marked and the instruction running there named with its layer — what
XProf's memory viewer plots as "memory allocation size vs. program order". It is plain SVG
written here (no Graphviz), so it draws in milliseconds for any module.

Every string from the module goes through :mod:`hloviz.render.quoting`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...analysis.memory.report import kind_label
from ...units import binary_size
from ..quoting import html_text as esc
from ..quoting import shorten

if TYPE_CHECKING:
    from ...analysis.memory import MemoryReport

__all__ = ["KIND_COLOURS", "TIMELINE_DARK", "memory_section", "timeline_description", "timeline_svg"]

#: Colours of the kinds (the stacking order, bottom up).
KIND_COLOURS = {"parameters": "#f4a261", "outputs": "#2a9d8f", "constants": "#9e9e9e", "temporaries": "#457b9d"}
_WIDTH, _HEIGHT, _LEFT, _RIGHT, _TOP, _BOTTOM = 900, 320, 80, 20, 50, 60
#: Most columns drawn; longer schedules are bucketed (each column the highest point in it).
_COLUMNS = 600

#: What dark means for the timeline (:func:`hloviz.render.page.page.for_page`'s ``dark_rules``): the
#: white slab goes, text and axes turn light, the peak a lighter red; the kinds keep their colours.
TIMELINE_DARK: tuple[tuple[tuple[str, ...], str], ...] = (
    ((".hv-bg",), "fill:transparent"),
    ((".hv-ink",), "fill:#d0d7de"),
    ((".hv-muted",), "fill:#9aa4ae"),
    ((".hv-axis",), "stroke:#d0d7de"),
    ((".hv-peak",), "stroke:#ef5350"),
    ((".hv-peak-label",), "fill:#ef5350"),
)


def _columns(report: MemoryReport) -> list[tuple[int, dict[str, int]]]:
    """(position, bytes by kind) per drawn column: every position, or the highest of each bucket."""
    totals = report.live_bytes
    n = len(totals)
    kinds = [k for k in KIND_COLOURS if k in report.timeline]
    if n <= _COLUMNS:
        return [(t, {k: report.timeline[k][t] for k in kinds}) for t in range(n)]
    out = []
    for c in range(_COLUMNS):
        lo, hi = c * n // _COLUMNS, max((c + 1) * n // _COLUMNS, c * n // _COLUMNS + 1)
        t = max(range(lo, hi), key=lambda i: totals[i])
        if lo <= report.peak.time < hi:
            t = report.peak.time  # the peak is never averaged away
        out.append((t, {k: report.timeline[k][t] for k in kinds}))
    return out


def timeline_svg(report: MemoryReport, title: str = "") -> str:
    """The memory timeline (see the module docstring) as an SVG document."""
    cols = _columns(report)
    n = max(len(cols), 1)
    top = max((sum(v.values()) for _, v in cols), default=0) or 1
    plot_w, plot_h = _WIDTH - _LEFT - _RIGHT, _HEIGHT - _TOP - _BOTTOM
    step = plot_w / n

    def y(b: float) -> float:
        return _TOP + plot_h - plot_h * b / top

    parts = [(f'<svg xmlns="http://www.w3.org/2000/svg" width="{_WIDTH}" height="{_HEIGHT}" '
              f'viewBox="0 0 {_WIDTH} {_HEIGHT}" font-family="sans-serif" font-size="12">'),
             f'<rect class="hv-bg" width="{_WIDTH}" height="{_HEIGHT}" fill="#ffffff"/>']
    heading = title or "memory along the schedule"
    parts.append(f'<text class="hv-ink" x="{_LEFT}" y="20" font-size="14" font-weight="bold">'
                 f'{esc(shorten(heading, 100))}</text>')
    said = "XLA's buffer assignment" if report.source == "xla" else "estimated from the HLO"
    parts.append(f'<text class="hv-muted" x="{_LEFT}" y="38" fill="#616161">total {esc(binary_size(report.total_bytes))} '
                 f'({esc(said)}); live bytes by kind at each position of the schedule</text>')
    base = [0] * n
    for kind, fill in KIND_COLOURS.items():
        if kind not in report.timeline or not any(v.get(kind, 0) for _, v in cols):
            continue
        upper = [base[i] + cols[i][1].get(kind, 0) for i in range(n)]
        pts = [f"{_LEFT + i * step:.1f},{y(upper[i]):.1f} {_LEFT + (i + 1) * step:.1f},{y(upper[i]):.1f}"
               for i in range(n)]
        back = [f"{_LEFT + (i + 1) * step:.1f},{y(base[i]):.1f} {_LEFT + i * step:.1f},{y(base[i]):.1f}"
                for i in reversed(range(n))]
        parts.append(f'<polygon class="hv-kind" data-kind="{kind}" fill="{fill}" fill-opacity="0.85" stroke="none" '
                     f'points="{" ".join(pts + back)}"><title>{kind}</title></polygon>')
        base = upper
    # axes
    parts.append(f'<line class="hv-axis" x1="{_LEFT}" y1="{_TOP + plot_h}" x2="{_LEFT + plot_w}" y2="{_TOP + plot_h}" '
                 'stroke="#424242"/>')
    parts.append(f'<line class="hv-axis" x1="{_LEFT}" y1="{_TOP}" x2="{_LEFT}" y2="{_TOP + plot_h}" stroke="#424242"/>')
    for frac in (0, 0.5, 1):
        parts.append(f'<text class="hv-ink" x="{_LEFT - 6}" y="{y(top * frac) + 4:.1f}" text-anchor="end">'
                     f'{esc(binary_size(int(top * frac)))}</text>')
    last = len(report.instructions) - 1
    parts.append(f'<text class="hv-ink" x="{_LEFT}" y="{_TOP + plot_h + 16}">0</text>')
    parts.append(f'<text class="hv-ink" x="{_LEFT + plot_w}" y="{_TOP + plot_h + 16}" text-anchor="end">'
                 f'{max(last, 0)}</text>')
    parts.append(f'<text class="hv-muted" x="{_LEFT + plot_w / 2:.1f}" y="{_TOP + plot_h + 16}" text-anchor="middle" '
                 'fill="#616161">'
                 "position in the schedule (program order, not time)</text>")
    # the peak
    col = next((i for i, (t, _) in enumerate(cols) if t == report.peak.time), 0)
    px = _LEFT + (col + 0.5) * step
    parts.append(f'<line class="hv-peak" x1="{px:.1f}" y1="{_TOP}" x2="{px:.1f}" y2="{_TOP + plot_h}" '
                 'stroke="#c62828" stroke-dasharray="4 3"/>')
    layer = _peak_layer(report)
    label = f"peak {binary_size(report.peak.bytes)} at #{report.peak.time} {report.peak.instruction}"
    if layer:
        label += f" ({layer})"
    anchor = "start" if px < _LEFT + plot_w / 2 else "end"
    dx = 6 if anchor == "start" else -6
    parts.append(f'<text class="hv-peak-label" x="{px + dx:.1f}" y="{_TOP + 12}" text-anchor="{anchor}" '
                 'fill="#c62828">'
                 f'{esc(shorten(label, 90))}</text>')
    named = [b for b in report.buffers_at_peak if b.kind != "parameters"] or list(report.buffers_at_peak)
    for k, b in enumerate(named[:3]):
        text = f"{binary_size(b.bytes)} {b.instruction}" + (f" · {b.scope}" if b.scope else "")
        parts.append(f'<text class="hv-muted" x="{px + dx:.1f}" y="{_TOP + 28 + 14 * k}" text-anchor="{anchor}" '
                     'fill="#424242" '
                     f'font-size="11">{esc(shorten(text, 80))}</text>')
    # legend
    lx = _LEFT
    for kind, fill in KIND_COLOURS.items():
        if kind in report.timeline and any(report.timeline[kind]):
            parts.append(f'<rect x="{lx}" y="{_HEIGHT - 22}" width="12" height="12" fill="{fill}"/>'
                         f'<text class="hv-ink" x="{lx + 16}" y="{_HEIGHT - 12}">{kind}</text>')
            lx += 120
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def timeline_description(report: MemoryReport) -> str:
    """What the timeline shows, in a sentence (the picture's ``<desc>`` for screen readers)."""
    said = "XLA's buffer assignment" if report.source == "xla" else "estimated from the HLO"
    where = f"{report.peak.instruction}" + (f" in {_peak_layer(report)}" if _peak_layer(report) else "")
    kinds = ", ".join(f"{kind_label(k)} {binary_size(v)}" for k, v in report.by_kind.items() if v and k != "aliased")
    return (f"Memory: {binary_size(report.total_bytes)} in all ({said}: {kinds}); peak {binary_size(report.peak.bytes)} "
            f"live at position {report.peak.time} of {max(len(report.instructions) - 1, 0)} ({where}).")


def _peak_layer(report: MemoryReport) -> str:
    for b in report.buffers_at_peak:
        if b.instruction == report.peak.instruction and b.scope:
            return b.scope
    return ""


def memory_section(report: MemoryReport) -> str:
    """The report's memory section: summary, timeline, buffers at the peak (sortable), bytes at the
    peak per layer, and the notes."""
    said = f"From {report.origin}" if report.source == "xla" else f"An estimate: {report.origin}"
    parts = [f"<h2>Memory ({esc(binary_size(report.total_bytes))})</h2>",
             (f'<p>{esc(said)}. Peak: <b>{esc(binary_size(report.peak.bytes))}</b> live at '
              f"position {report.peak.time} (<code>{esc(report.peak.instruction)}</code>).</p>"),
             '<table class="facts">' + "".join(
                 f"<tr><th>{esc(kind_label(k))}</th><td class=\"num\">{esc(binary_size(v))}</td></tr>"
                 for k, v in report.by_kind.items()) + "</table>"]
    if report.notes:
        parts.append('<ul class="notes">' + "".join(f"<li>{esc(n)}</li>" for n in report.notes) + "</ul>")
    parts.append('<div class="memory-timeline" style="overflow:auto;border:1px solid #e0e0e0;border-radius:6px;'
                 f'padding:.5rem">{timeline_svg(report)}</div>')
    parts.append(f"<h3>Buffers live at the peak ({len(report.buffers_at_peak)})</h3>")
    parts.append('<table class="buffers" id="hv-buffers"><thead><tr><th>buffer</th><th>shape</th>'
                 '<th data-sort="num">bytes</th><th>kind</th><th data-sort="num">from</th><th data-sort="num">to</th>'
                 "<th>layer</th><th>your code</th><th>last user</th></tr></thead><tbody>")
    for b in report.buffers_at_peak:
        name = b.instruction + (f"{{{','.join(map(str, b.index))}}}" if b.index else "")
        parts.append(f'<tr data-inst="{esc(b.instruction)}" data-user="{esc(b.last_user)}">'
                     f"<td><code>{esc(name)}</code></td><td><code>{esc(b.shape)}</code></td>"
                     f'<td class="num" data-v="{b.bytes}">{esc(binary_size(b.bytes))}</td><td>{esc(b.kind)}</td>'
                     f'<td class="num">{b.start}</td><td class="num">{b.end}</td><td>{esc(b.scope)}</td>'
                     f"<td>{esc(b.source)}</td><td><code>{esc(b.last_user)}</code></td></tr>")
    parts.append("</tbody></table>")
    if report.scopes:
        parts.append("<h3>Bytes at the peak by layer</h3>")
        parts.append('<table class="layers" id="hv-layers"><thead><tr><th>layer / scope</th>'
                     '<th data-sort="num">bytes</th><th data-sort="num">share of the peak</th></tr></thead><tbody>')
        for path, n in report.scopes:
            share = 100 * n / report.peak.bytes if report.peak.bytes else 0.0
            insts = " ".join(sorted({b.instruction for b in report.buffers_at_peak
                                     if b.scope == path or b.scope.startswith(path + "/")}))
            parts.append(f'<tr data-scope="{esc(path)}" data-insts="{esc(insts)}"><td>{esc(path)}</td>'
                         f'<td class="num" data-v="{n}">{esc(binary_size(n))}</td>'
                         f'<td class="num" data-v="{share:.3f}">{share:.1f}%</td></tr>')
        parts.append("</tbody></table>")
    return "\n".join(parts)
