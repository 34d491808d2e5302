"""``hloviz versions`` and ``--tf`` on the capture commands, without installing TensorFlow.

The matrix is checked on the saved two-version captures (real TF 2.17.1 and 2.21.0 output);
the live path runs through the CLI against environments of stand-in TensorFlow releases whose
compiler IR is those same saved captures (see tests/fakeframework.py), so what ``versions``
captures must match the saved folders exactly.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import hloviz
from hloviz.analysis.diff import diff_modules
from hloviz.capture.releases import envs

from . import present, run_cli
from .fakeframework import write_target
from .test_envs import make_manager, wheels  # noqa: F401  (wheels: the session fixture)

ROOT = Path(__file__).resolve().parent.parent
SAVED = ROOT / "samples" / "captures"


# What the matrix must say about each saved capture, worked out by hand from its post.hlo (not
# by hloviz). N2 = 8192 * 8192 elements of f32 (4 bytes). A kernel is what the entry runs,
# looking through `call` into XLA's CPU parallel_fusion wrappers; flops count a dot as
# 2·M·N·K and every elementwise op as one per output element (sine too), and a reduction of n
# values as n − 1 steps (as XLA's cost analysis counts them).
N2 = 8192 * 8192
_FACTS = {
    # custom-call __onednn$matmul (no flops: an opaque library call), the Sin/add/Relu loop
    # fusion, two reduce-windows (256·256 outputs of 32·32 sums, then 8·8 of 32·32) and a reduce.
    "matmul_chain-tf2.17": {"kernel_count": 5, "fusions_by_kind": {"kLoop": 1}, "folded_count": 0,
                            "flops": 3 * N2 + 256 * 256 * (32 * 32 - 1) + 8 * 8 * (32 * 32 - 1) + (8 * 8 - 1),
                            "bytes_read": 2 * N2 * 4 + N2 * 4 + (N2 * 4 + 4) + (256 * 256 * 4 + 4) + (8 * 8 * 4 + 4)},
    # dot, the Sin/add/Relu loop fusion, the YNNPACK reduce (kCustom) of N2 elements.
    "matmul_chain-tf2.21": {"kernel_count": 3, "fusions_by_kind": {"kLoop": 1, "kCustom": 1}, "folded_count": 0,
                            "flops": 2 * 8192**3 + 3 * N2 + (N2 - 1),
                            "bytes_read": 2 * N2 * 4 + N2 * 4 + (N2 * 4 + 4)},
    # one loop fusion of the 1000 adds over 1e8 elements, reading x and the scalar once.
    "fused_additions-tf2.17": {"kernel_count": 1, "fusions_by_kind": {"kLoop": 1}, "folded_count": 0,
                               "flops": 1000 * 10**8, "bytes_read": 4 * 10**8 + 4},
    "fused_additions-tf2.21": {"kernel_count": 1, "fusions_by_kind": {"kLoop": 1}, "folded_count": 0,
                               "flops": 1000 * 10**8, "bytes_read": 4 * 10**8 + 4},
}


def facts(folder: Path) -> dict:
    """The hand-worked facts above, after a look at the HLO text that they still describe it."""
    text = (folder / "post.hlo").read_text()
    expected = _FACTS[folder.name]
    fusions = re.findall(r"= \S+ fusion\(.*?kind=(k\w+)", text)
    assert {k: fusions.count(k) for k in set(fusions)} == expected["fusions_by_kind"], folder
    return expected


# -- the matrix, from saved captures -------------------------------------------------------------


@pytest.mark.parametrize("name", ["matmul_chain", "fused_additions"])
def test_json_matrix_of_saved_captures(capsys, name):
    a, b = SAVED / f"{name}-tf2.17", SAVED / f"{name}-tf2.21"
    code, out, err = run_cli(["versions", str(a), str(b), "--format", "json"], capsys)
    assert code == 0, err
    data = json.loads(out)
    v17, v21 = data["versions"]
    assert v17["tensorflow"] == "2.17.1" and v21["tensorflow"] == "2.21.0"
    assert v17["capture"] == str(a) and v17["python"] == json.loads((a / "capture.json").read_text())["python"]
    for got, folder in ((v17, a), (v21, b)):
        assert {k: got[k] for k in facts(folder)} == facts(folder)
    (d,) = data["diffs"]
    assert (d["from"], d["to"]) == ("TF 2.17.1", "TF 2.21.0")
    code, plain, _ = run_cli(["diff", str(a), str(b), "--format", "json"], capsys)
    expected = json.loads(plain)
    for key in ("summary", "kernels", "fusions", "opcodes", "instructions"):
        assert d["diff"][key] == expected[key]  # the same matcher and report as hloviz diff


def test_matmul_matrix_says_what_changed(capsys):
    code, out, _ = run_cli(["versions", str(SAVED / "matmul_chain-tf2.17"), str(SAVED / "matmul_chain-tf2.21")], capsys)
    assert code == 0
    rows = {line.split("  ")[1].strip(): line for line in out.splitlines()[2:12] if line.startswith("  ")}
    assert rows["kernels"].split()[-2:] == ["5", "3"]
    assert "kLoop 1" in rows["fusions by kind"] and "kCustom 1" in rows["fusions by kind"]
    assert "hloviz diff: TF 2.17.1 → TF 2.21.0\nfewer kernels: 5 → 3" in out


def test_markdown_matrix(capsys):
    code, out, _ = run_cli(["versions", str(SAVED / "matmul_chain-tf2.17"), str(SAVED / "matmul_chain-tf2.21"),
                       "--format", "markdown"], capsys)
    assert code == 0
    assert out.startswith("## hloviz versions: `matmul_chain`\n\n| | `TF 2.17.1` | `TF 2.21.0` |\n|---|---|---|\n")
    assert "| kernels | 5 | 3 |" in out
    assert "### hloviz diff: `TF 2.17.1` → `TF 2.21.0`" in out


def test_fail_on_compares_every_version_with_the_first(capsys):
    a, b = str(SAVED / "matmul_chain-tf2.21"), str(SAVED / "matmul_chain-tf2.17")
    code, _, err = run_cli(["versions", a, b, "--fail-on", "kernels-increased"], capsys)
    assert code == 1 and "--fail-on kernels-increased" in err and "against TF 2.21.0" in err
    code, _, _ = run_cli(["versions", b, a, "--fail-on", "kernels-increased"], capsys)
    assert code == 0
    # three versions: 2.17 → 2.21 → 2.17 ends where it started, but the check is against the first
    code, out, _ = run_cli(["versions", a, b, a, "--fail-on", "kernels-increased", "--format", "json"], capsys)
    data = json.loads(out)
    assert code == 1 and data["fail_on"]["failed"] == ["kernels-increased"]
    assert [(d["from"], d["to"]) for d in data["diffs"]] == [("TF 2.21.0", "TF 2.17.1"), ("TF 2.17.1", "TF 2.21.0 (2)")]


@pytest.mark.requires_dot
def test_html_report_has_the_matrix_and_each_diff_picture(capsys, tmp_path):
    report = tmp_path / "report.html"
    code, _, err = run_cli(["versions", str(SAVED / "fused_additions-tf2.17"), str(SAVED / "fused_additions-tf2.21"),
                       "-o", str(report)], capsys)
    assert code == 0, err
    page = report.read_text()
    assert "<th>TF 2.17.1</th><th>TF 2.21.0</th>" in page and page.count("<svg") == 1
    assert "<h2>TF 2.17.1 → TF 2.21.0</h2>" in page and "Content-Security-Policy" in page


@pytest.mark.parametrize("argv, message", [
    (["samples/captures/fused_additions-tf2.17"], "at least two capture folders"),
    (["samples/fused_additions.py:fused_additions", "--tf", "2.17"], "at least two versions"),
    (["samples/fused_additions.py:fused_additions", "--tf", "2.17", "--tf", "2.17"], "version 2.17 is given twice"),
    (["samples/fused_additions.py:fused_additions", "--tf", "2.17", "--jax", "0.4.30"], "not both"),
    (["a", "b", "--tf", "2.17", "--tf", "2.21"], "give one model.py:function TARGET"),
    (["samples/captures/fused_additions-tf2.17", "--tf", "2.17", "--tf", "2.21"], "not a model.py:function target"),
    (["x", "y", "-o", "r.svg"], "-o writes an HTML report"),
    (["x", "y", "--fail-on", "bigger"], "unknown --fail-on check 'bigger'"),
])
def test_bad_invocations_exit_2_with_one_message(capsys, argv, message):
    code, out, err = run_cli(["versions", *argv], capsys)
    assert code == 2 and message in err and "Traceback" not in err and out == ""


# -- live, through managed environments of stand-in releases ----------------------------------------


@pytest.fixture
def fake_envs(tmp_path, wheels, monkeypatch):  # noqa: F811
    manager = make_manager(tmp_path / "envs", wheels)
    monkeypatch.setattr(envs, "default_manager", lambda: manager)
    monkeypatch.chdir(tmp_path)
    return manager


def test_versions_captures_each_release_and_matches_the_saved_captures(capsys, tmp_path, fake_envs):
    model = write_target(tmp_path / "model")
    code, out, err = run_cli(["versions", f"{model}:fused_additions", "--tf", "2.17", "--tf", "2.21",
                         "--format", "json", "--save", str(tmp_path / "caps")], capsys)
    assert code == 0, err
    data = json.loads(out)
    assert [v["tensorflow"] for v in data["versions"]] == ["2.17.9", "2.21.9"]
    assert [v["requested"] for v in data["versions"]] == ["2.17", "2.21"]
    for v, saved in zip(data["versions"], ("fused_additions-tf2.17", "fused_additions-tf2.21")):
        folder = Path(v["capture"])
        assert folder == tmp_path / "caps" / f"fused_additions-tf{v['requested']}"
        assert (folder / "post.hlo").read_text() == (SAVED / saved / "post.hlo").read_text()
        assert json.loads((folder / "capture.json").read_text())["tensorflow"] == v["tensorflow"]
        assert {k: v[k] for k in facts(SAVED / saved)} == facts(SAVED / saved)
        assert set(v["seconds"]) >= {"resolving", "checking", "capturing"}
    # progress on stderr, per version and phase, with the time each took
    assert "tf 2.17: resolving TensorFlow 2.17…" in err and "tf 2.21: capturing " in err
    assert "tf 2.17: done in " in err and "checking " in err
    # the diff is the one hloviz diff makes of the saved captures
    saved_diff = diff_modules(hloviz.parse_file(SAVED / "fused_additions-tf2.17" / "post.hlo"),
                              hloviz.parse_file(SAVED / "fused_additions-tf2.21" / "post.hlo"))
    assert data["diffs"][0]["diff"]["summary"]["removed"] == len(saved_diff.by_status("removed"))

    code, _, err = run_cli(["versions", f"{model}:fused_additions", "--tf", "2.17", "--tf", "2.21",
                       "--save", str(tmp_path / "caps")], capsys)
    assert code == 0 and "tf 2.17: using the cached environment" in err and "resolving" not in err


def test_every_capture_command_takes_tf(capsys, tmp_path, fake_envs):
    model = write_target(tmp_path / "model")
    target = f"{model}:fused_additions"
    code, out, err = run_cli(["dump", target, "--tf", "2.17", "-o", str(tmp_path / "dumped")], capsys)
    assert code == 0, err
    info = json.loads((tmp_path / "dumped" / "capture.json").read_text())
    assert info["tensorflow"] == "2.17.9" and info["env"]["requested"] == "2.17"
    code, out, err = run_cli(["stats", target, "--tf", "2.21", "--json"], capsys)
    assert code == 0, err
    assert json.loads(out)["kernel_count"] == facts(SAVED / "fused_additions-tf2.21")["kernel_count"]
    code, out, err = run_cli(["diff", target, "--tf", "2.17", "--tf", "2.21", "--format", "json"], capsys)
    assert code == 0, err
    d = json.loads(out)
    assert (d["before"]["tensorflow"], d["after"]["tensorflow"]) == ("2.17.9", "2.21.9")
    code, out, err = run_cli(["diff", str(SAVED / "fused_additions-tf2.17"), target, "--tf", "2.21",
                         "--format", "json"], capsys)
    assert code == 0 and json.loads(out)["after"]["tensorflow"] == "2.21.9"


@pytest.mark.requires_dot
def test_show_and_render_take_tf(capsys, tmp_path, fake_envs):
    model = write_target(tmp_path / "model")
    code, _, err = run_cli(["render", f"{model}:fused_additions", "--tf", "2.17", "-o", str(tmp_path / "p.svg")], capsys)
    assert code == 0, err
    assert "<svg" in (tmp_path / "p.svg").read_text()
    code, out, err = run_cli(["show", f"{model}:fused_additions", "--tf", "2.21", "-o", str(tmp_path / "show")], capsys)
    assert code == 0, err
    assert (tmp_path / "show" / "report.html").is_file() and "1 kernel" in out


@pytest.mark.parametrize("argv, message", [
    (["stats", "samples/captures/fused_additions-tf2.17", "--tf", "2.17"], "is already captured HLO"),
    (["stats", "--pre", "a.hlo", "--post", "b.hlo", "--tf", "2.17"], "--pre/--post files"),
    (["stats", "model/model.py:fused_additions", "--tf", "2.17", "--jax", "0.4.30"], "not both"),
    (["stats", "model/model.py:fused_additions", "--tf", "two"], "--tf takes a release number"),
    (["stats", "model/model.py:fused_additions", "--tf", "2.17", "--arg", "f32[1,"], "--arg"),
    (["diff", "model/model.py:fused_additions", "--tf", "2.17"], "give two sides"),
    (["diff", "model/model.py:fused_additions", "--tf", "2.17", "--tf", "2.19", "--tf", "2.21"], "once or twice"),
    (["envs", "remove"], "name the environments to remove"),
])
def test_bad_tf_invocations_exit_2(capsys, tmp_path, fake_envs, argv, message):
    write_target(tmp_path / "model")
    (tmp_path / "samples" / "captures").mkdir(parents=True)
    import shutil

    shutil.copytree(SAVED / "fused_additions-tf2.17", tmp_path / "samples" / "captures" / "fused_additions-tf2.17")
    code, _out, err = run_cli([*argv], capsys)
    assert code == 2 and message in err and "Traceback" not in err, err


def test_failures_under_a_release_exit_2_with_the_reason(capsys, tmp_path, fake_envs):
    model = write_target(tmp_path / "model")
    code, _, err = run_cli(["versions", f"{model}:new_api", "--tf", "2.17", "--tf", "2.21"], capsys)
    assert code == 2 and "under TensorFlow 2.17.9: tracing new_api failed: AttributeError" in err
    code, _, err = run_cli(["stats", f"{model}:fused_additions", "--tf", "2.16"], capsys)
    assert code == 2 and "TensorFlow 2.16.9 installed, but it does not import" in err


def test_envs_list_and_remove(capsys, tmp_path, fake_envs):
    fake_envs.ensure("tensorflow", "2.17")
    fake_envs.ensure("tensorflow", "2.21")
    code, out, _ = run_cli(["envs", "list", "--json"], capsys)
    data = json.loads(out)
    assert code == 0 and data["root"] == str(fake_envs.root)
    assert [(e["requested"], e["installed"]) for e in data["environments"]] == [
        ("2.21", {"tensorflow": "2.21.9"}), ("2.17", {"tensorflow": "2.17.9"})]
    assert all(e["current"] and e["size_bytes"] > 0 for e in data["environments"])
    code, out, _ = run_cli(["envs", "list"], capsys)
    assert code == 0 and "2 environment(s)" in out and fake_envs.name_for("tensorflow", "2.17") in out
    code, out, _ = run_cli(["envs", "remove", "--tf", "2.17"], capsys)
    assert code == 0 and out == f"removed {fake_envs.name_for('tensorflow', '2.17')}\n"
    code, out, _ = run_cli(["envs", "prune"], capsys)
    assert code == 0 and out.startswith("nothing to prune")
    assert [e.manifest["requested"] for e in fake_envs.list()] == ["2.21"]


def test_the_docs_versions_example_matches_the_saved_captures(capsys):
    """The docs (docs/diff.md) show a live run; its matrix rows must be what the saved captures of the same
    two releases give (only the time and the capture folders differ)."""
    import re

    text = (ROOT / "docs" / "diff.md").read_text(encoding="utf-8")
    section = text[text.index("## Two TensorFlow versions: `hloviz versions`"):]
    assert section.split("```sh\n", 1)[1].startswith(
        "hloviz versions samples/fused_additions.py:fused_additions --tf 2.17 --tf 2.21\n")
    shown = present(re.search(r"<!-- versions-sample-output[^>]*-->\n```text\n(.*?)```\n", section, re.DOTALL)).group(1)
    code, out, _ = run_cli(["versions", str(SAVED / "fused_additions-tf2.17"), str(SAVED / "fused_additions-tf2.21")], capsys)
    assert code == 0

    def rows(block: str) -> list[list[str]]:
        lines = block.splitlines()
        start = next(i for i, ln in enumerate(lines) if ln.strip().startswith("kernels"))
        end = next(i for i, ln in enumerate(lines) if ln.strip().startswith("python"))
        return [re.split(r"\s{2,}", ln.strip()) for ln in lines[start:end + 1]]

    assert rows(shown) == rows(out)
    assert shown.splitlines()[2].split() == ["TF", "2.17.1", "TF", "2.21.0"]
    diff_head = out[out.index("hloviz diff:"):].splitlines()[:2]
    assert "\n".join(diff_head) in shown
