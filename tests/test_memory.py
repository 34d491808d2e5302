"""hloviz memory: XLA's own buffer assignment read to the byte, and the estimate from HLO alone.

Every expected number comes from XLA's own files, read here with regular expressions (the dump's
``Total bytes used``, its allocations, its ``HloLiveRange`` peak), or from JAX's own
``CompiledMemoryStats`` numbers kept with a capture — never from hloviz's analysis.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

import pytest

from tests import run_cli
from tests.docs_pages import page

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data" / "memory"
SAMPLES = ROOT / "samples" / "memory"
DUMPS = {"tf_dump": "module_0000", "jax_dump": "module_0006"}


def _xla_dump_facts(folder: Path) -> dict:
    """What XLA wrote, by regex: total, parameter bytes, the peak and the buffers live there."""
    text = "".join(p.read_text() for p in sorted(folder.glob("*-buffer-assignment*.txt")))
    live = "".join(p.read_text() for p in folder.glob("*.txt") if "HloLiveRange" in p.read_text())
    peak = live[live.index("(peak):"):live.index("Stack trace")]
    rows = re.findall(r"^    (\S+)\{[\d,]*\}: (\d+) bytes", peak, re.MULTILINE)
    return {
        "total": int(re.search(r"Total bytes used: (\d+)", text).group(1)),
        "parameters": sum(int(s) for s in re.findall(r"^allocation \d+: size (\d+), parameter", text, re.MULTILINE)),
        "peak_time": int(re.search(r"Live ranges at (\d+) \(peak\)", live).group(1)),
        "peak_bytes": sum(int(b) for _, b in rows),
        "peak_buffers": [n for n, _ in rows],
    }


def _json(capsys, *args):
    code, out, err = run_cli(["memory", *args, "--json"], capsys)
    assert code == 0, err
    return json.loads(out)


@pytest.mark.parametrize("dump", sorted(DUMPS))
def test_dump_folder_reports_xla_numbers_to_the_byte(dump, capsys):
    facts = _xla_dump_facts(DATA / dump)
    got = _json(capsys, str(DATA / dump))
    assert set(got) == {"source", "total_bytes", "by_kind", "peak", "timeline", "buffers_at_peak", "scopes", "notes"}
    assert got["source"] == "xla"
    assert got["total_bytes"] == facts["total"]
    assert got["by_kind"]["parameters"] == facts["parameters"]
    assert got["peak"]["time"] == facts["peak_time"]
    assert got["peak"]["bytes"] == facts["peak_bytes"]
    assert sorted(b["instruction"] for b in got["buffers_at_peak"]) == sorted(facts["peak_buffers"])
    assert max(got["timeline"]["bytes"]) == facts["peak_bytes"]


@pytest.mark.parametrize("dump", sorted(DUMPS))
def test_bare_optimized_file_is_estimated_like_xla(dump, capsys):
    facts = _xla_dump_facts(DATA / dump)
    post = next((DATA / dump).glob("*cpu_after_optimizations.txt"))
    got = _json(capsys, str(post))
    assert got["source"] == "estimate"
    assert abs(got["total_bytes"] - facts["total"]) <= 0.05 * facts["total"]
    assert got["total_bytes"] <= 1.01 * facts["total"]
    assert got["peak"]["bytes"] == facts["peak_bytes"]
    ours = {b["instruction"] for b in got["buffers_at_peak"][:10]}
    theirs = facts["peak_buffers"][:10]
    assert sum(n in ours for n in theirs) >= min(8, len(theirs))


def _samples() -> list[str]:
    return sorted(p.name for p in SAMPLES.iterdir() if (p / "memory.json").is_file()) if SAMPLES.is_dir() else []


@pytest.mark.parametrize("name", _samples())
def test_estimate_of_real_programs_against_xla_record(name, capsys):
    """The estimate from post.hlo alone against XLA's record of the same compile (memory.json)."""
    folder = SAMPLES / name
    record = json.loads((folder / "memory.json").read_text())
    xla_total = sum(a["size"] for a in record["allocations"])
    post = next(p for p in (folder / "post.hlo", folder / "post.hlo.gz") if p.is_file())
    got = _json(capsys, str(post))
    assert got["source"] == "estimate"
    in_place = any(a["aliased"] for a in record["allocations"])
    tolerance = 0.10 if in_place else 0.05
    assert got["total_bytes"] <= 1.01 * xla_total
    assert got["total_bytes"] >= (1 - tolerance) * xla_total
    saved = _json(capsys, str(folder))
    assert saved["source"] == "xla" and saved["total_bytes"] == xla_total


@pytest.mark.parametrize("name", [n for n in _samples() if n.startswith("jax")])
def test_jax_record_agrees_with_jax_memory_stats(name):
    """The proto hloviz decoded against the numbers JAX's own API gave for the same compile."""
    record = json.loads((SAMPLES / name / "memory.json").read_text())
    stats = record["stats"]
    by = {}
    for a in record["allocations"]:
        by[a["kind"]] = by.get(a["kind"], 0) + a["size"]
    assert by.get("parameters", 0) == stats["argument_size_in_bytes"]
    assert by.get("temporaries", 0) == stats["temp_size_in_bytes"]
    assert sum(a["size"] for a in record["allocations"] if a["aliased"]) == stats["alias_size_in_bytes"]


def test_truncated_buffer_assignment_in_a_dump_is_exit_2(tmp_path, capsys):
    folder = tmp_path / "dump"
    shutil.copytree(DATA / "tf_dump", folder)
    ba = next(folder.glob("*-buffer-assignment.txt"))
    text = ba.read_text()
    ba.write_text(text[: text.index("allocation 5:")])
    code, _, err = run_cli(["memory", str(folder)], capsys)
    assert code == 2
    assert "cut short" in err and ba.name in err
    assert "Traceback" not in err


def test_unscheduled_module_says_which_order(tmp_path, capsys):
    post = next((DATA / "tf_dump").glob("*cpu_after_optimizations.txt"))
    text = post.read_text().replace("is_scheduled=true, ", "", 1)
    path = tmp_path / "post_unscheduled.hlo"
    path.write_text(text)
    code, out, err = run_cli(["memory", str(path)], capsys)
    assert code == 0, err
    assert "not scheduled" in out and "order of the text" in out


def test_saved_capture_keeps_xla_record(tmp_path, capsys):
    code, _, err = run_cli(["dump", str(DATA / "jax_dump"), "-o", str(tmp_path / "cap")], capsys)
    assert code == 0, err
    assert (tmp_path / "cap" / "memory.json").is_file()
    assert json.loads((tmp_path / "cap" / "capture.json").read_text())["memory_file"] == "memory.json"
    facts = _xla_dump_facts(DATA / "jax_dump")
    got = _json(capsys, str(tmp_path / "cap"))
    assert got["source"] == "xla" and got["total_bytes"] == facts["total"]


@pytest.mark.requires_jax
def test_live_jax_capture_is_xla_to_the_byte(tmp_path, capsys):
    import jax
    import jax.numpy as jnp

    model = tmp_path / "m.py"
    model.write_text("import jax.numpy as jnp\n\ndef f(x, w):\n    return jnp.tanh(x @ w).sum(), x @ w\n")
    got = _json(capsys, f"{model}:f", "--arg", "f32[64,128]", "--arg", "f32[128,32]")

    def f(x, w):
        return jnp.tanh(x @ w).sum(), x @ w

    stats = jax.jit(f).lower(jnp.ones((64, 128)), jnp.ones((128, 32))).compile().memory_analysis()
    assert got["source"] == "xla"
    assert got["by_kind"]["parameters"] == stats.argument_size_in_bytes
    assert got["by_kind"]["temporaries"] == stats.temp_size_in_bytes


@pytest.mark.requires_jax
@pytest.mark.slow
def test_live_flax_training_step_is_xla_to_the_byte(capsys, monkeypatch):
    """A Flax transformer's AdamW step with donated arguments, captured live, against JAX's own
    ``memory_analysis()`` of the same function compiled here."""
    pytest.importorskip("flax")
    import importlib.util

    import jax

    spec = importlib.util.spec_from_file_location("flax_models_under_test", ROOT / "samples" / "flax_models.py")
    assert spec is not None and spec.loader is not None
    flax_models = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, flax_models)  # flax's dataclasses look their module up
    spec.loader.exec_module(flax_models)
    got = _json(capsys, "samples/flax_models.py:transformer_train_step")

    def shaped(spec):
        kind, dims = re.fullmatch(r"(f32|s32)\[([\d,]*)\]", spec).groups()
        return jax.ShapeDtypeStruct(tuple(int(d) for d in dims.split(",") if d), {"f32": "float32", "s32": "int32"}[kind])

    args = jax.tree_util.tree_map(shaped, flax_models.HLOVIZ_ARGS["transformer_train_step"])
    stats = flax_models.transformer_train_step.lower(*args).compile().memory_analysis()
    assert got["source"] == "xla"
    assert got["by_kind"]["parameters"] == stats.argument_size_in_bytes
    assert got["by_kind"]["temporaries"] == stats.temp_size_in_bytes
    assert got["by_kind"]["aliased"] == stats.alias_size_in_bytes > 0


@pytest.mark.requires_tf
def test_live_tf_capture_is_xla_to_the_byte(tmp_path, capsys):
    model = tmp_path / "m.py"
    model.write_text("import tensorflow as tf\n\n@tf.function(jit_compile=True)\ndef f(x, w):\n"
                     "    return tf.reduce_sum(tf.tanh(x @ w)), x @ w\n")
    got = _json(capsys, f"{model}:f", "--arg", "f32[64,128]", "--arg", "f32[128,32]")
    import tensorflow as tf
    from tensorflow.compiler.xla.service import hlo_pb2

    @tf.function(jit_compile=True)
    def f(x, w):
        return tf.reduce_sum(tf.tanh(x @ w)), x @ w

    proto = f.experimental_get_compiler_ir(tf.TensorSpec((64, 128)), tf.TensorSpec((128, 32)))(
        stage="optimized_hlo_proto_serialized")
    ba = hlo_pb2.HloProto.FromString(proto).buffer_assignment
    assert got["source"] == "xla"
    assert got["total_bytes"] == sum(a.size for a in ba.buffer_allocations)
    assert got["by_kind"]["parameters"] == sum(a.size for a in ba.buffer_allocations
                                               if a.is_entry_computation_parameter)


# --- the docs page, pictures, and the other commands ----------------------------------------------

MEMORY_SECTION = page("memory")  # docs/memory.md
#: The page's table row label → the samples/memory folder it reports.
README_ROWS = {"ResNet50": "resnet50", "MobileNetV2": "mobilenet_v2", "Keras transformer": "keras_transformer", "Keras CNN training step": "keras_cnn_train",
               "Keras training step (SGD": "keras_small_train_step", "Keras LSTM": "keras_lstm",
               "Keras MultiHeadAttention": "keras_mha", "matmul chain": "matmul_chain",
               "JAX training step, donated": "jax_donated", "JAX transformer": "jax_scopes",
               "Flax CNN (inference": "flax_cnn", "Flax CNN training step": "flax_cnn_train",
               "Flax transformer training step": "flax_transformer_train"}


def test_the_memory_page_draws_its_picture_with_the_directive_for_the_command_it_shows(tmp_path, monkeypatch, capsys):
    """The page shows a `hloviz render` command and draws the same target with the `hloviz`
    directive (tests/test_docs_site.py builds it); the command works and writes the timeline."""
    line = next(x for x in MEMORY_SECTION.splitlines() if x.startswith("hloviz render "))
    argv = line.split()
    directive = re.search(r"```\{hloviz\} \.\./(\S+)\n(.*?)```", MEMORY_SECTION, re.DOTALL)
    assert directive is not None and directive.group(1) == argv[2] and ":memory:" in directive.group(2)
    out = tmp_path / "memory.svg"
    argv[argv.index("-o") + 1] = str(out)
    monkeypatch.chdir(ROOT)
    code, _, err = run_cli(argv[1:], capsys)
    assert code == 0, err
    assert b"<svg" in out.read_bytes() and b"peak" in out.read_bytes()


def test_readme_memory_table_is_xla_against_the_estimate(capsys):
    rows = re.findall(r"^\| (.+?) \| ([\d,]+) B \| (same|[−+-][\d.]+%) \|$", MEMORY_SECTION, re.MULTILINE)
    assert len(rows) == len(README_ROWS)
    for label, xla_text, said in rows:
        folder = SAMPLES / next(f for prefix, f in README_ROWS.items() if label.startswith(prefix))
        record = json.loads((folder / "memory.json").read_text())
        xla_total = sum(a["size"] for a in record["allocations"])
        assert int(xla_text.replace(",", "")) == xla_total, label
        post = next(p for p in (folder / "post.hlo", folder / "post.hlo.gz") if p.is_file())
        got = _json(capsys, str(post))["total_bytes"]
        expected = "same" if got == xla_total else f"{100 * (got - xla_total) / xla_total:+.2f}%".replace("-", "−")
        assert said == expected, label


def test_render_memory_refuses_graphviz_formats(tmp_path, capsys):
    code, _, err = run_cli(["render", str(SAMPLES / "keras_mha"), "--stage", "memory", "-o",
                            str(tmp_path / "m.png")], capsys)
    assert code == 2 and ".svg or .html" in err and "rsvg-convert" in err and "Traceback" not in err
    assert not (tmp_path / "m.png").exists()


def _render_memory(tmp_path, capsys, *options: str) -> str:
    out = tmp_path / f"memory{len(list(tmp_path.iterdir()))}.svg"
    code, _, err = run_cli(["render", str(SAMPLES / "keras_mha"), "--stage", "memory", *options, "-o", str(out)],
                           capsys)
    assert code == 0, err
    return out.read_text(encoding="utf-8")


def test_render_memory_is_fit_for_a_page(tmp_path, capsys):
    """The timeline as every picture: role="img", <title>/<desc> first, sized and themed as asked;
    the description's total is XLA's (memory.json, summed here)."""
    import xml.etree.ElementTree as ET

    total = sum(a["size"] for a in json.loads((SAMPLES / "keras_mha" / "memory.json").read_text())["allocations"])
    svg = _render_memory(tmp_path, capsys, "--theme", "dark", "--width", "640px", "--max-height", "30em")
    root = ET.fromstring(svg)
    ns = "{http://www.w3.org/2000/svg}"
    assert root.get("role") == "img" and "width" not in root.attrib and "height" not in root.attrib
    assert root.get("style") == "width:640px;height:auto;max-height:30em"
    title, desc, style = list(root)[:3]
    assert (title.tag, desc.tag, style.tag) == (f"{ns}title", f"{ns}desc", f"{ns}style")
    assert root.get("aria-labelledby") == f"{title.get('id')} {desc.get('id')}"
    assert title.text == "keras_mha · memory"
    assert desc.text is not None and desc.text.startswith(f"Memory: {total / 1024:.1f} KiB in all (XLA's buffer")
    assert ".hv-bg{fill:transparent}" in (style.text or "") and "prefers-color-scheme" not in (style.text or "")
    light = _render_memory(tmp_path, capsys)
    assert "<style>" not in light and 'role="img"' in light and 'width="900"' in light
    auto = _render_memory(tmp_path, capsys, "--theme", "auto")
    assert "@media (prefers-color-scheme:dark)" in auto
    assert _render_memory(tmp_path, capsys, "--theme", "auto") == auto, "the same input gives the same bytes"


@pytest.mark.requires_chromium
def test_auto_memory_timeline_follows_the_readers_scheme(tmp_path, capsys):
    from .browser import chromium

    path = tmp_path / "m.svg"
    path.write_text(_render_memory(tmp_path, capsys, "--theme", "auto"), encoding="utf-8")
    seen = {}
    with chromium() as browser:
        for scheme in ("light", "dark"):
            page = browser.new_page(color_scheme=scheme)  # type: ignore[attr-defined]
            page.goto(path.as_uri())
            seen[scheme] = page.evaluate("[getComputedStyle(document.querySelector('.hv-bg')).fill, "
                                         "getComputedStyle(document.querySelector('.hv-ink')).fill]")
            page.close()
    assert seen == {"light": ["rgb(255, 255, 255)", "rgb(0, 0, 0)"],
                    "dark": ["rgba(0, 0, 0, 0)", "rgb(208, 215, 222)"]}, seen


def test_damaged_memory_json_is_exit_2(tmp_path, capsys):
    folder = tmp_path / "cap"
    shutil.copytree(SAMPLES / "keras_mha", folder)
    (folder / "memory.json").write_text('{"format": "something else"}')
    code, _, err = run_cli(["memory", str(folder)], capsys)
    assert code == 2 and "memory.json" in err and "Traceback" not in err


def test_donated_bytes_are_the_aliased_parameters():
    """aliased = the entry parameters input_output_alias names, their shapes read by regex."""
    from hloviz.capture import load_target

    text = (SAMPLES / "jax_donated" / "post.hlo").read_text()
    header = text.splitlines()[0]
    donated = {int(n) for n in re.findall(r"\}: \((\d+), \{\}", header)}
    entry = text[text.index("\nENTRY "):]
    shapes = {int(n): (t, dims) for t, dims, n in re.findall(r"= (f32)\[([\d,]*)\][^ ]* parameter\((\d+)\)", entry)}
    expected = 0
    for n in donated:
        count = 1
        for d in filter(None, shapes[n][1].split(",")):
            count *= int(d)
        expected += 4 * count
    cap = load_target(str(SAMPLES / "jax_donated"))
    from hloviz.analysis.memory import memory_report

    assert memory_report(cap.post_module()).by_kind["aliased"] == expected
    assert json.loads((SAMPLES / "jax_donated" / "memory.json").read_text())["stats"]["alias_size_in_bytes"] == expected


def test_stats_and_diff_carry_memory(capsys):
    record = json.loads((SAMPLES / "keras_lstm" / "memory.json").read_text())
    code, out, err = run_cli(["stats", str(SAMPLES / "keras_lstm"), "--json"], capsys)
    assert code == 0, err
    assert json.loads(out)["memory"]["total_bytes"] == sum(a["size"] for a in record["allocations"])
    code, out, err = run_cli(["diff", str(SAMPLES / "keras_lstm"), str(SAMPLES / "keras_mha"), "--format", "json"],
                             capsys)
    assert code == 0, err
    mem = json.loads(out)["memory"]
    other = json.loads((SAMPLES / "keras_mha" / "memory.json").read_text())
    assert mem["total_bytes"] == {"before": sum(a["size"] for a in record["allocations"]),
                                  "after": sum(a["size"] for a in other["allocations"])}


@pytest.mark.requires_dot
def test_show_report_has_the_memory_section(tmp_path):
    from hloviz import api

    api.show(str(SAMPLES / "keras_mha"), tmp_path / "out")
    html = (tmp_path / "out" / "report.html").read_text()
    record = json.loads((SAMPLES / "keras_mha" / "memory.json").read_text())
    total = sum(a["size"] for a in record["allocations"])
    assert f"<h2>Memory ({total / 1024:.1f} KiB)</h2>" in html
    assert 'id="hv-buffers"' in html and 'id="hv-layers"' in html and "<svg" in html


@pytest.mark.requires_jax  # jaxlib turns the binary module into text
def test_proto_dump_carries_xla_numbers(capsys):
    """--xla_dump_hlo_as_proto: the HloProto's buffer assignment, against the text dump of the same
    program (tests/data/memory/jax_dump/make_dump.py, run with and without the flag)."""
    facts = _xla_dump_facts(DATA / "jax_dump")
    got = _json(capsys, str(DATA / "jax_proto_dump"))
    assert got["source"] == "xla" and got["total_bytes"] == facts["total"]
    assert got["by_kind"]["parameters"] == facts["parameters"]


@pytest.mark.requires_chromium
@pytest.mark.requires_dot
@pytest.mark.slow
def test_explorer_buffer_row_lights_producer_and_last_user(tmp_path):
    from hloviz import api

    from .browser import chromium, open_page, problems

    api.show(str(SAMPLES / "keras_mha"), tmp_path / "out")
    post = (SAMPLES / "keras_mha" / "post.hlo").read_text()
    with chromium() as browser:
        loaded = open_page(browser, tmp_path / "out" / "report.html")
        page = loaded.page
        row = page.locator("#hv-buffers tbody tr[data-inst]").filter(has_not_text="parameters").first
        producer, user = row.get_attribute("data-inst"), row.get_attribute("data-user")
        # both are instructions of the optimized module, and the user reads the producer there
        assert re.search(rf"^\s*(ROOT )?%?{re.escape(user)} = .*%{re.escape(producer)}\b", post, re.MULTILINE)
        row.click()
        lit = page.evaluate("window.hloviz.highlighted()")
        names = {m["name"] for box in lit for m in box["members"]}
        assert {producer, user} & names, (producer, user, sorted(names)[:10])
        assert "hv-row-sel" in (row.get_attribute("class") or "")
        assert problems(loaded) == []


def _shown(path: str, layers: dict[str, str]) -> str:
    """An op-name scope path by the names ``stats --by scope`` prints: each prefix's Keras layer
    as the capture recorded it (``layer_scopes``), else the segment less Keras' ``_N`` suffix."""
    parts = path.split("/")
    return "/".join(layers[p].rsplit("/", 1)[-1] if p in layers else re.sub(r"_\d+$", "", seg)
                    for p, seg in (("/".join(parts[:k + 1]), parts[k]) for k in range(len(parts))))


def test_weights_at_the_peak_are_filed_in_the_layer_that_reads_them(capsys):
    """A Keras weight's layer is the op-name scope of the instruction reading it (post.hlo, by regex)."""
    import gzip

    folder = SAMPLES / "resnet50"
    post = next(p for p in (folder / "post.hlo", folder / "post.hlo.gz") if p.is_file())
    text = gzip.decompress(post.read_bytes()).decode() if post.suffix == ".gz" else post.read_text()
    got = _json(capsys, str(folder))
    layers = json.loads((folder / "capture.json").read_text())["layer_scopes"]
    weights = [b for b in got["buffers_at_peak"] if b["kind"] == "parameters"][:5]
    assert weights
    for b in weights:
        readers = re.findall(rf"^\s*(?:ROOT )?%?\S+ = [^\n]*%{re.escape(b['instruction'])}\b[^\n]*"
                             r'op_name="([^"]+)"', text, re.MULTILINE)
        scopes = {_shown(r.rsplit("/", 1)[0], layers) for r in readers}
        assert b["scope"] in scopes, (b["instruction"], b["scope"], sorted(scopes)[:3])


REAL_DUMPS = ("jax_scopes_dump", "jax_donated_dump", "tf_lstm_dump", "tf_cnn_train_dump", "flax_cnn_dump",
              "flax_cnn_train_dump", "flax_transformer_train_dump")


def _read_gz(path: Path) -> str:
    import gzip

    return gzip.decompress(path.read_bytes()).decode("utf-8")


@pytest.mark.parametrize("dump", REAL_DUMPS)
def test_real_training_step_dumps(dump, capsys):
    """JAX training steps (one with donated arguments), a Keras LSTM (a while loop), a Keras CNN
    training step with Adam (TensorFlow 2.21), and Flax models (samples/flax_models.py: a CNN, its
    Adam step, a transformer's AdamW step with donated arguments): XLA's total to the byte from the dump;
    the estimate from the optimized HLO alone within 10% (in-place / donated) and never over; and
    the 10 largest buffers hloviz lists at its peak are XLA's 10 largest live then, by XLA's own
    live ranges and value sizes (read here by regex)."""
    folder = DATA / dump
    assignment = _read_gz(next(folder.glob("*-buffer-assignment.txt.gz")))
    # JAX writes values and live ranges into files of their own; TensorFlow all into one
    values = "".join(_read_gz(p) for p in folder.glob("*-buffer-assignment-values.txt.gz")) or assignment
    live = "".join(_read_gz(p) for p in folder.glob("*-live-range.txt.gz")) or assignment
    xla_total = int(re.search(r"Total bytes used: (\d+)", values).group(1))
    assert _json(capsys, str(folder))["total_bytes"] == xla_total
    got = _json(capsys, str(next(folder.glob("*after_optimizations.txt.gz"))))
    assert got["source"] == "estimate"
    assert 0.90 * xla_total <= got["total_bytes"] <= 1.01 * xla_total
    sizes = {m.group(1) + (m.group(2) or "{}"): int(m.group(3)) for m in re.finditer(
        r"^ value: <\d+ (\S+?)(\{[\d,]*\})?(?: \(phi\))? @\d+> \(size=(\d+)", assignment, re.MULTILINE)}
    t = got["peak"]["time"]
    live_then = sorted((-sizes.get(m.group(1) + m.group(2), 0), m.group(1)) for m in re.finditer(
        r"^    (\S+?)(\{[\d,]*\}):(\d+)-(\d+)$", live, re.MULTILINE) if int(m.group(3)) <= t <= int(m.group(4)))
    theirs = [name for _, name in live_then[:10]]
    ours = {b["instruction"] for b in got["buffers_at_peak"][:10]}
    assert sum(name in ours for name in theirs) >= 8, (theirs, sorted(ours))


def test_stats_leaves_memory_out_of_a_damaged_dump_and_says_why(tmp_path, capsys):
    folder = tmp_path / "dump"
    shutil.copytree(DATA / "tf_dump", folder)
    ba = next(folder.glob("*-buffer-assignment.txt"))
    ba.write_text(ba.read_text()[:200])
    code, out, err = run_cli(["stats", str(folder), "--json"], capsys)
    assert code == 0, err
    data = json.loads(out)
    assert data["memory"] is None
    assert any("no memory report" in n and ba.name in n for n in data["notes"])


def test_calls_nested_thousands_deep_are_estimated(tmp_path, capsys):
    """3000 nested ``call``s (tests/hostile_inputs.py) passed Python's recursion limit. By hand: the
    entry parameter (f32[4], 16 B) and the one negate in the innermost body (16 B, the output) are
    the only buffers; each of the 3001 computations puts its parameter and its root in the schedule."""
    from .hostile_inputs import nested_calls

    path = tmp_path / "deep.hlo"
    path.write_text(nested_calls(3000))
    got = _json(capsys, str(path))
    assert got["total_bytes"] == 32 and got["by_kind"]["parameters"] == 16 and got["by_kind"]["outputs"] == 16
    assert len(got["timeline"]["instructions"]) == 2 * 3001
    path.write_text(nested_calls(3000, "while"))
    assert _json(capsys, str(path))["source"] == "estimate"
