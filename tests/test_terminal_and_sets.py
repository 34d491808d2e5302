"""Smaller hardening: input text cannot drive the terminal (ESC sequences, bidi overrides) in
error excerpts, tables or markdown; and an interrupted ``show`` never leaves a mixed set."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from hloviz import api
from hloviz.errors import visible
from hloviz.ir import escape_string
from hloviz.render.page import files as files_mod

from . import run_cli as _run

ROOT = Path(__file__).resolve().parent.parent
SEED = ROOT / "samples" / "captures" / "fused_additions"

ESC_TITLE = "\x1b]0;pwned\x07"  # sets the terminal's title
RLO = "\u202e"  # right-to-left override: "exe.gnp" reads as "png.exe"


def _clean(text: str) -> None:
    assert "\x1b" not in text and RLO not in text and "\x07" not in text, repr(text[:400])


def test_visible_escapes_what_a_terminal_acts_on_and_keeps_lines():
    assert visible(f"a{ESC_TITLE}b\n\tc{RLO}d") == "a\\x1b]0;pwned\\x07b\n\tc\\u202ed"
    assert visible("plain ✓ text") == "plain ✓ text"


def test_a_parse_error_excerpt_shows_escapes_with_the_caret_in_place(tmp_path, capsys):
    bad = tmp_path / "bad.hlo"
    bad.write_text(f"HloModule m\n\nENTRY %e () -> f32[] {{\n  {ESC_TITLE}{RLO} %x = f32[] oops\n}}\n")
    code, _, err = _run(["stats", str(bad)], capsys)
    assert code == 2
    _clean(err)
    lines = err.splitlines()
    excerpt = next(i for i, line in enumerate(lines) if "\\x1b" in line)
    caret = lines[excerpt + 1].index("^")
    assert lines[excerpt][caret:].startswith("\\x1b")  # the caret still points at the bad character


def _module(target: str) -> str:
    return (f"HloModule m, is_scheduled=true\n\nENTRY %main (p: f32[4]) -> f32[4] {{\n"
            f"  %p = f32[4]{{0}} parameter(0)\n"
            f'  ROOT %c = f32[4]{{0}} custom-call(%p), custom_call_target="{escape_string(target)}", '
            f'metadata={{op_type="{escape_string(RLO + "Op")}" op_name="{escape_string("n" + ESC_TITLE)}"}}\n}}\n')


def test_tables_and_markdown_never_carry_raw_controls_or_bidi_overrides(tmp_path, capsys):
    a, b = tmp_path / "a.hlo", tmp_path / "b.hlo"
    a.write_text(_module(f"evil{RLO}gnp.exe{ESC_TITLE}"))
    b.write_text(_module(f"other{RLO}[bold]x[/bold]"))
    code, out, err = _run(["stats", str(a)], capsys)
    assert code == 0, err
    _clean(out + err)
    assert "evil\\u202egnp.exe\\x1b" in out
    code, out, err = _run(["stats", str(b)], capsys)
    assert "[bold]x[/bold]" in out, "rich markup in names stays text"
    for fmt in ("markdown", "text"):
        code, out, err = _run(["diff", str(a), str(b), "--format", fmt], capsys)
        assert code == 0, err
        _clean(out + err)


@pytest.mark.requires_dot
def test_a_ctrl_c_while_show_switches_its_files_lands_after_the_whole_set(tmp_path, monkeypatch):
    out = tmp_path / "out"
    api.show(str(SEED), out)
    api.show(None, out, post=str(SEED / "post.hlo"))  # a different set: post.svg and report.html
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    real_replace = os.replace
    calls = {"n": 0}

    def replace_then_ctrl_c(src, dst):
        calls["n"] += 1
        if calls["n"] == 1:
            os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C arrives while the first file lands
        return real_replace(src, dst)

    monkeypatch.setattr(files_mod.os, "replace", replace_then_ctrl_c)
    with pytest.raises(KeyboardInterrupt):
        api.show(str(SEED), out)
    monkeypatch.undo()
    after = {p.name: p.read_bytes() for p in out.iterdir()}
    assert calls["n"] >= 4, "every file of the set was switched before the Ctrl-C was delivered"
    assert sorted(after) == sorted([".hloviz-report.json", "report.html", "pre.svg", "post.svg", "side-by-side.svg"])
    assert after["report.html"] != before["report.html"]
    assert not [n for n in after if n.endswith(".tmp")]
