"""Work a command on a saved capture does once, counted (issue 32: every command fast).

Wall time is the benchmarks' business (benchmarks/commands_bench.py); these tests count calls of
the expensive steps, so a second analysis or a Python walk over a whole capture.json coming back
fails here whatever the machine's speed.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import hloviz.analysis
import hloviz.capture.info as info_module
import hloviz.errors
from hloviz import api

CAPTURES = Path(__file__).resolve().parent.parent / "samples" / "captures"
SMALL = CAPTURES / "keras_small_train_step"


@pytest.fixture
def analyses(monkeypatch) -> list[int]:
    """The calls of :func:`hloviz.analysis.analyze` (imported by the commands at call time)."""
    calls: list[int] = []
    real = hloviz.analysis.analyze

    def counted(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(hloviz.analysis, "analyze", counted)
    return calls


@pytest.mark.parametrize("stage", ["both", "post", "pre"])
def test_render_analyzes_the_pair_once_for_picture_and_verdict(stage, analyses, tmp_path):
    # --stage both drew with one analysis and described the SVG with a second (the verdict);
    # one module's picture still says the verdict of the pair, from one analysis
    picture = api.render(str(SMALL), tmp_path / "p.svg", stage=stage)
    assert len(analyses) == 1
    svg = picture.svg_text()
    assert re.search(r"<desc[^>]*>[^<]*\bkernels?\b", svg), svg[:2000]


def test_render_html_analyzes_once_for_picture_verdict_and_explorer(analyses, tmp_path):
    api.render(str(SMALL), tmp_path / "p.html", stage="both")
    assert len(analyses) == 1


def test_a_clean_capture_json_is_not_walked_string_by_string(monkeypatch):
    # every string of capture.json is checked for lone surrogates; a clean one in one pass of the
    # JSON encoder, not a Python call per string (MobileNetV3 + Adam: 128,000 strings)
    info = json.loads((CAPTURES / "mobilenet_v3_adam" / "capture.json").read_text())
    strings = [0]
    real = info_module._is_text

    def counted(value: str) -> bool:
        strings[0] += 1
        return real(value)

    monkeypatch.setattr(info_module, "_is_text", counted)
    typed = info_module.CaptureInfo.from_dict(info)
    assert strings[0] == 0
    assert typed.source_map  # the capture was read all the same
    # a lone surrogate deep inside is still found and named (by the walk)
    first = next(iter(info["tf_ops"]))
    info["tf_ops"][first] = "Add\udfff"
    with pytest.raises(hloviz.errors.InputError, match=r"tf_ops\[.*\] holds a lone surrogate"):
        info_module.CaptureInfo.from_dict(info)
    assert strings[0] > 0


def test_a_saved_capture_json_is_checked_once_as_it_is_read(monkeypatch):
    # read_info checked it, and the Capture made of it checked it again
    from hloviz.capture import load_target

    calls = []
    real = info_module.CaptureInfo.from_dict.__func__

    def counted(cls, info, *, where="capture.json", text_known=False):
        calls.append(where)
        return real(cls, info, where=where, text_known=text_known)

    monkeypatch.setattr(info_module.CaptureInfo, "from_dict", classmethod(counted))
    cap = load_target(str(SMALL))
    assert len(calls) == 1 and calls[0].endswith("capture.json")
    assert cap.capture_info.source_map == info_module.CaptureInfo.from_dict(cap.info).source_map


def test_a_command_makes_no_full_collection_over_its_modules(capsys):
    # Python's default thresholds scanned the whole parsed capture three times in stats --by
    # scope --json on MobileNetV3 + Adam; the CLI runs with fewer full collections (and puts
    # the thresholds back: main runs in this process here)
    import gc

    from hloviz.cli import main

    before = gc.get_threshold()
    full = []

    def seen(phase, info):
        if phase == "start" and info["generation"] == 2:
            full.append(1)

    gc.collect()
    gc.callbacks.append(seen)
    try:
        main(["stats", str(CAPTURES / "mobilenet_v3_adam"), "--by", "scope", "--json"])
    except SystemExit as done:
        assert done.code in (None, 0)
    finally:
        gc.callbacks.remove(seen)
    assert json.loads(capsys.readouterr().out)["kernels"]
    assert full == []
    assert gc.get_threshold() == before


def test_capture_json_op_maps_make_no_message_per_entry(monkeypatch):
    # source_map / tf_ops / tf_inputs hold one entry per framework op (MobileNetV3 + Adam: tens
    # of thousands): the words naming a bad entry were made for every good one too
    info = json.loads((CAPTURES / "mobilenet_v3_adam" / "capture.json").read_text())
    assert len(info["source_map"]) > 1000 and len(info["tf_inputs"]) > 1000
    quoted = [0]
    real = info_module._quote

    def counted(name: object) -> str:
        quoted[0] += 1
        return real(name)

    monkeypatch.setattr(info_module, "_quote", counted)
    typed = info_module.CaptureInfo.from_dict(info)
    assert quoted[0] == 0
    op, loc = next(iter(info["source_map"].items()))
    assert typed.source_map[op].line == loc["line"] and typed.source_map[op].file == loc["file"]
    # a bad entry is still named, field and op
    info["source_map"][op] = {**loc, "line": "twelve"}
    with pytest.raises(hloviz.errors.InputError, match=r"source_map\[.*\]\.line must be a line number, not a string"):
        info_module.CaptureInfo.from_dict(info)
    info["source_map"][op] = loc
    first = next(iter(info["tf_inputs"]))
    info["tf_inputs"][first] = ["x:0", 3]
    with pytest.raises(hloviz.errors.InputError, match=r"tf_inputs\[.*\]\[1\] must be a string, not an integer"):
        info_module.CaptureInfo.from_dict(info)


def test_analyze_makes_kernel_records_of_the_optimized_module_only(monkeypatch):
    # the pre-optimization module's counts (work instructions, op names) were read off a full
    # kernel report of it: every instruction's FLOPs, bytes, shape text and sources, unread
    import hloviz.analysis.summary as summary
    from hloviz.capture import load_target

    cap = load_target(str(CAPTURES / "mobilenet_train_sgd"))
    pre, post = cap.pre_module(), cap.post_module()
    assert pre is not None and post is not None
    reported: list[str] = []
    real = summary.kernels

    def counted(module):
        reported.append(module.name if module is post else "pre")
        return real(module)

    monkeypatch.setattr(summary, "kernels", counted)
    analysis = summary.analyze(pre, post, info=cap.info)
    assert reported == [post.name]
    # counted all the same (their values: tests/test_verdict_numbers.py, against the HLO text)
    assert analysis.pre is not None and analysis.pre.work > 0 and analysis.pre.op_names > 0


def test_repeated_layers_count_their_blocks_once():
    # structure._drawn_after hashed every block of every crowded node, and a GPT step's layers
    # ask it the same question once per layer: 12 layers cost three times 4 (issue 32 goal 4)
    import hloviz.render.tree.structure as structure
    from hloviz.capture import load_target
    from hloviz.render.views import ViewOptions, draw_module

    counted: dict[str, list[int]] = {}
    for name in ("jax_gpt_step", "jax_gpt_step12"):
        structure._DRAWN.clear()
        asked, worked = [0], [0]
        real_ask, real_work = structure._drawn_after, structure._count_drawn

        def ask(*args, _real=real_ask, _n=asked, **kwargs):
            _n[0] += 1
            return _real(*args, **kwargs)

        def work(*args, _real=real_work, _n=worked, **kwargs):
            _n[0] += 1
            return _real(*args, **kwargs)

        module = load_target(str(CAPTURES / name)).post_module()
        assert module is not None
        try:
            structure._drawn_after, structure._count_drawn = ask, work
            draw_module(module, options=ViewOptions(budget=24))
        finally:
            structure._drawn_after, structure._count_drawn = real_ask, real_work
        counted[name] = [asked[0], worked[0]]
    (ask4, work4), (ask12, work12) = counted["jax_gpt_step"], counted["jax_gpt_step12"]
    assert ask12 > ask4 > work4  # more layers ask more often ...
    assert work12 == work4  # ... and the count is worked out once per distinct question
