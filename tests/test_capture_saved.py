"""Saved captures, lone HLO files, --pre/--post and XLA dump folders (no TensorFlow needed)."""

from __future__ import annotations

import json
import os

import pytest

from hloviz.capture import Capture, load_target, save_capture, source_for
from hloviz.capture.dumps.xla_dump import list_modules
from hloviz.capture.saved import write as saved_write
from hloviz.cli import main
from hloviz.errors import InputError

from . import present, root_of

PRE = """HloModule m, entry_computation_layout={(f32[4]{0})->f32[4]{0}}

ENTRY %main (p: f32[4]) -> f32[4] {
  %p = f32[4]{0} parameter(0)
  %c = f32[] constant(1)
  %b = f32[4]{0} broadcast(%c), dimensions={}
  ROOT %a = f32[4]{0} add(%p, %b), metadata={op_type="AddV2" op_name="add"}
}
"""

POST = """HloModule m, is_scheduled=true, entry_computation_layout={(f32[4]{0})->f32[4]{0}}

%fused_computation (param_0: f32[4]) -> f32[4] {
  %param_0 = f32[4]{0} parameter(0)
  %c = f32[] constant(1)
  %b = f32[4]{0} broadcast(%c), dimensions={}
  ROOT %a = f32[4]{0} add(%param_0, %b), metadata={op_type="AddV2" op_name="add"}
}

ENTRY %main (p: f32[4]) -> f32[4] {
  %p = f32[4]{0} parameter(0)
  ROOT %f = f32[4]{0} fusion(%p), kind=kLoop, calls=%fused_computation
}
"""


def make_capture() -> Capture:
    info = {"framework": "tensorflow", "function": "f", "args": ["f32[4]"],
            "source_map": {"add": {"file": "/m/model.py", "line": 7, "function": "f"}}}
    return Capture(PRE, POST, info, "f")


def test_round_trip(tmp_path):
    out = save_capture(make_capture(), tmp_path / "cap")
    assert sorted(os.listdir(out)) == ["capture.json", "post.hlo", "pre.hlo"]
    back = load_target(str(out))
    assert (back.pre_text, back.post_text) == (PRE, POST)
    assert back.info["source_map"]["add"]["line"] == 7
    assert back.info["label"] == "f"
    assert back.label == "cap"
    assert json.loads((out / "capture.json").read_text())["args"] == ["f32[4]"]
    # and the parsed modules are there, lazily and cached
    assert root_of(present(back.post_module())).opcode == "fusion"
    assert back.post_module() is back.post_module()
    assert root_of(present(back.pre_module())).opcode == "add"


def test_a_capture_with_one_stage(tmp_path):
    out = save_capture(Capture(None, POST, {}, "only_post"), tmp_path / "p")
    assert sorted(os.listdir(out)) == ["capture.json", "post.hlo"]
    back = load_target(str(out))
    assert back.pre_text is None and back.pre_module() is None and back.post_text == POST


def test_replaces_an_existing_capture_but_not_other_folders(tmp_path):
    out = tmp_path / "cap"
    save_capture(Capture(PRE, None, {}, "one"), out)
    save_capture(Capture(None, POST, {"n": 2}, "two"), out)
    assert sorted(os.listdir(out)) == ["capture.json", "post.hlo"]
    assert load_target(str(out)).info["n"] == 2
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "thesis.tex").write_text("do not lose me")
    with pytest.raises(InputError, match="not a capture folder; refusing to overwrite"):
        save_capture(make_capture(), precious)
    assert (precious / "thesis.tex").read_text() == "do not lose me"
    assert sorted(os.listdir(tmp_path)) == ["cap", "precious"]


@pytest.mark.parametrize("exc", [KeyboardInterrupt, OSError])
def test_interrupted_save_leaves_nothing_half_written(tmp_path, monkeypatch, exc):
    real = saved_write.Path.write_text
    calls = []

    def flaky(self, *a, **k):
        calls.append(self.name)
        if self.name == "post.hlo":
            raise exc()
        return real(self, *a, **k)

    monkeypatch.setattr(saved_write.Path, "write_text", flaky)
    with pytest.raises(KeyboardInterrupt if exc is KeyboardInterrupt else InputError):
        save_capture(make_capture(), tmp_path / "cap")
    assert calls[:2] == ["pre.hlo", "post.hlo"]
    assert os.listdir(tmp_path) == []  # no cap/, no temporary folder


def test_interrupted_save_keeps_the_previous_capture(tmp_path, monkeypatch):
    out = save_capture(Capture(PRE, None, {"v": 1}, "old"), tmp_path / "cap")
    monkeypatch.setattr(saved_write.os, "rename", _fail_second_rename(saved_write.os.rename))
    with pytest.raises(KeyboardInterrupt):
        save_capture(make_capture(), out)
    assert sorted(os.listdir(tmp_path)) == ["cap"]
    assert load_target(str(out)).info["v"] == 1


def _fail_second_rename(real):
    count = {"n": 0}

    def rename(a, b):
        count["n"] += 1
        if count["n"] == 2:  # the old capture was moved aside; interrupt before the new one lands
            raise KeyboardInterrupt
        return real(a, b)

    return rename


@pytest.mark.parametrize("name, text, stage, why", [
    ("module_0001.f.before_optimizations.txt", POST, "pre", "name"),
    ("module_0001.f.cpu_after_optimizations.txt", PRE, "post", "name"),
    ("model.hlo", POST, "post", "scheduled"),
    ("model.hlo", POST.replace("is_scheduled=true, ", ""), "post", "fusions"),
    ("model.hlo", PRE, "pre", "no schedule and no fusions"),
])
def test_a_lone_file_is_one_stage(tmp_path, name, text, stage, why):
    path = tmp_path / name
    path.write_text(text)
    notes = []
    cap = load_target(str(path), notify=notes.append)
    assert cap.info["stage"] == stage and why in cap.info["stage_reason"]
    assert (cap.pre_text if stage == "pre" else cap.post_text) == text
    assert (cap.post_text if stage == "pre" else cap.pre_text) is None
    assert notes == [f"reading {name} as {stage}-optimization HLO ({cap.info['stage_reason']})"]


def test_pre_and_post_files(tmp_path):
    (tmp_path / "a.hlo").write_text(PRE)
    (tmp_path / "b.hlo").write_text(POST)
    cap = load_target(None, pre=tmp_path / "a.hlo", post=tmp_path / "b.hlo")
    assert (cap.pre_text, cap.post_text) == (PRE, POST)
    assert present(cap.pre_filename).endswith("a.hlo")
    with pytest.raises(InputError, match="either a TARGET or --pre/--post"):
        load_target("x.py:f", pre=tmp_path / "a.hlo")
    with pytest.raises(InputError, match="file not found"):
        load_target(None, post=tmp_path / "missing.hlo")
    with pytest.raises(InputError, match=r"--arg applies to model.py:function targets"):
        load_target(None, pre=tmp_path / "a.hlo", args=["f32[4]"])


def test_parse_errors_name_the_file(tmp_path):
    bad = tmp_path / "bad.hlo"
    bad.write_text("HloModule m\n\nENTRY %e {\n  %p = f32[4 parameter(0)\n}\n")
    cap = load_target(None, post=bad)
    from hloviz.errors import HloParseError

    with pytest.raises(HloParseError) as info:
        cap.post_module()
    assert str(bad) in str(info.value)


def _fake_dump(folder, modules):
    folder.mkdir()
    for number, name, platform in modules:
        (folder / f"module_{number}.{name}.before_optimizations.txt").write_text(PRE)
        (folder / f"module_{number}.{name}.{platform}after_optimizations.txt").write_text(POST)
        (folder / f"module_{number}.{name}.{platform}after_optimizations-buffer-assignment.txt").write_text("x")
        (folder / f"module_{number}.{name}.ir-no-opt.ll").write_text("x")
    return folder


def test_xla_dump_folder(tmp_path):
    dump = _fake_dump(tmp_path / "dump", [("0000", "jit_mlp", "cpu_"), ("0003", "jit__lambda", "cpu_"),
                                          ("0007", "a_inference_f_12__.5", "sm_9.0_gpu_")])
    mods = list_modules(dump)
    assert [(m.number, m.name) for m in mods] == [("0000", "jit_mlp"), ("0003", "jit__lambda"),
                                                  ("0007", "a_inference_f_12__.5")]
    assert present(mods[2].after).name == "module_0007.a_inference_f_12__.5.sm_9.0_gpu_after_optimizations.txt"
    with pytest.raises(InputError) as info:
        load_target(str(dump))
    msg = str(info.value)
    assert "holds 3 modules" in msg and "module_0003.jit__lambda" in msg and "--module" in msg
    for choice in ("jit_mlp", "0", "module_0000", "*mlp*", "mlp"):
        cap = load_target(str(dump), module=choice)
        assert cap.label == "jit_mlp" and cap.pre_text == PRE and cap.post_text == POST, choice
        assert cap.info["source"] == "xla_dump" and cap.info["module"] == "module_0000.jit_mlp"
    with pytest.raises(InputError, match="'jit_\\*' matches 2 modules"):
        load_target(str(dump), module="jit_*")
    with pytest.raises(InputError, match=r"no module in .* matches 'nope'"):
        load_target(str(dump), module="nope")


def test_a_folder_that_is_neither(tmp_path):
    (tmp_path / "notes.txt").write_text("hi")
    with pytest.raises(InputError, match=r"neither a capture folder .* nor an XLA dump folder"):
        load_target(str(tmp_path))


def test_source_for_tolerates_repeated_scopes():
    smap = {"cond/Sin": {"line": 3}, "add": {"line": 1}}
    assert source_for("add", smap) == {"line": 1}
    assert source_for("cond/cond/Sin", smap) == {"line": 3}
    assert source_for("while/add", smap) is None  # no guessing
    assert source_for("", smap) is None
    assert source_for("Cos;cond/Sin", smap) == {"line": 3}  # TF joins merged ops' names with ';'


def test_cli_dump_from_hlo_files(tmp_path, capsys):
    (tmp_path / "a.hlo").write_text(PRE)
    (tmp_path / "b.hlo").write_text(POST)
    main(["dump", "--pre", str(tmp_path / "a.hlo"), "--post", str(tmp_path / "b.hlo"), "-o", str(tmp_path / "c")])
    assert "wrote" in capsys.readouterr().out
    assert load_target(str(tmp_path / "c")).post_text == POST


def test_cli_dump_errors_exit_2_without_traceback(tmp_path, capsys):
    with pytest.raises(SystemExit) as code:
        main(["dump", str(tmp_path / "missing.py") + ":f", "-o", str(tmp_path / "c")])
    assert code.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("hloviz: error: file not found") and "Traceback" not in err
    assert not (tmp_path / "c").exists()
