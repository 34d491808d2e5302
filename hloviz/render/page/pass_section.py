"""The report's "XLA's passes" section: the filmstrip of a pass history and its credits.

Written from the same ``passes`` data block the explorer reads
(:func:`hloviz.render.page.explorer.steps.pass_steps`), so the section, the side panel and
``hloviz passes --json`` name the same pass for each fusion and folded constant.

Without the explorer's script the section is plain HTML: the strip of steps that changed the
module (index, pass, instructions and fusions after it, what changed), the incomplete parts, and
the credit tables. With it, a step's card is a link to ``#v=step:N``, which shows the module
after that step in the report's picture (the explorer opens views named in the URL fragment).
"""

from __future__ import annotations

from ..quoting import html_text as esc

__all__ = ["pass_section_html"]

_CSS = """
.hv-film { display: flex; gap: .4rem; overflow-x: auto; padding: .4rem 0; }
.hv-film > * { flex: 0 0 auto; max-width: 15rem; border: 1px solid #bdbdbd; border-radius: 4px; padding: .3rem .5rem;
  font-size: .8rem; color: inherit; background: #fafafa; text-decoration: none; }
.hv-film a.hv-drawn { background: #e3f2fd; } .hv-film a[aria-current] { outline: 2px solid #0d47a1; }
.hv-film b, .hv-film span { display: block; } .hv-film .hv-what { color: #616161; white-space: normal; }
"""


def _ref(ref: dict | None, note: str | None) -> str:
    if ref is None:
        return f'<span class="notes">{esc(note or "the snapshots cannot tell which pass")}</span>'
    during = f" ({esc(ref['during'])})" if ref.get("during") else ""
    pipeline = f" · {esc(ref['pipeline'])}" if ref.get("pipeline") else ""
    return f"{esc(ref['pass'])}{during} (#{ref['index']}){pipeline}"


def _card(st: dict) -> str:
    counts = (f"{st['instructions']} instructions · {st['fusions']} fusion{'s' if st['fusions'] != 1 else ''}"
              if st["instructions"] is not None else "unreadable")
    what = esc(st["problem"] or st["what"])
    inner = (f"<b>#{st['index']} {esc(st['pass'])}</b><span>{esc(counts)}</span>"
             f'<span class="hv-what">{what}</span>')
    if st["view"]:
        return (f'<a class="hv-drawn" href="#v={esc(st["view"])}" data-view="{esc(st["view"])}" '
                f'data-step="{st["index"]}" title="{esc(st["label"])}">{inner}</a>')
    return f'<span data-step="{st["index"]}" title="{esc(st["label"])}">{inner}</span>'


def pass_section_html(data: dict, *, explorer: bool = True) -> str:
    """The section (``data``: the ``passes`` block of the explorer's data); ``explorer``: the
    page has the explorer, so drawn steps can be shown in its picture."""
    steps = data["steps"]
    shown = [st for st in steps if st["changed"] or st["problem"]]
    parts = [f"<style>{_CSS}</style>",
             f'<h2 id="hv-passes">XLA\'s passes ({len(steps)} snapshots, {data["changed"]} changed the module)</h2>']
    intro = f"The pass history of {esc(data['module'])}"
    if data.get("source"):
        intro += f", read from {esc(data['source'])}"
    intro += (f": the steps that changed the module, in XLA's order. {data['pictures']} of them (blue) have a picture"
              " of the module after them" + (", shown in the picture above when clicked" if explorer else "") +
              "; in it, a click on a fusion or a folded constant names the pass that made it.")
    parts.append(f"<p>{intro}</p>")
    if explorer:
        parts.append('<nav class="hv-film" aria-label="pass history"><a href="#v=top" data-view="top">'
                     '<b>optimized</b><span>the module XLA runs</span></a>' + "".join(_card(st) for st in shown)
                     + "</nav>")
    else:
        parts.append('<nav class="hv-film" aria-label="pass history">' + "".join(
            _card({**st, "view": None}) for st in shown) + "</nav>")
    if data["problems"]:
        parts.append('<ul class="notes">' + "".join(f"<li>incomplete: {esc(p)}</li>" for p in data["problems"])
                     + "</ul>")
    if data["fusions"]:
        rows = "".join(f"<tr><td><code>{esc(f['name'])}</code></td><td>{esc(f['kind'])}</td>"
                       f"<td>{_ref(f['created_by'], f['note'])}</td></tr>" for f in data["fusions"])
        parts.append('<table class="passes" id="hv-pass-fusions"><thead><tr><th>fusion</th><th>kind</th>'
                     f"<th>made by (snapshot)</th></tr></thead><tbody>{rows}</tbody></table>")
    if data["folded"]:
        rows = "".join(f"<tr><td><code>{esc(f['constant'])}</code> = {esc(f['value'])}</td>"
                       f"<td>{_ref(f['pass'], f['note'])}</td></tr>" for f in data["folded"])
        parts.append('<table class="passes" id="hv-pass-folded"><thead><tr><th>folded constant</th>'
                     f"<th>written by (snapshot)</th></tr></thead><tbody>{rows}</tbody></table>")
    return "\n".join(parts)
