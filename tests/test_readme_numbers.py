"""The docs' glossary, verdict table and stats example (docs/stats.md) are what the code says and
prints, and the benchmark figures quoted anywhere in the docs (README, docs/, benchmarks/results/*.md)
are what a recorded run of the benchmark printed."""

from __future__ import annotations

import io
import re
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from hloviz import api
from hloviz.analysis.glossary import markdown
from hloviz.cli import main

from . import present
from .docs_pages import everything, page

ROOT = Path(__file__).resolve().parent.parent
STATS = page("stats")


def _after(marker: str) -> str:
    return STATS[STATS.index(marker):]


def test_the_glossary_is_the_one_in_code():
    section = _after("<!-- glossary:")
    table = section.split("\n", 1)[1]
    assert table.startswith(markdown() + "\n")


def _verdict_rows() -> list[tuple[str, str]]:
    section = _after("<!-- stats-verdicts:")
    table = section.split("\n\n", 1)[0]
    rows = re.findall(r"^\| `([^`]+)` \| `(.+)` \|$", table, re.MULTILINE)
    assert len(rows) >= 8
    return rows


CAPTURE_ROWS = [r for r in _verdict_rows() if ":" not in r[0]]
LIVE_ROWS = [r for r in _verdict_rows() if ":" in r[0]]


@pytest.mark.parametrize("target,verdict", CAPTURE_ROWS, ids=[r[0] for r in CAPTURE_ROWS])
def test_the_verdicts_of_saved_captures_are_what_stats_prints(target, verdict, monkeypatch):
    monkeypatch.chdir(ROOT)
    assert api.stats(target).analysis.verdict == verdict


@pytest.mark.requires_tf
@pytest.mark.slow
def test_the_verdicts_of_the_samples_are_what_stats_prints(monkeypatch):
    monkeypatch.chdir(ROOT)
    for target, verdict in LIVE_ROWS:
        assert api.stats(target, device="CPU:0", notify=lambda _: None).analysis.verdict == verdict, target


def test_the_stats_example_is_what_the_command_prints(monkeypatch):
    monkeypatch.chdir(ROOT)
    section = _after("<!-- stats-sample-output:")
    command = re.search(r"\(`(hloviz stats [^`]+)`\)", STATS[:STATS.index("<!-- stats-sample-output:")][-400:])
    shown = present(re.search(r"```text\n(.*?)```\n", section, re.DOTALL)).group(1)
    out = io.StringIO()
    with redirect_stdout(out):
        main(present(command, "the stats command before the sample").group(1).split()[1:])
    printed = [line.rstrip() for line in out.getvalue().splitlines()]
    lines = shown.splitlines()
    start = printed.index(lines[0])  # the status table, as printed, and the verdict, the last lines
    table = lines[:-2]
    assert printed[start:start + len(table)] == table
    assert printed[-2:] == lines[-2:]


# --- benchmark figures -------------------------------------------------------------------------
# A paragraph of the docs (README, docs/, benchmarks/results/*.md) that quotes a benchmark's figures is marked with the file holding the
# output of the run they come from (benchmarks/results/, the command line and the machine at its
# top): every figure it quotes must be one that run printed, so none is typed in, rounded
# favourably or left from an older run.
BENCH_PARAGRAPHS = [found for text in everything().values()
                    for found in re.findall(r"<!-- bench-figures: (\S+) -->\n(.+?)(?:\n\n|\Z)", text, re.DOTALL)]
_FIGURE = re.compile(r"(?<![\w.])\d+\.\d+(?![\w.])")


def test_the_benchmark_quotes_have_recorded_runs():
    quoted = {path for path, _ in BENCH_PARAGRAPHS}
    assert {"benchmarks/results/parse_bench.txt", "benchmarks/results/capture_bench.txt",
            "benchmarks/results/versions_bench.txt", "benchmarks/results/picture_bench.txt"} <= quoted
    for path in quoted:
        first = (ROOT / path).read_text(encoding="utf-8").splitlines()[0]
        assert first.startswith("# python benchmarks/"), f"{path} does not start with the command that made it"


@pytest.mark.parametrize("path,paragraph", BENCH_PARAGRAPHS, ids=[p for p, _ in BENCH_PARAGRAPHS])
def test_every_benchmark_figure_in_the_docs_is_one_the_run_printed(path, paragraph):
    recorded = set(_FIGURE.findall((ROOT / path).read_text(encoding="utf-8")))
    figures = _FIGURE.findall(paragraph)
    assert len(figures) >= 3, f"no figures found after the {path} marker"
    missing = [f for f in figures if f not in recorded]
    assert not missing, f"the docs quote {missing}, which {path} does not hold"
