"""Typed boundaries: capture.json as a checked CaptureInfo, Capture's public accessors, the
error that carries the DOT text, and option objects for api.show/api.render."""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import fields
from pathlib import Path

import pytest

import hloviz
from hloviz import api
from hloviz.api.options import CaptureOptions, DrawOptions, FitOptions
from hloviz.capture import Capture, CaptureInfo, SourceLocation, load_target
from hloviz.capture.info import _CHECKS
from hloviz.cli import main
from hloviz.errors import CarriesDotText, DependencyError, InputError, RenderError

from . import present

ROOT = Path(__file__).resolve().parent.parent
CAPTURES = ROOT / "samples" / "captures"
SEED = CAPTURES / "fused_additions"
RULES = Path(__file__).parent / "golden" / "render" / "rules.hlo"


@pytest.mark.parametrize("folder", sorted(p.name for p in CAPTURES.iterdir() if (p / "capture.json").is_file()))
def test_every_sample_capture_json_reads_and_round_trips(folder):
    raw = json.loads((CAPTURES / folder / "capture.json").read_text())
    info = CaptureInfo.from_dict(raw)
    assert info.to_dict() == {k: v for k, v in raw.items() if v not in (None, [], {})}
    assert info.source == raw["source"]
    if raw.get("source_map"):
        op, loc = next(iter(raw["source_map"].items()))
        assert info.source_map[op] == SourceLocation(loc["file"], loc["line"], loc["function"])


def test_every_field_is_checked():
    assert {f.name for f in fields(CaptureInfo)} - {"extra"} == set(_CHECKS)


def test_unknown_keys_are_kept_and_framework_named():
    info = CaptureInfo.from_dict({"source": "live", "tensorflow": "2.21.0", "from_the_future": [1, 2]})
    assert info.extra == {"from_the_future": [1, 2]} and info.to_dict()["from_the_future"] == [1, 2]
    assert info.framework_version == "TensorFlow 2.21.0"


@pytest.mark.parametrize("key, value, said", [
    ("device", 3, "device must be a string, not an integer"),
    ("jit_compile", "yes", "jit_compile must be true or false, not a string"),
    ("capture_seconds", -1, "capture_seconds must be a number of seconds, not an integer"),
    ("args", "f32[8]", "args must be a list of strings, not a string"),
    ("source_map", {"add": {"file": "m.py", "line": "33"}}, 'source_map["add"].line must be a line number'),
    ("source_map", [], "source_map must be an object, not a list"),
    ("tf_inputs", {"add": "x"}, 'tf_inputs["add"] must be a list of strings, not a string'),
])
def test_a_wrong_type_is_an_input_error_naming_file_and_key(tmp_path, capsys, key, value, said):
    folder = tmp_path / "cap"
    shutil.copytree(SEED, folder)
    info = json.loads((folder / "capture.json").read_text())
    info[key] = value
    (folder / "capture.json").write_text(json.dumps(info))
    with pytest.raises(InputError, match=r"capture\.json: " + re.escape(said)):
        load_target(str(folder))
    with pytest.raises(SystemExit) as exit_:
        main(["stats", str(folder)])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and said in err and "Traceback" not in err
    assert str(folder / "capture.json") in err or "capture.json" in err


def test_capture_around_a_module_has_public_accessors():
    post = hloviz.parse_file(SEED / "post.hlo")
    cap = Capture.from_module(post)
    assert cap.module("post") is post and cap.post_module() is post
    assert cap.module("pre") is None and cap.has("post") and not cap.has("pre")
    assert cap.capture_info.source == "module"
    with pytest.raises(ValueError):
        cap.module("middle")
    saved = load_target(str(SEED))
    assert saved.has("pre") and present(saved.module("pre")).name == present(saved.pre_module()).name


def test_drawing_errors_carry_the_dot_text():
    for cls in (RenderError, DependencyError):
        err = cls("Graphviz failed")
        assert isinstance(err, CarriesDotText) and err.dot_text is None
        assert err.with_dot_text("digraph hloviz {}") is err and err.dot_text == "digraph hloviz {}"


def test_missing_graphviz_error_carries_the_picture(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # no `dot` on the PATH
    with pytest.raises(DependencyError) as info:
        api.render(str(SEED / "post.hlo"), fmt="svg")
    assert info.value.dot_text is not None and info.value.dot_text.startswith("digraph hloviz")


def test_option_objects_equal_their_keywords():
    by_keywords = api.render(str(RULES), fmt="json", focus="mx", radius=0, budget=50)
    by_object = api.render(str(RULES), fmt="json", drawing=DrawOptions(focus="mx", radius=0, budget=50))
    assert by_object.data == by_keywords.data
    assert [n["instructions"] for n in json.loads(by_object.data)["nodes"]] == [["mx"]]
    pre_only = api.render(None, fmt="dot", capture=CaptureOptions(pre=SEED / "pre.hlo"))
    assert pre_only.dot == api.render(None, fmt="dot", pre=SEED / "pre.hlo").dot


def test_the_page_fit_object_equals_its_keywords():
    """``fit=`` (theme, width, max height, wrap, aspect, layout) draws what its keywords draw."""
    by_keywords = api.render(str(RULES), fmt="svg", theme="dark", width="20em", budget=50)
    by_object = api.render(str(RULES), fmt="svg", budget=50, fit=FitOptions(theme="dark", width="20em"))
    assert by_object.data == by_keywords.data
    assert by_object.data != api.render(str(RULES), fmt="svg", budget=50).data  # the fit was applied
    with pytest.raises(TypeError, match=r"fit= or its keywords.*theme"):
        api.render(str(RULES), fmt="dot", theme="dark", fit=FitOptions(width="20em"))


def test_an_object_and_its_own_keywords_together_are_refused(tmp_path):
    with pytest.raises(TypeError, match=r"drawing= or its keywords.*budget"):
        api.render(str(RULES), fmt="dot", budget=10, drawing=DrawOptions(budget=20))
    with pytest.raises(TypeError, match=r"capture= or its keywords.*device"):
        api.show(str(SEED), tmp_path, device="CPU:0", capture=CaptureOptions())
    # An object for one group and keywords for the other is fine.
    pic = api.render(None, fmt="dot", budget=40, capture=CaptureOptions(post=SEED / "post.hlo"))
    assert pic.dot.startswith("digraph hloviz")
