"""GPU captures (JAX 0.11.2 on an NVIDIA H200, ``samples/gpu_capture.sh``): every command reads
them, and what hloviz says agrees with XLA's own files of the same compile.

The oracles are read here, independently of hloviz: the optimized module's text by regular
expressions, and XLA's dump of that compile (``samples/captures/gpu/xla/NAME/``, written by
``--xla_dump_to`` beside the capture): its ``*-buffer-assignment.txt`` allocations and its
``*-live-range.txt`` ranges. GPU fusion differs from CPU fusion (Triton gemm fusions, async
``fusion-start``/``fusion-done`` pairs, ``sm_9.0a_gpu_`` in dump file names), which is why
these captures are kept.
"""

from __future__ import annotations

import gzip
import json
import re
import shutil
from pathlib import Path

import pytest

from . import run_cli
from .xla_records import most_live

ROOT = Path(__file__).resolve().parent.parent
GPU = ROOT / "samples" / "captures" / "gpu"
XLA = GPU / "xla"
CAPTURES = sorted(p.name for p in GPU.iterdir() if (p / "capture.json").is_file())
PASSES = ROOT / "samples" / "captures" / "passes"


def _text(path: Path) -> str:
    data = path.read_bytes()
    return (gzip.decompress(data) if path.suffix == ".gz" else data).decode()


def _one(folder: Path, suffix: str) -> Path:
    found = [p for p in folder.iterdir() if p.name.removesuffix(".gz").endswith(suffix)]
    assert len(found) == 1, (folder, suffix, found)
    return found[0]


def _post(name: str) -> str:
    folder = GPU / name
    return _text(folder / "post.hlo") if (folder / "post.hlo").is_file() else _text(folder / "post.hlo.gz")


def test_the_gpu_captures_are_there():
    """Eleven programs, each compiled for the GPU (not a CPU capture filed here by mistake)."""
    assert len(CAPTURES) == 11
    for name in CAPTURES:
        info = json.loads((GPU / name / "capture.json").read_text())
        assert info["platform"] == "gpu" and info["device"].startswith("cuda"), name
        assert "sm_9.0a_gpu_after_optimizations" in _one(XLA / name, "after_optimizations.txt").name


@pytest.mark.parametrize("name", CAPTURES)
@pytest.mark.parametrize("command", [["stats"], ["stats", "--json"], ["stats", "--by", "scope"], ["memory"]])
def test_every_command_reads_a_gpu_capture(name, command, capsys):
    code, out, err = run_cli([*command, str(GPU / name)], capsys)
    assert code == 0, err
    assert "Traceback" not in out + err and "internal error" not in err


def test_the_seed_question_on_a_gpu_1000_adds_are_one_kernel(capsys):
    """``x + delta`` 1000 times: the oracle is the text — the entry computation launches one
    fusion, whose computation holds the 1000 adds — and hloviz counts one kernel holding them."""
    post = _post("fused_additions")
    entry = post[post.index("\nENTRY "):]
    entry = entry[:entry.index("\n}")]
    fusions = re.findall(r"%(\S+) = \S+ fusion\(.*?calls=%([\w.-]+)", entry)
    assert len(fusions) == 1
    body = re.search(r"\n%" + re.escape(fusions[0][1]) + r" [^\n]*\{\n(.*?)\n\}", post, re.DOTALL)
    assert body is not None and len(re.findall(r" add\(", body.group(1))) == 1000
    code, out, _ = run_cli(["stats", "--json", str(GPU / "fused_additions")], capsys)
    stats = json.loads(out)
    assert code == 0 and stats["kernel_count"] == 1
    assert [k["name"] for k in stats["kernels"]] == [fusions[0][0]]


def test_a_constant_chain_on_a_gpu_folds_into_one_add_of_1000():
    """With a constant instead of ``delta``, XLA's simplifier leaves one add of the constant 1000."""
    post = _post("fused_additions_const")
    assert len(re.findall(r" add\(", post)) == 1
    assert re.search(r"= f32\[\] constant\(1000\)", post)


def _allocations(text: str) -> list[int]:
    return [int(m) for m in re.findall(r"^allocation \d+: size (\d+)", text, re.MULTILINE)]


def _peak(assignment: str, live: str) -> int:
    """The most bytes live at one position of the schedule, from XLA's own files: each value's
    allocation, offset and size from the assignment, its first and last position (both live)
    from the ranges. Values that share bytes (an output written into a donated parameter's
    buffer) count once: what is live at a position is the union of their byte ranges."""
    where: dict[str, tuple[int, int, int]] = {}
    allocation = -1
    for line in assignment.splitlines():
        if m := re.match(r"allocation (\d+):", line):
            allocation = int(m.group(1))
        elif m := re.match(r" value: <\d+ (\S+?)(\{[\d,]*\})?(?: \(phi\))? @\d+> \(size=(\d+),offset=(\d+)\)", line):
            where[f"{m.group(1)}{m.group(2) or '{}'}"] = (allocation, int(m.group(4)), int(m.group(3)))
    ranges = [(v, int(a), int(b)) for v, a, b in re.findall(r"^    (\S+?\{[\d,]*\}):(-?\d+)-(-?\d+)$", live, re.MULTILINE)]
    assert ranges and all(v in where for v, _, _ in ranges)
    return most_live(ranges, where)


@pytest.mark.parametrize("name", CAPTURES)
def test_gpu_memory_is_xlas_own_record(name, capsys):
    """On a GPU, JAX's ``memory_analysis`` carries no buffer assignment; the capture read it from
    XLA's dump of the same compile. Its total is the sum of XLA's allocations and its peak the
    most bytes XLA's live ranges hold at one position, both computed here from XLA's files.
    (The loops run fusions asynchronously: XLA's record names the fusion inside each async
    computation, which the capture places through ``async_wrapped``.)"""
    assignment = _text(_one(XLA / name, "-buffer-assignment.txt"))
    live = _text(_one(XLA / name, "-live-range.txt"))
    code, out, err = run_cli(["memory", "--json", str(GPU / name)], capsys)
    assert code == 0, err
    report = json.loads(out)
    assert report["source"] == "xla"
    assert report["total_bytes"] == sum(_allocations(assignment))
    assert report["peak"]["bytes"] == _peak(assignment, live)
    record = json.loads((GPU / name / "memory.json").read_text())
    assert "dumped by the compile" in record["origin"] and record["stats"]["argument_size_in_bytes"] >= 0


def _async_pairs(name: str) -> dict[str, list[str]]:
    """From XLA's dump and JAX's text of one compile: the fusion each ``async-start`` of the dump
    runs (the root of its ``async_computation``) → the ``fusion-start`` of JAX's text (same name,
    calling the same fused computation) and the ``fusion-done`` that takes it."""
    dump = _text(_one(XLA / name, "after_optimizations.txt"))
    post = _post(name)
    pairs: dict[str, list[str]] = {}
    for start, computation in re.findall(r"%(\S+) = [^\n]* async-start\([^\n]*?calls=%([\w.\-]+)", dump):
        body = re.search(r"\n%" + re.escape(computation) + r" [^\n]*\{\n(.*?)\n\}", dump, re.DOTALL)
        assert body is not None
        root = re.search(r"ROOT %(\S+) = [^\n]* fusion\([^\n]*?calls=%([\w.\-]+)", body.group(1))
        assert root is not None
        sugar = re.search(r"%" + re.escape(start) + r" = [^\n]* fusion-start\([^\n]*?calls=%([\w.\-]+)", post)
        assert sugar is not None and sugar.group(1) == root.group(2)
        done = re.findall(r"%(\S+) = [^\n]* fusion-done\(%" + re.escape(start) + r"\)", post)
        assert len(done) == 1
        pairs[root.group(1)] = [start, done[0]]
    return pairs


@pytest.mark.parametrize("name", CAPTURES)
def test_the_record_says_which_async_pair_runs_each_named_fusion(name):
    """``memory.json``'s ``async_wrapped`` is what XLA's files say: every fusion the dump runs
    inside an async computation, with the ``fusion-start``/``fusion-done`` of JAX's text that run
    it; and those are exactly the names of XLA's record this text does not print."""
    record = json.loads((GPU / name / "memory.json").read_text())
    pairs = _async_pairs(name)
    assert record.get("async_wrapped", {}) == pairs
    post_names = set(re.findall(r"^\s*(?:ROOT )?%(\S+) = ", _post(name), re.MULTILINE))
    named = {v[1] for a in record["allocations"] for v in a["values"]}
    assert named - post_names == set(pairs)
    assert (len(pairs) > 0) == (name in {"loops_rnn_scan", "loops_vit", "loops_vit_train"})


@pytest.mark.parametrize("name", ["loops_rnn_scan", "loops_vit", "loops_vit_train", "jax_mlp"])
def test_the_capture_finds_the_async_pairs_in_xlas_dump(name, tmp_path):
    """What a GPU capture does after the compile — read XLA's dump of it with the module text
    JAX printed — on the files that compile wrote (stored compressed here, written back as XLA
    wrote them): the record is the saved one, ``async_wrapped`` the pairs XLA's files give."""
    from hloviz.capture.jax import dumped_assignment

    for f in (XLA / name).iterdir():
        (tmp_path / f.name.removesuffix(".gz")).write_text(_text(f))
    saved = json.loads((GPU / name / "memory.json").read_text())
    info = json.loads((GPU / name / "capture.json").read_text())
    record = dumped_assignment(tmp_path, _post(name), saved["stats"], info["jax"])
    assert record is not None and record.get("async_wrapped", {}) == _async_pairs(name)
    assert record == saved


def test_a_capture_saved_before_the_pairs_were_recorded_says_so(tmp_path, capsys):
    """A loop capture whose ``memory.json`` lacks ``async_wrapped`` (saved before it was written)
    cannot place XLA's names: the report estimates, and says why — the async pairs, not
    another compile."""
    folder = tmp_path / "old"
    shutil.copytree(GPU / "loops_vit", folder)
    record = json.loads((folder / "memory.json").read_text())
    del record["async_wrapped"]
    (folder / "memory.json").write_text(json.dumps(record))
    code, out, err = run_cli(["memory", "--json", str(folder)], capsys)
    assert code == 0, err
    report = json.loads(out)
    starts = len(re.findall(r" fusion-start\(", _post("loops_vit")))
    note = next(n for n in report["notes"] if "XLA's buffer assignment names" in n)
    assert report["source"] == "estimate"
    assert f"runs {starts} op(s) asynchronously" in note and "another compile" not in note
    assert "loop_dynamic_slice_fusion.3" in note


@pytest.mark.parametrize("bad", [[1, 2], ["fusion-start"], "fusion-start", ["a b", "c"]])
def test_a_forged_async_wrapped_is_refused(bad, tmp_path, capsys):
    folder = tmp_path / "forged"
    shutil.copytree(GPU / "loops_rnn_scan", folder)
    record = json.loads((folder / "memory.json").read_text())
    record["async_wrapped"] = {"loop_dynamic_update_slice_fusion.1": bad}
    (folder / "memory.json").write_text(json.dumps(record))
    code, _, err = run_cli(["memory", str(folder)], capsys)
    assert code == 2 and "memory.json" in err and "async_wrapped" in err and "Traceback" not in err


@pytest.mark.parametrize("name", CAPTURES)
def test_a_gpu_dump_folder_reads_xlas_record(name, capsys):
    """XLA's dump folder of the compile, as the target: the module text writes tuple elements as
    ``%tuple#N`` and async pairs in full; the record names its own instructions, so the numbers
    are XLA's — total and peak as computed here from its files."""
    assignment = _text(_one(XLA / name, "-buffer-assignment.txt"))
    live = _text(_one(XLA / name, "-live-range.txt"))
    code, out, err = run_cli(["memory", "--json", str(XLA / name)], capsys)
    assert code == 0, err
    report = json.loads(out)
    assert report["source"] == "xla"
    assert report["total_bytes"] == sum(_allocations(assignment))
    assert report["peak"]["bytes"] == _peak(assignment, live)


def test_a_gpu_dump_folder_is_read_as_a_target(capsys):
    """XLA names an H100/H200's optimized module ``…sm_9.0a_gpu_after_optimizations.txt`` (the
    architecture-specific target): the dump folder itself works as a target."""
    folder = XLA / "jax_mlp"
    code, out, err = run_cli(["memory", "--json", str(folder)], capsys)
    assert code == 0, err
    assert json.loads(out)["total_bytes"] == sum(_allocations(_text(_one(folder, "-buffer-assignment.txt"))))
    code, out, err = run_cli(["stats", "--json", str(folder)], capsys)
    assert code == 0, err
    post = _text(_one(folder, "after_optimizations.txt"))
    entry = post[post.index("\nENTRY "):]
    assert json.loads(out)["kernel_count"] == len(re.findall(r" fusion\(", entry[:entry.index("\n}")]))


#: Which pass made each fusion of the optimized module, read by hand from XLA's snapshots in
#: the archive: the snapshot where a fusion of that body first appears, and its name there.
#: XLA:GPU's rename_fusions later names each fusion after what it holds.
MADE_BY = {
    "gpu_fused_additions": {"loop_add_fusion": ("priority-fusion", "fusion.999")},
    "gpu_jax_mlp": {"gemm_fusion_dot_general.2": ("triton-gemm-rewriter", None),
                    "gemm_fusion_dot_general.3": ("triton-gemm-rewriter", None),
                    "input_reduce_fusion": ("priority-fusion", "fusion.2")},
}


@pytest.mark.parametrize("name", sorted(MADE_BY))
def test_a_gpu_pass_history_credits_the_pass_that_fused(name, capsys):
    """XLA's GPU pipeline, snapshot by snapshot: hloviz reads it with no gap, and credits each
    fusion to the pass that made it — not to ``rename_fusions``, which only renamed it."""
    code, out, err = run_cli(["passes", "--json", str(PASSES / f"{name}.tar.xz")], capsys)
    assert code == 0, err
    history = json.loads(out)
    assert history["complete"] is True and history["problems"] == []
    import tarfile

    with tarfile.open(PASSES / f"{name}.tar.xz") as tar:
        member = next(m for m in tar.getmembers() if m.name.endswith("after_optimizations.txt"))
        handle = tar.extractfile(member)
        assert handle is not None
        post = handle.read().decode()
    fusions = set(re.findall(r"^\s*(?:ROOT )?%(\S+) = .*? fusion\(", post, re.MULTILINE))
    assert {f["name"] for f in history["fusions"]} == fusions == set(MADE_BY[name])
    for f in history["fusions"]:
        assert (f["created_by"]["pass"], f["made_as"]) == MADE_BY[name][f["name"]], f
    renames = [pair for s in history["passes"] if s.get("changes")
               for pair in s["changes"].get("fusions_renamed", [])]
    assert sorted(tuple(p) for p in renames) == sorted((made, new) for new, (_, made) in MADE_BY[name].items() if made)


@pytest.mark.requires_jax
def test_a_dumped_assignment_is_the_one_memory_analysis_gives():
    """Where JAX's ``memory_analysis`` has the proto (the CPU), the record read from the dump
    of the same compile holds the same allocations and values, and adds XLA's live ranges: the
    GPU path reads the same facts by another door."""
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp

    from hloviz.capture.jax import _assignment_dump, _compile, _stats, buffer_assignment, dumped_assignment

    lowered = jax.jit(lambda x, w: jnp.tanh(x @ w).sum()).lower(
        jax.ShapeDtypeStruct((8, 16), jnp.float32), jax.ShapeDtypeStruct((16, 4), jnp.float32))
    with _assignment_dump("gpu") as dump:  # the GPU's path, asked for on the CPU
        assert dump is not None and dump[1]
        compiled = _compile(lowered, dump)
        dumped = dumped_assignment(dump[0], compiled.as_text(), _stats(compiled), jax.__version__)
    assert not dump[0].exists()  # hloviz's own folder is gone after the compile
    proto = buffer_assignment(compiled, jax.__version__)
    if proto is None:
        pytest.skip("this JAX gives no buffer assignment proto on the CPU")
    assert dumped is not None and dumped["allocations"] == proto["allocations"]
    assert dumped["total_bytes"] == proto["total_bytes"] and "live" in dumped


def test_the_estimates_stated_accuracy_on_gpu_modules_is_measured_here(tmp_path, capsys):
    """A GPU module without XLA's record is estimated by XLA:CPU's rules; the accuracy the report
    states for such modules is the one measured here, on every GPU capture whose XLA record
    hloviz reads (the estimate of the bare optimized text against that record's total)."""
    import statistics

    from hloviz.analysis.memory.estimate import GPU_ACCURACY

    errors = []
    for name in CAPTURES:
        code, out, _ = run_cli(["memory", "--json", str(GPU / name)], capsys)
        xla = json.loads(out)
        if code != 0 or xla["source"] != "xla":
            continue
        bare = tmp_path / f"{name}.hlo"
        bare.write_text(_post(name))
        code, out, _ = run_cli(["memory", "--json", str(bare)], capsys)
        estimate = json.loads(out)
        assert code == 0 and estimate["source"] == "estimate"
        errors.append(100 * (estimate["total_bytes"] - xla["total_bytes"]) / xla["total_bytes"])
    assert GPU_ACCURACY.programs == len(errors) >= 8
    assert GPU_ACCURACY.worst == round(max(abs(e) for e in errors), 2)
    assert GPU_ACCURACY.median == round(statistics.median(abs(e) for e in errors), 2)
    code, out, _ = run_cli(["memory", str(tmp_path / "jax_mlp.hlo")], capsys)
    assert code == 0 and f"within ±{GPU_ACCURACY.worst:.2f}% on {len(errors)} programs compiled for a GPU" in out
    cpu = tmp_path / "cpu_mlp.hlo"
    cpu.write_text((ROOT / "samples" / "captures" / "jax_mlp" / "post.hlo").read_text())
    code, out, _ = run_cli(["memory", str(cpu)], capsys)
    assert code == 0 and "compiled for a GPU" not in out and "programs, median" in out


@pytest.mark.parametrize("name", ["jax_gpt_step", "jax_mlp", "loops_vit_train"])
def test_gpu_kernels_say_how_the_gpu_runs_them(name, capsys):
    """Each Triton fusion is named by its kind (``__triton_nested_gemm_fusion``, ``__triton``),
    which JAX 0.11 writes after a nested ``block_level_fusion_config``, and each library call by
    its target (``__cudnn$convForward``): the oracle counts them on the lines of the text."""
    post = _post(name)
    expected: dict[str, int] = {}
    for line in post.splitlines():
        m = re.search(r'"fusion_backend_config":\{.*"kind":"(__\w+)"', line) if " fusion(" in line else \
            re.search(r'custom_call_target="(__[^"]+)"', line) if " custom-call(" in line else None
        if m:
            expected[m.group(1)] = expected.get(m.group(1), 0) + 1
    assert expected
    code, out, _ = run_cli(["stats", "--json", str(GPU / name)], capsys)
    found: dict[str, int] = {}
    for kernel in json.loads(out)["kernels"]:
        if kernel["backend_kind"]:
            found[kernel["backend_kind"]] = found.get(kernel["backend_kind"], 0) + 1
    assert code == 0 and found == expected
