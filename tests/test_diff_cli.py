"""``hloviz diff``: the three formats, ``--fail-on`` exit codes, pictures and bad input."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from . import run_cli
from .test_diff_match import FUSED_AFTER, FUSED_BEFORE

SAME_SIGNATURE_OTHER_LAYOUT = FUSED_AFTER.replace("%tanh.4 = f32[8]{0} tanh", "%tanh.4 = f32[8]{0} sine")


@pytest.fixture
def pair(tmp_path: Path) -> tuple[Path, Path]:
    a, b = tmp_path / "before.hlo", tmp_path / "after.hlo"
    a.write_text(FUSED_BEFORE)
    b.write_text(FUSED_AFTER)
    return a, b


def test_text_puts_the_summary_first(pair, capsys):
    code, out, _ = run_cli(["diff", str(pair[0]), str(pair[1])], capsys)
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == f"hloviz diff: {pair[0]} → {pair[1]}"
    assert lines[1] == "fewer kernels: 3 → 1"
    assert lines[3].split()[:5] == ["kernels", "3", "→", "1", "(−2):"]
    assert "2 instructions moved into fusions" in out
    assert out.index("Kernels that differ") > out.index("constants")
    assert "- n  negate f32[8] — now in fusion.7 (negate.2)" in out
    assert "~ n → negate.2  negate in fused_computation.7  fusion: unfused → in fusion.7" in out


def test_markdown_is_a_pr_comment(pair, capsys):
    code, out, _ = run_cli(["diff", str(pair[0]), str(pair[1]), "--format", "markdown"], capsys)
    assert code == 0
    assert out.startswith(f"### hloviz diff: `{pair[0]}` → `{pair[1]}`")
    assert "| kernels | 3 | 1 | −2 |" in out
    assert "<details><summary>Kernels that differ (3)</summary>" in out and out.count("</details>") >= 2


def test_json_has_the_contract_fields(pair, capsys):
    code, out, _ = run_cli(["diff", str(pair[0]), str(pair[1]), "--format", "json"], capsys)
    assert code == 0
    data = json.loads(out)
    assert set(data["summary"]) >= {"unchanged", "changed", "added", "removed"}
    assert data["kernels"]["before"] == 3 and data["kernels"]["after"] == 1
    # n and t moved into the fusion, the fusion changed; x, e and the fused parameter are unchanged.
    assert data["summary"] == {"unchanged": 3, "changed": 3, "added": 0, "removed": 0, "total": 6}
    assert data["stage"] == "post" and data["comparable"] is True and data["warnings"] == []
    assert {m["before"] for m in data["moved"]["into_fusions"]} == {"n", "t"}
    assert data["fail_on"] == {"checks": [], "failed": []}


@pytest.mark.parametrize("checks,code", [
    ([], 0),
    (["kernels-increased"], 0),
    (["kernels-decreased"], 1),
    (["any-change"], 1),
    (["kernels-increased", "fusions-changed"], 1),
    (["constants-changed"], 0),
])
def test_fail_on_sets_the_exit_code(pair, capsys, checks, code):
    argv = [str(pair[0]), str(pair[1])]
    for c in checks:
        argv += ["--fail-on", c]
    got, _, err = run_cli(["diff", *argv], capsys)
    assert got == code
    if code:
        assert "--fail-on" in err


def test_identical_inputs_never_fail(pair, capsys):
    code, out, _ = run_cli(["diff", str(pair[1]), str(pair[1]), "--fail-on", "any-change", "--fail-on", "kernels-changed"], capsys)
    assert code == 0 and "identical" in out


def test_an_unknown_check_is_an_error(pair, capsys):
    code, _, err = run_cli(["diff", str(pair[0]), str(pair[1]), "--fail-on", "kernels-grew"], capsys)
    assert code == 2 and "unknown --fail-on check 'kernels-grew'" in err and "kernels-increased" in err


def test_a_parse_error_exits_2_with_file_line_column(pair, tmp_path, capsys):
    bad = tmp_path / "bad.hlo"
    bad.write_text("HloModule m\n\nENTRY %e () -> f32[] {\n  ROOT %c = f32[] constant(\n}\n")
    code, out, err = run_cli(["diff", str(pair[0]), str(bad), "--fail-on", "any-change"], capsys)
    assert code == 2 and out == ""
    assert f"{bad}:5:1: error:" in err and "Traceback" not in err


def test_a_missing_file_exits_2(pair, capsys):
    code, _, err = run_cli(["diff", str(pair[0]), "no/such/file.hlo"], capsys)
    assert code == 2 and "no/such/file.hlo" in err


def test_different_signatures_warn_but_still_diff(pair, tmp_path, capsys):
    other = tmp_path / "other.hlo"
    other.write_text(FUSED_AFTER.replace("f32[8]", "f32[16]"))
    code, out, err = run_cli(["diff", str(pair[1]), str(other), "--fail-on", "not-comparable"], capsys)
    assert code == 1
    assert "warning: the entry signatures differ" in err and "warning: the entry signatures differ" in out
    assert "instructions  0 unchanged, 6 changed, 0 added, 0 removed" in out
    code, out, _ = run_cli(["diff", str(pair[1]), str(other), "--format", "json"], capsys)
    assert code == 0 and json.loads(out)["comparable"] is False


def test_stage_picks_the_module_of_a_capture_folder(pair, tmp_path, capsys):
    for name, post in (("old", FUSED_BEFORE), ("new", FUSED_AFTER)):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "pre.hlo").write_text(FUSED_BEFORE)
        (folder / "post.hlo").write_text(post)
        (folder / "capture.json").write_text(json.dumps({"source": "live", "framework": "tensorflow",
                                                         "tensorflow": "2.99.0" if name == "new" else "2.98.0"}))
    code, out, _ = run_cli(["diff", str(tmp_path / "old"), str(tmp_path / "new"), "--format", "json"], capsys)
    data = json.loads(out)
    assert code == 0 and data["kernels"] == {**data["kernels"], "before": 3, "after": 1}
    assert data["before"]["label"].endswith("old (TF 2.98.0)") and data["after"]["tensorflow"] == "2.99.0"
    code, out, _ = run_cli(["diff", str(tmp_path / "old"), str(tmp_path / "new"), "--stage", "pre", "--format", "json"], capsys)
    assert code == 0 and json.loads(out)["identical"] is True


def test_a_bad_stage_or_format_exits_2(pair, capsys):
    assert run_cli(["diff", str(pair[0]), str(pair[1]), "--stage", "middle"], capsys)[0] == 2
    assert run_cli(["diff", str(pair[0]), str(pair[1]), "--format", "yaml"], capsys)[0] == 2


def test_help_documents_the_exit_codes(capsys):
    code, out, _ = run_cli(["diff", "--help"], capsys)
    assert code == 0
    flat = re.sub(r"-\s+", "-", " ".join(out.split()))  # undo line wrapping inside hyphenated words
    assert "Exit codes: 0" in flat and "1 a --fail-on check matched" in flat and "2 an error" in flat
    for check in ("kernels-increased", "any-change", "fusions-changed"):
        assert check in flat


def test_dot_picture_is_written_without_graphviz(pair, tmp_path, capsys):
    out_path = tmp_path / "diff.dot"
    code, _, err = run_cli(["diff", str(pair[0]), str(pair[1]), "-o", str(out_path)], capsys)
    assert code == 0 and f"wrote {out_path}" in err
    dot = out_path.read_text()
    assert dot.startswith("digraph") and "before: " in dot and "after: " in dot
    assert "#ef9a9a" in dot and "#ffd54f" in dot  # removed kernels red, changed amber
    assert "#1" in dot


@pytest.mark.requires_dot
@pytest.mark.parametrize("suffix", [".svg", ".html"])
def test_svg_and_html_pictures(pair, tmp_path, capsys, suffix):
    out_path = tmp_path / f"diff{suffix}"
    code, _, _ = run_cli(["diff", str(pair[0]), str(pair[1]), "-o", str(out_path)], capsys)
    assert code == 0
    text = out_path.read_text()
    assert "<svg" in text and "fusion.7" in text


@pytest.mark.parametrize("suffix", [".svg", ".png", ".html"])
def test_without_graphviz_the_picture_s_dot_text_is_written_beside_it(pair, tmp_path, monkeypatch, capsys, suffix):
    """README, Safety: "`render -o FILE` and `diff -o FILE`: that file, and `FILE.dot` beside it
    when Graphviz fails" — diff wrote nothing before."""
    empty = tmp_path / "no-graphviz"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.delenv("HLOVIZ_DOT", raising=False)
    out_path = tmp_path / f"y{suffix}"
    code, out, err = run_cli(["diff", str(pair[0]), str(pair[1]), "-o", str(out_path)], capsys)
    assert code == 2 and "apt-get install graphviz" in err and f"the DOT text is in {tmp_path / 'y.dot'}" in err
    assert out.startswith("hloviz diff: "), "the report is still printed"
    assert not out_path.exists()
    dot = (tmp_path / "y.dot").read_text()
    assert dot.startswith("digraph hloviz {") and "before: " in dot and "after: " in dot


def test_without_graphviz_a_dot_file_hloviz_did_not_write_is_kept(pair, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PATH", str(tmp_path / "nothing-here"))
    monkeypatch.delenv("HLOVIZ_DOT", raising=False)
    mine = tmp_path / "y.dot"
    mine.write_text("digraph G { mine }\n")
    code, _, err = run_cli(["diff", str(pair[0]), str(pair[1]), "-o", str(tmp_path / "y.svg")], capsys)
    assert code == 2 and "hloviz did not write it" in err
    assert mine.read_text() == "digraph G { mine }\n"


def test_an_unknown_picture_suffix_exits_2_before_any_work(pair, tmp_path, capsys):
    code, out, err = run_cli(["diff", str(pair[0]), str(pair[1]), "-o", str(tmp_path / "diff.bmp")], capsys)
    assert code == 2 and out == "" and "picture format" in err


def test_unoptimized_modules_count_work_ops_not_kernels(tmp_path, capsys):
    a, b = tmp_path / "a.hlo", tmp_path / "b.hlo"
    a.write_text("HloModule a\nENTRY %e (x: f32[4]) -> f32[4] {\n  %x = f32[4]{0} parameter(0)\n"
                 "  ROOT %n = f32[4]{0} negate(%x)\n}\n")
    b.write_text("HloModule b\nENTRY %e (x: f32[4]) -> f32[4] {\n  %x = f32[4]{0} parameter(0)\n"
                 "  %n = f32[4]{0} negate(%x)\n  ROOT %t = f32[4]{0} tanh(%n)\n}\n")
    code, out, _ = run_cli(["diff", str(a), str(b)], capsys)
    assert code == 0
    assert "note: neither module is optimized" in out and "more instructions doing work: 1 → 2" in out
    code, out, _ = run_cli(["diff", str(a), str(b), "--format", "json"], capsys)
    data = json.loads(out)
    assert data["optimized"] is False and (data["kernels"]["before"], data["kernels"]["after"]) == (1, 2)
