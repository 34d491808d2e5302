"""Odd option values are taken or refused cleanly, never an internal error: a ``--timeout`` of
any size (``1e7``: past what the system's waits take, 2^31-1 ms, it was an OverflowError) is
capped at a day; ``--width`` / ``--max-height`` and the docs' whole-number options take ASCII
digits only (``١٠٠px`` is no CSS length a browser reads)."""

from __future__ import annotations

import pytest

from hloviz.docs.pictures import parse_options
from hloviz.errors import InputError

from . import hostile_inputs as H
from . import run_cli

pytestmark = pytest.mark.requires_dot


@pytest.mark.parametrize("value", ["1e7", "1e300", "99999999999"])
def test_show_takes_a_huge_timeout(tmp_path, capsys, value):
    code, _out, err = run_cli(["show", str(H.SEED), "-o", str(tmp_path / "out"), "--timeout", value], capsys)
    assert code == 0, err
    assert "internal error" not in err and "Overflow" not in err
    assert (tmp_path / "out" / "report.html").is_file()


@pytest.mark.parametrize("command", ["render", "diff"])
def test_render_and_diff_take_a_huge_timeout(tmp_path, capsys, command):
    args = {"render": ["render", str(H.SEED), "-o", str(tmp_path / "x.svg")],
            "diff": ["diff", str(H.SEED), str(H.SEED), "-o", str(tmp_path / "d.svg")]}[command]
    code, _, err = run_cli([*args, "--timeout", "1e7"], capsys)
    assert code == 0, err
    assert "internal error" not in err


def test_the_api_takes_a_huge_timeout(tmp_path):
    from hloviz import api

    result = api.show(str(H.SEED), tmp_path / "out", timeout=1e300)
    assert set(result.files) >= {"report", "side-by-side"}


@pytest.mark.parametrize("value", ["nan", "inf", "-1"])
def test_passes_refuses_a_timeout_that_is_no_positive_number(tmp_path, capsys, value):
    code, _, err = run_cli(["passes", str(H.SEED), "-o", str(tmp_path / "film.html"), "--timeout", value], capsys)
    assert code == 2, err
    assert "--timeout" in err and "Traceback" not in err


@pytest.mark.parametrize("option", ["--width", "--max-height"])
@pytest.mark.parametrize("value", ["١٠٠px", "１００px", "٤٠em", "1" * 400 + "px"])
def test_a_css_length_takes_ascii_digits_only(tmp_path, capsys, option, value):
    code, _, err = run_cli(["render", str(H.SEED), "-o", str(tmp_path / "x.svg"), option, value], capsys)
    assert code == 2, err
    assert option in err and "CSS length" in err and "Traceback" not in err
    assert len(err) < 600, "the value is cut short in the message"
    assert not (tmp_path / "x.svg").exists()


@pytest.mark.parametrize("option, value", [("width", "١٠٠px"), ("budget", "١٠٠"), ("depth", "٣"),
                                           ("timeout", "٦٠"), ("aspect", "١.٥"), ("aspect", "nan"),
                                           ("timeout", "9" * 400), ("budget", "1e400")])
def test_docs_options_take_ascii_numbers_only(option, value):
    if option == "width":
        from hloviz.render.page.page import PageOptions

        with pytest.raises(InputError, match="--width"):
            PageOptions(width=parse_options("x", {option: value}).width)
        return
    with pytest.raises(InputError, match=f":{option}:"):
        parse_options("x", {option: value})


def test_a_huge_docs_timeout_is_capped_not_an_overflow():
    pic = parse_options("x", {"timeout": "999999999"})
    assert pic.timeout <= 86400, "at most a day, as --timeout"
    assert float(pic.timeout) == pic.timeout
