"""How big the explorer page is and how soon it is usable in Chromium, against the same page
without the explorer, measured in the same run.

Pages:

* the seed (``samples/captures/fused_additions``): ``hloviz show``'s report.html;
* ResNet50 (``samples/captures/resnet50``): ``hloviz show``'s report.html;
* the large module (``benchmarks/_data.py``'s ~310k-instruction transformer training step, one
  optimized module): ``hloviz render -o x.html``.

For each page, in a fresh headless Chromium tab (Playwright, the system Chromium):

* ``load``: navigation start → the load event (the whole file parsed, lazy blocks included);
* ``shown``: navigation start → the picture laid out (the script's ``hv-fitted`` mark, where
  it measures the laid-out picture to fit it);
* ``ready``: navigation start → the explorer's data decoded and its handlers live;
* ``search``: the first search's own time (a name typed; the script builds its lower-cased
  tables on this first query), plus the 60 ms the search box waits for typing to pause;
* ``usable`` = max(shown, ready) + search — the issue's "first picture shown, search answering".

The reference is the same report without the explorer (no script, no data), loaded the same
way: ``ratio`` = usable / reference load. Targets: the large module's page ≤ 25 MB and usable
≤ 3 s; ResNet50 usable ≤ 1 s. Each figure is the median of ``--repeat`` loads.

Run: ``python benchmarks/explorer_bench.py [--repeat 3] [--skip-large]``.
"""

from __future__ import annotations

import argparse
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hloviz import api  # noqa: E402
from hloviz.errors import HlovizError  # noqa: E402

CAPTURES = ROOT / "samples" / "captures"

_SEARCH = """async (query) => {
  const input = document.getElementById('hv-search'), results = document.getElementById('hv-results');
  const t0 = performance.now();
  const done = new Promise(resolve => new MutationObserver((_, obs) => {
    if (results.getAttribute('data-query') === query) { obs.disconnect(); resolve(); }
  }).observe(results, {attributes: true}));
  input.value = query;
  input.dispatchEvent(new Event('input'));
  await done;
  return {wall: performance.now() - t0, own: parseFloat(results.getAttribute('data-ms')),
          hits: results.querySelectorAll('button').length};
}"""


def static_copy(page: Path, out: Path) -> Path:
    """The same page without the explorer: its script and data blocks removed."""
    html = page.read_text(encoding="utf-8")
    html = re.sub(r"<script[^>]*>.*?</script>\n?", "", html, flags=re.DOTALL)
    out.write_text(html, encoding="utf-8")
    return out


def measure(browser, page: Path, query: str | None, repeat: int) -> dict:
    runs = []
    for _ in range(repeat):
        tab = browser.new_page(viewport={"width": 1400, "height": 1000})
        tab.goto(page.resolve().as_uri(), wait_until="load", timeout=120000)
        if query is not None:
            tab.wait_for_selector("#hv[data-ready]", state="attached", timeout=120000)
        timing = tab.evaluate("() => { const n = performance.getEntriesByType('navigation')[0];"
                              " const f = performance.getEntriesByName('hv-fitted')[0];"
                              " return {load: n.loadEventEnd, shown: f ? f.startTime : n.loadEventEnd, ready: parseFloat("
                              "(document.getElementById('hv') || {getAttribute: () => 'NaN'}).getAttribute('data-ready'))}; }")
        row = {"load": timing["load"], "shown": timing["shown"], "ready": timing["ready"]}
        if query is not None:
            found = tab.evaluate(_SEARCH, query)
            row.update(search=found["wall"], search_own=found["own"], hits=found["hits"])
            row["usable"] = max(row["shown"], row["ready"]) + found["wall"]
        runs.append(row)
        tab.close()
    return {k: statistics.median(r[k] for r in runs) for k in runs[0]}


def pages(work: Path, skip_large: bool) -> list[tuple[str, Path, str]]:
    out = []
    seed = api.show(str(CAPTURES / "fused_additions"), work / "seed").files["report"]
    out.append(("seed (fused_additions)", seed, "add"))
    try:
        resnet = api.show(str(CAPTURES / "resnet50"), work / "resnet50").files["report"]
    except HlovizError as err:  # one of the three pictures failed; the report is still written
        print(f"note: ResNet50: {err.args[0][:160]}", file=sys.stderr)
        resnet = work / "resnet50" / "report.html"
    if resnet.exists():
        out.append(("ResNet50", resnet, "conv4_block3"))
    if not skip_large:
        sys.path.insert(0, str(ROOT / "benchmarks"))
        from _data import ensure_large_module

        path = ensure_large_module()
        t = time.perf_counter()
        api.render(str(path), work / "large.html")
        print(f"note: render -o large.html took {time.perf_counter() - t:.1f} s", file=sys.stderr)
        out.append(("large module (~310k instructions)", work / "large.html", "dot_general"))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--skip-large", action="store_true")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        sys.exit("no chromium on PATH (scripts/system-deps.sh chromium installs it)")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        made = pages(work, args.skip_large)
        print(f"{'page':36} {'size':>9} {'load':>7} {'shown':>7} {'ready':>7} {'search':>8} {'usable':>7} "
              f"{'ref load':>8} {'ratio':>6}")
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox", "--disable-gpu",
                                                                         "--disable-dev-shm-usage"])
            for label, page, query in made:
                ref = measure(browser, static_copy(page, work / f"static-{page.parent.name}-{page.name}"), None,
                              args.repeat)
                got = measure(browser, page, query, args.repeat)
                size = page.stat().st_size / 1e6
                print(f"{label:36} {size:7.2f}MB {got['load']:6.0f}ms {got['shown']:6.0f}ms {got['ready']:6.0f}ms "
                      f"{got['search']:6.0f}ms {got['usable']:6.0f}ms {ref['load']:6.0f}ms "
                      f"{got['usable'] / max(ref['load'], 1):5.2f}x   ({got['hits']:.0f} results for {query!r}, "
                      f"search itself {got['search_own']:.0f} ms)")
            browser.close()


if __name__ == "__main__":
    main()
