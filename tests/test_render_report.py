"""The HTML report: its content, and that a real headless Chromium loads it with the picture
visible and no console errors."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import zlib
from pathlib import Path

import pytest

import hloviz
from hloviz import api
from hloviz.analysis import analyze
from hloviz.render.page.html import CSP
from hloviz.render.page.report import fold_rows, kernel_rows, summary_lines

ROOT = Path(__file__).resolve().parent.parent
SEED = ROOT / "samples" / "captures" / "fused_additions"


def test_kernel_and_fold_rows_of_a_folding_module():
    pre = hloviz.parse("""HloModule c
ENTRY %e (x: f32[4]) -> f32[4] {
  %x = f32[4]{0} parameter(0)
  %one = f32[] constant(1), metadata={op_name="one"}
  %b1 = f32[4]{0} broadcast(%one), dimensions={}, metadata={op_name="add"}
  %a1 = f32[4]{0} add(%x, %b1), metadata={op_name="add"}
  %b2 = f32[4]{0} broadcast(%one), dimensions={}, metadata={op_name="add_1"}
  ROOT %a2 = f32[4]{0} add(%a1, %b2), metadata={op_name="add_1"}
}
""")
    post = hloviz.parse("""HloModule c, is_scheduled=true
%fc (p: f32[4]) -> f32[4] {
  %p = f32[4]{0} parameter(0)
  %two = f32[] constant(2)
  %b = f32[4]{0} broadcast(%two), dimensions={}
  ROOT %a = f32[4]{0} add(%p, %b), metadata={op_name="add_1"}
}
ENTRY %e (x: f32[4]) -> f32[4] {
  %x = f32[4]{0} parameter(0)
  ROOT %f = f32[4]{0} fusion(%x), kind=kLoop, calls=%fc, metadata={op_name="add_1"}
}
""")
    a = analyze(pre, post)
    ks = kernel_rows(a)
    assert [(k.number, k.name) for k in ks] == [(1, "f")]
    folds = fold_rows(a)
    assert folds and folds[0].constant == "two" and folds[0].value == "2"
    lines = summary_lines(a)
    assert lines[0] == a.verdict and "  #1 f: kLoop fusion: add, broadcast (2 instructions)" in lines
    assert "  two = 2 (by XLA; from 1 op: add)" in lines
    # and the side-by-side marks: the folded add says where it went, the constant is highlighted
    from hloviz.render.layout.sidebyside import side_by_side

    sbs = side_by_side(pre, post, a)
    assert "folded → two = 2" in sbs.dot and "folded by XLA from 1 op" in sbs.dot and 'BGCOLOR="#ffd54f"' in sbs.dot


# --- a real browser ---------------------------------------------------------------------------

CHECK = """<script>
(function () {
  var problems = [];
  window.addEventListener("error", function (e) { problems.push("error: " + (e.message || e.type)); }, true);
  window.addEventListener("unhandledrejection", function (e) { problems.push("rejection: " + e.reason); });
  document.addEventListener("securitypolicyviolation", function (e) {
    problems.push("csp: " + e.violatedDirective + " " + e.blockedURI); });
  var original = console.error;
  console.error = function () { problems.push("console.error: " + Array.prototype.join.call(arguments, " "));
                                original.apply(console, arguments); };
  window.addEventListener("load", function () {
    setTimeout(function () {
      var svg = document.querySelector(".picture svg");
      var out = {problems: problems, svg: false};
      if (svg) {
        var box = svg.getBoundingClientRect(), style = getComputedStyle(svg);
        out.svg = true; out.width = box.width; out.height = box.height;
        out.visible = style.visibility === "visible" && style.display !== "none" && box.width > 50 && box.height > 50;
        out.texts = svg.querySelectorAll("text").length;
        out.nodes = svg.querySelectorAll("g.node").length;
      }
      out.tables = document.querySelectorAll("table").length;
      var pre = document.createElement("pre");
      pre.id = "hloviz-check";
      pre.textContent = JSON.stringify(out);
      document.body.appendChild(pre);
    }, 50);
  });
})();
</script>"""


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    pytest.skip("no chromium")


def _run_chromium(page: Path, profile: Path, *extra: str) -> subprocess.CompletedProcess:
    argv = [_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            f"--user-data-dir={profile}", "--virtual-time-budget=10000", *extra, page.resolve().as_uri()]
    return subprocess.run(argv, capture_output=True, text=True, timeout=120)


def browser_check(report: Path, tmp: Path) -> dict:
    """Load a copy of ``report`` with a checking script injected (its CSP widened to allow just
    that script) and read back what the script found."""
    html = report.read_text(encoding="utf-8")
    assert CSP in html
    widened = html.replace(CSP, CSP + "; script-src 'unsafe-inline'", 1)
    probe = tmp / "probe.html"
    probe.write_text(widened.replace("<head>", "<head>" + CHECK, 1), encoding="utf-8")
    result = _run_chromium(probe, tmp / "profile-probe", "--dump-dom")
    m = re.search(r'<pre id="hloviz-check">(.*?)</pre>', result.stdout, re.DOTALL)
    assert m, f"the check did not run; chromium said:\n{result.stderr[-2000:]}"
    return json.loads(m.group(1).replace("&quot;", '"').replace("&lt;", "<").replace("&gt;", ">")
                      .replace("&amp;", "&"))


def console_messages(page: Path, tmp: Path) -> list[str]:
    """Console lines Chromium logs for the page as it is (no script injected)."""
    result = _run_chromium(page, tmp / "profile-log", "--enable-logging=stderr", "--v=0", "--dump-dom")
    assert "<svg" in result.stdout or "<html" in result.stdout, result.stderr[-2000:]
    return [line for line in result.stderr.splitlines() if "CONSOLE" in line]


def _png_colours(png: bytes) -> int:
    """How many distinct byte values the image data holds: a blank page has very few."""
    assert png.startswith(b"\x89PNG")
    data, pos = b"", 8
    while pos < len(png):
        length = int.from_bytes(png[pos:pos + 4], "big")
        kind = png[pos + 4:pos + 8]
        if kind == b"IDAT":
            data += png[pos + 8:pos + 8 + length]
        pos += 12 + length
    return len(set(zlib.decompress(data)))


@pytest.mark.requires_chromium
@pytest.mark.requires_dot
@pytest.mark.slow
def test_report_loads_in_chromium_with_the_picture_visible_and_no_errors(tmp_path):
    result = api.show(str(SEED), tmp_path / "out")
    report = result.files["report"]
    found = browser_check(report, tmp_path)
    assert found["problems"] == []
    assert found["svg"] and found["visible"], found
    assert found["nodes"] >= 6 and found["texts"] > 20 and found["tables"] >= 2
    assert console_messages(report, tmp_path) == []
    shot = tmp_path / "shot.png"
    run = _run_chromium(report, tmp_path / "profile-shot", f"--screenshot={shot}", "--window-size=1200,1600")
    assert shot.exists(), run.stderr[-2000:]
    assert _png_colours(shot.read_bytes()) > 40


@pytest.mark.requires_chromium
def test_the_browser_check_catches_errors_and_outside_fetches(tmp_path):
    """The harness itself: a page with a script error and an outside image must fail it."""
    bad = tmp_path / "bad.html"
    bad.write_text(f"""<!DOCTYPE html><html><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{CSP}"></head>
<body><div class="picture"><svg width="100" height="100"><rect width="100" height="100"/></svg></div>
<img src="https://example.invalid/x.png"><script>console.error("boom"); undefinedFunction();</script>
</body></html>""")
    found = browser_check(bad, tmp_path)
    joined = " ".join(found["problems"])
    assert "csp:" in joined and "console.error: boom" in joined and "undefinedFunction" in joined
    assert console_messages(bad, tmp_path)  # Chromium logs the refused load too
