"""The explorer's first view of each saved capture: how many boxes it shows, whether it fits the
screen, and what finding it costs.

For each capture with both stages, this draws what ``hloviz show`` draws as its side-by-side
picture (``pair_picture``, unwrapped, as the explorer shows it) — the reference, timed — and
then the explorer's first view (:func:`hloviz.render.page.explorer.first_view`: the finest cut that
fits :class:`~hloviz.render.page.explorer.Screen`), timed the same way in the same process, right
after (``--seconds``: the search's time limit, as ``show`` gives it). The whole picture is drawn
once untimed first, so both sides find the modules equally warm (attributes the parser reads on
first use, memoised op names): timed cold, the reference paid what the first view's redraws then
found done. It prints the boxes per column of both, the first view's size in pixels at the
screen's text scale, how many redraws the search made, and the first view's time as a ratio
to the whole picture's.

``--html MODEL ...`` also times, in fresh processes and alternating, ``hloviz render MODEL
--stage both -o x.html`` (the explorer page: first view, blocks opened in place, layers,
fusions) against ``-o x.svg`` of the same capture (the same picture without the page), and
prints the page's size; ``--reference DIR`` adds the page another checkout of hloviz writes
(before a change: ``git archive main | tar -x -C DIR``), timed the same way in the same rounds,
and ``same``: in how many rounds the two pages were the same bytes; ``cpu s``: the CPU time
of the page's build (hloviz and its ``dot`` runs, all cores), steadier than wall time where
other jobs share the machine.
The explorer's extra pictures stop at its deadlines (``Bounds.seconds``), so on a busy machine
a page holds fewer of them and its time says as much about the machine as about the code.

Run: ``python benchmarks/first_view_bench.py [--model NAME ...] [--html NAME ...] [--repeat N] [--reference DIR]``.
The first views before a change: copy this script into the other checkout's ``benchmarks/`` and
run it there (it reads that checkout's hloviz).
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from inspect import signature
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hloviz.analysis import analyze  # noqa: E402
from hloviz.capture import load_target  # noqa: E402
from hloviz.render.page.explorer import Screen, first_view  # noqa: E402
from hloviz.render.pictures import pair_picture  # noqa: E402

CAPTURES = ROOT / "samples" / "captures"


def captures() -> list[str]:
    out = []
    for d in sorted(CAPTURES.iterdir()):
        names = {p.name for p in d.iterdir()} if d.is_dir() else set()
        if {"pre.hlo", "pre.hlo.gz"} & names and {"post.hlo", "post.hlo.gz"} & names:
            out.append(d.name)
    return out


def pixels(svg: str, screen: Screen) -> tuple[int, int]:
    m = re.search(r'<svg[^>]*\bwidth="([\d.]+)pt"[^>]*\bheight="([\d.]+)pt"', svg)
    if m is None:
        return 0, 0
    px = 4 / 3 * screen.scale
    return round(float(m.group(1)) * px), round(float(m.group(2)) * px)


def first_views(models: list[str], seconds: float) -> None:
    screen = Screen()
    print(f"screen: {screen.width}x{screen.height} px ({getattr(screen, 'pages', 1):g} tall) at text scale {screen.scale:g}, "
          f"<= {screen.nodes} boxes a column")
    print(f"{'capture':28} {'whole':>9} {'first':>9} {'px (w x h)':>12} {'fits':>5} {'redraws':>7} "
          f"{'whole s':>8} {'first s':>8} {'ratio':>6}")
    for name in models:
        cap = load_target(str(CAPTURES / name))
        pre, post = cap.pre_module(), cap.post_module()
        assert pre is not None and post is not None
        analysis = analyze(pre, post, info=cap.info)
        pair_picture(pre, post, analysis, info=cap.info, title=name)  # warm-up, untimed (see the docstring)
        t0 = time.perf_counter()
        whole = pair_picture(pre, post, analysis, info=cap.info, title=name)
        t_whole = time.perf_counter() - t0
        options = whole.views[0][1].options
        assert options is not None
        redraws = 0

        def redraw(budget: int, wrap=None, options=options, pre=pre, post=post, analysis=analysis, cap=cap,
                   name=name, drawn_wrap=whole.wrap):
            nonlocal redraws
            redraws += 1
            return pair_picture(pre, post, analysis, options=replace(options, budget=budget), info=cap.info,
                                title=name, wrap=wrap if wrap is not None else drawn_wrap)

        t0 = time.perf_counter()
        # an older first_view (the reference checkout's) takes redraw(budget) and no seconds
        shown = first_view(whole, redraw, screen, seconds) if "seconds" in signature(first_view).parameters \
            else first_view(whole, redraw, screen)
        t_first = time.perf_counter() - t0
        svg = (shown.svg or b"").decode("utf-8")
        w, h = pixels(svg, screen)
        fits = w <= screen.width and h <= screen.height * getattr(screen, "pages", 1)  # tall: read downwards
        cols = "/".join(str(v.nodes) for _, v in whole.views[:2])
        first = "/".join(str(v.nodes) for _, v in shown.views[:2])
        print(f"{name:28} {cols:>9} {first:>9} {f'{w}x{h}':>12} {'yes' if fits else 'no':>5} {redraws:>7} "
              f"{t_whole:8.2f} {t_first:8.2f} {t_first / max(t_whole, 1e-9):6.2f}", flush=True)


def _render(root: Path, name: str, out: Path) -> tuple[float, float]:
    """Seconds for ``hloviz render NAME --stage both -o OUT`` with the hloviz of ``root``, in a
    fresh process: wall time, and CPU time (the process's and its ``dot`` runs', on every core:
    on a shared, busy machine it moves far less than wall time)."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "hloviz", "render", str(CAPTURES / name), "--stage", "both", "-o", str(out)],
                   check=True, capture_output=True, cwd=root, env=env)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def pages(models: list[str], repeat: int, reference: Path | None) -> None:
    """The explorer page (``-o x.html``) against the same picture alone (``-o x.svg``), and,
    with ``reference``, against the page another checkout of hloviz writes (its own first view
    and expansions), all alternating, each in a fresh process."""
    runs = [("html", ROOT, "html"), ("svg", ROOT, "svg")] + ([("ref", reference, "html")] if reference else [])
    print(f"\n{'capture':20} {'html MB':>8} {'html s':>7} {'svg s':>7} {'ratio':>6}"
          + (f" {'ref MB':>7} {'ref s':>7} {'/ref':>6} same {'cpu s':>6} {'ref cpu':>7} {'/ref':>6}" if reference else "")
          + f"   (best of {repeat}, alternating)")
    with tempfile.TemporaryDirectory() as tmp:
        for name in models:
            times: dict[str, list[float]] = {k: [] for k, _, _ in runs}
            cpus: dict[str, list[float]] = {k: [] for k, _, _ in runs}
            sizes: dict[str, int] = {}
            same: list[bool] = []  # each round: this checkout's page byte for byte the reference's
            for r in range(repeat):
                for kind, root, fmt in (runs if r % 2 == 0 else runs[::-1]):
                    out = Path(tmp) / f"{name}-{kind}.{fmt}"
                    wall, cpu = _render(root, name, out)
                    times[kind].append(wall)
                    cpus[kind].append(cpu)
                    sizes[kind] = out.stat().st_size
                if reference:
                    same.append((Path(tmp) / f"{name}-html.html").read_bytes()
                                == (Path(tmp) / f"{name}-ref.html").read_bytes())
            html, svg = min(times["html"]), min(times["svg"])
            line = f"{name:20} {sizes['html'] / 1e6:8.2f} {html:7.2f} {svg:7.2f} {html / svg:6.2f}"
            if reference:
                ref = min(times["ref"])
                cpu, ref_cpu = min(cpus["html"]), min(cpus["ref"])
                line += (f" {sizes['ref'] / 1e6:7.2f} {ref:7.2f} {html / ref:6.2f} {sum(same)}/{len(same)}"
                         f" {cpu:6.2f} {ref_cpu:7.2f} {cpu / ref_cpu:6.2f}")
            print(line, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", action="extend", nargs="*", default=None,
                        help="captures, after one flag or each after its own (default: every one with both stages)")
    parser.add_argument("--html", nargs="*", default=[], help="captures whose explorer page to time and size")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--reference", type=Path, default=None,
                        help="another hloviz checkout whose page --html times too (git archive main | tar -x -C DIR)")
    parser.add_argument("--seconds", type=float, default=10.0, help="the search's time (show's default: 10)")
    args = parser.parse_args()
    print(" ".join(["python", *sys.argv]))
    if args.model is None or args.model:
        first_views(args.model or captures(), args.seconds)
    if args.html:
        pages(args.html, args.repeat, args.reference)


if __name__ == "__main__":
    main()
