"""``hloviz passes``: the pass history, checked against XLA's own dump files.

The snapshot sets in samples/captures/passes/ are what XLA wrote (scripts/make_pass_dumps.py).
The oracle here reads them without hloviz: the file names with a regex (which snapshots, in
which order, after which pass) and the texts with a regex (the first snapshot a fusion or a
constant value appears in, the last one an op name appears in).
"""

from __future__ import annotations

import json
import os
import re
import tarfile
from itertools import pairwise
from pathlib import Path

import pytest

from hloviz.api.passes import passes, read_pass_history
from hloviz.errors import InputError
from tests import run_cli

SETS = Path(__file__).resolve().parents[1] / "samples" / "captures" / "passes"
NAMES = ("fused_additions", "fused_additions_const", "keras_cnn_train", "jax_mlp", "fused_additions-tf2.17", "cnn_sgd")

# -- the oracle: XLA's files read with regular expressions ------------------------------------

_FILE = re.compile(r"^module_\d+\..+?\.(\d{4})\.([^.]+)\.(?:after_([^.]+)\.before_[^.]+|([^.]+))\.txt$")
_FUSION = re.compile(r"^\s*(?:ROOT )?%?([\w.\-]+) = \S.*? fusion\(", re.MULTILINE)


def snapshot_files(folder: Path) -> list[tuple[int, str, str, Path]]:
    """(index, pipeline or pass, pass or step, path) of each snapshot, by index."""
    out = []
    for p in folder.iterdir():
        m = _FILE.match(p.name)
        if m:
            index, first, after, during = m.groups()
            out.append((int(index), first, after or during, p))
    return sorted(out)


def final_file(folder: Path) -> Path:
    return next(p for p in folder.iterdir() if p.name.endswith("after_optimizations.txt"))


@pytest.fixture(scope="module", params=NAMES)
def dump(request, tmp_path_factory) -> Path:
    return extract(request.param, tmp_path_factory.mktemp(request.param))


def extract(name: str, where: Path) -> Path:
    with tarfile.open(SETS / f"{name}.tar.xz") as tar:
        tar.extractall(where, filter="data")
    return where


@pytest.fixture
def fresh(tmp_path) -> dict[str, Path]:
    """Each set, extracted afresh (the tests that break a set)."""
    return {n: extract(n, tmp_path / n) for n in NAMES}


# -- the history against the files --------------------------------------------------------------

def test_every_snapshot_xla_wrote_is_listed_in_its_order(dump):
    history = read_pass_history(dump).history
    files = snapshot_files(dump)
    assert len(files) >= 20
    listed = [(s.step.index, s.step.pipeline if s.step.during is None else s.step.pass_name,
               s.step.pass_name if s.step.during is None else s.step.during) for s in history.steps]
    assert listed == [(i, first, second) for i, first, second, _ in files]
    assert history.complete, history.problems


def test_each_fusion_is_credited_to_the_first_snapshot_that_holds_it(dump):
    history = read_pass_history(dump).history
    final = set(_FUSION.findall(final_file(dump).read_text()))
    assert {f.name for f in history.fusions} == final and final
    first: dict[str, tuple[int, str]] = {}
    for index, _, after, path in snapshot_files(dump):
        for name in _FUSION.findall(path.read_text()):
            first.setdefault(name, (index, after))
    for f in history.fusions:
        assert f.step is not None, f
        assert (f.step.index, f.step.pass_name) == first[f.name]


def test_changed_steps_are_those_whose_text_differs_from_the_one_before(dump):
    history = read_pass_history(dump).history
    texts = [p.read_text() for *_, p in snapshot_files(dump)]
    differs = {i for i in range(1, len(texts)) if texts[i] != texts[i - 1]}
    changed = {s.step.index for s in history.changed_steps}
    assert changed <= differs | {0}
    for s in history.steps:  # a snapshot equal to the one before changes nothing
        if s.step.index not in differs and s.step.index > 0:
            assert not s.changed


# -- the seed's two questions -------------------------------------------------------------------

def test_the_1000_adds_became_one_kernel_in_the_fusion_pass(tmp_path):
    folder = extract("fused_additions", tmp_path)
    history = read_pass_history(folder).history
    (fusion,) = history.fusions
    assert fusion.step is not None and fusion.step.pass_name == "fusion"
    files = snapshot_files(folder)
    text = {i: p.read_text() for i, _, _, p in files}
    made = fusion.step.index
    assert len(_FUSION.findall(text[made - 1])) == 0 and _FUSION.findall(text[made]) == [fusion.name]
    adds_before = len(re.findall(r"= f32\[100000000\]\S* add\(", text[made - 1]))
    assert adds_before == 1000  # 1000 adds at top level, then one loop fusion holding them
    fused = re.search(r"fused_computation.*?\n}\n", text[made], re.DOTALL)
    assert fused is not None and len(re.findall(r" add\(", fused.group(0))) == 1000


def test_the_constant_1000_was_written_by_constant_folding(tmp_path):
    folder = extract("fused_additions_const", tmp_path)
    history = read_pass_history(folder).history
    (fold,) = history.folded
    assert fold.value == "1000" and len(fold.from_ops) == 999
    first = next(i for i, _, _, p in snapshot_files(folder) if re.search(r"f32\[\] constant\(1000\)", p.read_text()))
    assert fold.step is not None and fold.step.index == first and fold.step.pass_name == "constant_folding"


def test_each_eliminated_op_vanished_in_the_snapshot_credited(tmp_path):
    folder = extract("fused_additions_const", tmp_path)
    history = read_pass_history(folder).history
    files = snapshot_files(folder)
    assert len(history.eliminated) == 999
    for e in history.eliminated[::97]:
        pattern = re.compile(f'op_name="{re.escape(e.op_name)}"')
        last_with = max(i for i, _, _, p in files if pattern.search(p.read_text()))
        assert e.step is not None and e.step.index == last_with + 1


def test_focus_follows_one_add_into_the_fusion(tmp_path):
    folder = extract("fused_additions", tmp_path)
    result = read_pass_history(folder, focus="add_17")
    fused = [j for j in result.journey if j.fusions]
    assert fused and fused[0].step is not None and fused[0].step.pass_name == "fusion"
    assert fused[0].fusions == ("add_add_fusion",)
    assert "add_17" in result.to_text()
    with pytest.raises(InputError, match="add_1700"):
        read_pass_history(folder, focus="add_1700x")


# -- incomplete, renamed, truncated folders: partial history, never a wrong credit ---------------

def _fusion_snapshot(folder: Path) -> Path:
    return next(p for *_, p in snapshot_files(folder) if ".after_fusion." in p.name)


def test_a_missing_snapshot_is_named_and_nothing_is_credited_across_it(fresh):
    folder = fresh["fused_additions"]
    gone = _fusion_snapshot(folder)
    gone.unlink()
    history = read_pass_history(folder).history
    assert not history.complete
    index = int(_FILE.match(gone.name).group(1))  # type: ignore[union-attr]
    assert any(f"snapshot {index} missing" in p for p in history.problems)
    (fusion,) = history.fusions
    assert fusion.step is None and "missing" in fusion.note


def test_a_truncated_snapshot_is_unreadable_not_a_traceback(fresh):
    folder = fresh["fused_additions"]
    path = _fusion_snapshot(folder)
    text = path.read_text()
    path.write_text(text[: len(text) // 2])
    history = read_pass_history(folder).history
    assert any("unreadable" in p for p in history.problems)
    (fusion,) = history.fusions
    assert fusion.step is None


def test_a_renamed_snapshot_leaves_a_gap(fresh):
    folder = fresh["jax_mlp"]
    path = _fusion_snapshot(folder)
    path.rename(folder / "fusion-snapshot.txt")
    history = read_pass_history(folder).history
    assert any("missing" in p for p in history.problems)
    assert all(f.step is None or f.step.pass_name != "fusion" for f in history.fusions)


def test_gzipped_snapshots_read_like_plain_ones(fresh):
    import gzip

    folder = fresh["jax_mlp"]
    plain = read_pass_history(folder).to_dict()
    for p in list(folder.iterdir()):
        p.with_name(p.name + ".gz").write_bytes(gzip.compress(p.read_bytes()))
        p.unlink()
    assert read_pass_history(folder).to_dict()["fusions"] == plain["fusions"]


def test_no_optimized_module_is_said(fresh):
    folder = fresh["jax_mlp"]
    final_file(folder).unlink()
    history = read_pass_history(folder).history
    assert any("after_optimizations" in p for p in history.problems)


def test_folders_without_snapshots_are_input_errors(tmp_path, capsys):
    with pytest.raises(InputError, match="no per-pass snapshots"):
        passes(str(tmp_path))
    code, out, err = run_cli(["passes", "samples/captures/fused_additions"], capsys)
    assert code == 2 and "no per-pass snapshots" in err and "Traceback" not in err and out == ""
    code, _, err = run_cli(["passes", "samples/captures/fused_additions/post.hlo"], capsys)
    assert code == 2 and "per-pass snapshots" in err


# -- the command ----------------------------------------------------------------------------------

def test_json_has_passes_fusions_folded_eliminated(tmp_path, capsys):
    folder = extract("fused_additions_const", tmp_path)
    code, out, _ = run_cli(["passes", str(folder), "--json"], capsys)
    assert code in (0, None)
    data = json.loads(out)
    assert {"passes", "fusions", "folded", "eliminated", "snapshots"} <= data.keys()
    assert all({"index", "pipeline", "pass", "instructions", "fusions", "changes"} <= p.keys() for p in data["passes"])
    assert data["fusions"][0]["created_by"]["pass"] == "fusion"
    assert data["folded"][0]["pass"]["pass"] == "constant_folding"


def test_the_temporary_dump_folder_is_removed_on_ctrl_c(monkeypatch, tmp_path):
    import hloviz.capture as capture
    from hloviz.capture.dumps.pass_dump import pass_dump_capture

    seen: list[str] = []

    def interrupted(*_a, **_k):
        seen.append(os.environ["XLA_FLAGS"])
        raise KeyboardInterrupt

    monkeypatch.setattr(capture, "load_target", interrupted)
    monkeypatch.setenv("XLA_FLAGS", "--xla_cpu_enable_fast_math=false --xla_dump_to=/elsewhere")
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    with pytest.raises(KeyboardInterrupt):
        with pass_dump_capture("model.py:f"):
            pass
    assert list(tmp_path.iterdir()) == []
    assert os.environ["XLA_FLAGS"] == "--xla_cpu_enable_fast_math=false --xla_dump_to=/elsewhere"
    assert "--xla_cpu_enable_fast_math=false" in seen[0] and "/elsewhere" not in seen[0]
    assert "--xla_dump_hlo_pass_re=.*" in seen[0]


@pytest.mark.requires_dot
def test_the_filmstrip_names_the_pass_of_each_kernel(tmp_path, capsys):
    folder = extract("jax_mlp", tmp_path / "dump")
    page = tmp_path / "film.html"
    code, _, err = run_cli(["passes", str(folder), "-o", str(page), "--pictures", "2"], capsys)
    assert code in (0, None), err
    import html as html_lib

    html = html_lib.unescape(page.read_text())
    assert html.count("<svg") == 3  # two steps and the optimized module: bounded by --pictures
    first: dict[str, tuple[int, str]] = {}
    for index, _, after, path in snapshot_files(folder):
        for name in _FUSION.findall(path.read_text()):
            first.setdefault(name, (index, after))
    fusions = set(_FUSION.findall(final_file(folder).read_text()))
    assert fusions
    for name in fusions:  # the optimized module's picture names the pass of each kernel
        index, after = first[name]
        assert f"made by {after} (#{index})" in html
        assert f'id="s{index}"' in html and f'href="#s{index}"' in html


def _changing_passes(folder: Path) -> set[str]:
    """PIPELINE/PASS of each between-pass snapshot whose text differs from the one before."""
    files = snapshot_files(folder)
    out = set()
    for (_, _, _, before), (_, first, second, path) in pairwise(files):
        between = ".after_" in path.name and ".before_" in path.name and second != "pipeline-start"
        if between and path.read_text() != before.read_text():
            out.add(f"{first}/{second}")
    return out


def _pipelines(folder: Path) -> set[str]:
    return {first for _, first, second, p in snapshot_files(folder) if ".before_" in p.name}


def test_versions_passes_tells_tf_2_17_from_2_21_as_the_files_do(tmp_path, capsys):
    old, new = extract("fused_additions-tf2.17", tmp_path / "a"), extract("fused_additions", tmp_path / "b")
    code, out, err = run_cli(["versions", str(old), str(new), "--passes", "--format", "json"], capsys)
    assert code in (0, None), err
    (d,) = json.loads(out)["diffs"]
    assert set(d["pipelines_added"]) == _pipelines(new) - _pipelines(old)
    assert set(d["pipelines_removed"]) == _pipelines(old) - _pipelines(new)
    assert {p["pass"] for p in d["now_changing"]} == _changing_passes(new) - _changing_passes(old)
    assert {p["pass"] for p in d["no_longer_changing"]} == _changing_passes(old) - _changing_passes(new)
    assert {p["pass"] for p in d["no_longer_changing"]} == {"HLO_passes_through_layout_assignment/dynamic_padder",
                                                            "HLO_passes_after_layout_assignment/dce"}


def test_a_cloned_fusion_names_the_fusion_pass_too(tmp_path):
    folder = extract("fused_additions-tf2.17", tmp_path)
    (f,) = read_pass_history(folder).history.fusions
    assert f.name == "fusion.clone" and f.step is not None and f.step.pass_name == "cpu-parallel-task-assigner"
    assert f.clone_of == "fusion" and f.clone_of_step is not None and f.clone_of_step.pass_name == "fusion"
    files = snapshot_files(folder)
    first = next(i for i, _, _, p in files if "fusion" in _FUSION.findall(p.read_text()))
    assert f.clone_of_step.index == first


def test_two_files_with_one_index_credit_neither(fresh):
    folder = fresh["jax_mlp"]
    path = _fusion_snapshot(folder)
    index = _FILE.match(path.name).group(1)  # type: ignore[union-attr]
    other = folder / f"module_0002.jit_mlp.{index}.elsewhere.after_fusion.before_fusion-wrapper.txt"
    other.write_text(path.read_text())
    history = read_pass_history(folder).history
    assert any("2 files claim this snapshot" in p for p in history.problems)
    assert all(f.step is None or f.step.index != int(index) for f in history.fusions)


# -- credits across a gap, snapshots in two forms, the report's lists (issue 35's audit) ----------

def test_ops_that_vanished_across_a_missing_snapshot_are_not_credited(fresh):
    """fused_additions_const: constant folding removes the adds over several snapshots; one of
    them is deleted. The oracle reads each op's last snapshot among the files left: an op whose
    next file comes after the gap is uncredited, any other is credited to that next file."""
    folder = fresh["fused_additions_const"]
    files = snapshot_files(folder)
    texts = {i: p.read_text() for i, _, _, p in files}
    op_names = re.compile(r'op_name="([^"]+)"')
    count = {i: set(op_names.findall(t)) for i, t in texts.items()}
    # the snapshot after which the most ops are gone: delete it
    gone_at = max((i for i in count if i - 1 in count), key=lambda i: len(count[i - 1] - count[i]))
    assert len(count[gone_at - 1] - count[gone_at]) >= 100
    next(p for i, _, _, p in files if i == gone_at).unlink()
    left = sorted(i for i in texts if i != gone_at)
    history = read_pass_history(folder).history
    assert any(f"snapshot {gone_at} missing" in p for p in history.problems)
    across = 0
    for e in history.eliminated:
        last_with = max(i for i in left if e.op_name in count[i])
        after = next((i for i in left if i > last_with), None)
        if after is None:
            assert e.step is None and "still in the last snapshot" in e.note
        elif after - last_with > 1:  # the files between hold the gap: the pass is unknown
            across += 1
            assert e.step is None and "missing or unreadable" in e.note, e
        else:
            assert e.step is not None and e.step.index == after, e
    assert across >= 100


def test_a_snapshot_in_two_forms_txt_and_txt_gz_is_one_snapshot(fresh):
    import gzip

    folder = fresh["jax_mlp"]
    plain = read_pass_history(folder).to_dict()
    path = _fusion_snapshot(folder)
    path.with_name(path.name + ".gz").write_bytes(gzip.compress(path.read_bytes()))
    twin = read_pass_history(folder)
    assert twin.history.complete, twin.history.problems
    assert twin.to_dict()["fusions"] == plain["fusions"]
    assert all(f.step is not None for f in twin.history.fusions)


def test_a_pass_line_names_three_things_and_counts_the_rest():
    from hloviz.analysis.passes import StepChanges
    from hloviz.analysis.passes.report import describe_changes

    three = StepChanges(fusions_created=("f1", "f2", "f3"))
    four = StepChanges(fusions_created=("f1", "f2", "f3", "f4"))
    assert describe_changes(three) == "+3 fusion(s) (f1, f2, f3)"
    assert describe_changes(four) == "+4 fusion(s) (f1, f2, f3, … (4))"
    assert describe_changes(StepChanges(changed=("a", "b"), added=("c",))) == "+1 ~2 instructions"


def _facts(*ops: str):
    """The facts of a hand-written snapshot whose instructions carry the op names ``ops``."""
    import hloviz
    from hloviz.analysis.passes.facts import module_facts

    lines = [f'  %n{k} = f32[2]{{0}} negate(%{"p" if k == 0 else f"n{k - 1}"}), metadata={{op_name="{op}"}}'
             for k, op in enumerate(ops)]
    last = f"n{len(ops) - 1}" if ops else "p"
    text = ("HloModule m\n\nENTRY %main (p: f32[2]) -> f32[2] {\n  %p = f32[2]{0} parameter(0)\n"
            + "".join(line + "\n" for line in lines) + f"  ROOT %r = f32[2]{{0}} copy(%{last})\n}}\n")
    return module_facts(hloviz.parse(text), text)


def test_an_op_that_vanishes_and_comes_back_is_credited_where_it_vanished_for_good():
    from hloviz.analysis.passes import HistoryBuilder, PassStep

    start = _facts("model/a", "model/b")
    builder = HistoryBuilder("m", start)
    builder.add(PassStep(0, "p", "one"), _facts("model/b"))  # model/a gone ...
    builder.add(PassStep(1, "p", "two"), _facts("model/a", "model/b"))  # ... and back
    builder.add(PassStep(2, "p", "three"), _facts("model/a"))  # model/b gone for good
    history = builder.finish(_facts())  # the optimized module: neither
    by_op = {e.op_name: e for e in history.eliminated}
    # model/a is still in the last snapshot (2): removed after it, not by pass "one"
    assert by_op["model/a"].step is None and "still in the last snapshot" in by_op["model/a"].note
    assert by_op["model/b"].step is not None and by_op["model/b"].step.pass_name == "three"
