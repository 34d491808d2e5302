"""Diffs of real TensorFlow output: a live capture against its renamed copy, and the two-version
sample captures in ``samples/captures/`` (``<name>-tf<version>/``) against each other."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import hloviz
from hloviz.analysis import kernels
from hloviz.analysis.diff import Status, diff_modules
from hloviz.cli import main
from hloviz.printer import to_text

from . import present
from .diffkit import renamed_copy
from .docs_pages import page

CAPTURES = Path(__file__).resolve().parent.parent / "samples" / "captures"
_FOLDER = re.compile(r"(?P<name>.+)-tf(?P<version>\d+\.\d+)$")


def _version_pairs() -> list[tuple[Path, Path]]:
    """(older, newer) capture folders of the same function, for every function captured twice."""
    by_name: dict[str, list[tuple[tuple[int, ...], Path]]] = {}
    if CAPTURES.is_dir():
        for folder in sorted(CAPTURES.iterdir()):
            m = _FOLDER.match(folder.name)
            if m and (folder / "post.hlo").is_file():
                version = tuple(int(x) for x in m.group("version").split("."))
                by_name.setdefault(m.group("name"), []).append((version, folder))
    pairs = []
    for versions in by_name.values():
        versions.sort()
        if len(versions) >= 2:
            pairs.append((versions[0][1], versions[-1][1]))
    return pairs


PAIRS = _version_pairs()


@pytest.mark.requires_tf
@pytest.mark.slow
def test_a_live_tf_capture_and_its_renamed_copy_are_identical():
    from hloviz.capture import load_target

    root = Path(__file__).resolve().parent.parent
    cap = load_target(str(root / "samples" / "matmul_chain.py") + ":matmul_chain", args=("f32[64,64]", "f32[64,64]"))
    for module in (present(cap.pre_module()), present(cap.post_module())):
        copy = renamed_copy(to_text(module), seed=7, drop_metadata=True)
        d = diff_modules(module, copy)
        assert d.summary.identical and d.summary.unchanged == module.instruction_count


@pytest.mark.skipif(not PAIRS, reason="no two-version captures in samples/captures yet")
@pytest.mark.parametrize("older,newer", PAIRS, ids=[p[0].name.rsplit("-", 1)[0] for p in PAIRS])
def test_two_version_samples_diff_with_the_kernel_counts_of_their_files(older, newer, capsys):
    a = hloviz.parse_file(older / "post.hlo")
    b = hloviz.parse_file(newer / "post.hlo")
    ka, kb = kernels(a).count, kernels(b).count
    main(["diff", str(older), str(newer), "--format", "json"])
    data = json.loads(capsys.readouterr().out)
    assert (data["kernels"]["before"], data["kernels"]["after"]) == (ka, kb)
    s = data["summary"]
    assert s["unchanged"] + s["changed"] + s["removed"] == a.instruction_count
    assert s["unchanged"] + s["changed"] + s["added"] == b.instruction_count
    assert data["before"]["tensorflow"] != data["after"]["tensorflow"]
    # Each side against itself, renamed, is identical: the differences above are real ones.
    assert diff_modules(a, renamed_copy(to_text(a), seed=3)).summary.identical
    # The text and markdown reports both lead with the kernel counts.
    main(["diff", str(older), str(newer)])
    text = capsys.readouterr().out
    assert text.splitlines()[3].split()[:4] == ["kernels", str(ka), "→", str(kb)]
    main(["diff", str(older), str(newer), "--format", "markdown"])
    assert f"| kernels | {ka} | {kb} |" in capsys.readouterr().out


@pytest.mark.skipif(not any(p[0].name.startswith("matmul_chain-") for p in PAIRS),
                    reason="no two-version matmul_chain captures")
def test_matmul_chain_across_versions_pairs_the_matmul():
    older, newer = next(p for p in PAIRS if p[0].name.startswith("matmul_chain-"))
    d = diff_modules(hloviz.parse_file(older / "post.hlo"), hloviz.parse_file(newer / "post.hlo"))
    # Whatever each version lowered the matmul to (a dot, or a oneDNN custom-call), the two are paired.
    matmuls = [k for k in d.summary.kernel_diffs
               if any(i is not None and i.opcode in ("dot", "custom-call") for i in (k.before, k.after))]
    assert any(k.before is not None and k.after is not None for k in matmuls)
    assert all(k.status is not Status.REMOVED or present(k.before).opcode not in ("dot", "custom-call") for k in matmuls)


ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.skipif(not (CAPTURES / "matmul_chain-tf2.17").is_dir() or not (CAPTURES / "matmul_chain-tf2.21").is_dir(),
                    reason="no two-version matmul_chain captures")
def test_the_docs_show_what_hloviz_diff_prints(capsys, monkeypatch):
    monkeypatch.chdir(ROOT)  # the command names the captures relative to the repository
    text = page("diff")
    section = text[text.index("## Two captures: `hloviz diff`"):]
    command = present(re.search(r"```sh\n(hloviz diff [^\n]+)\n```", section)).group(1)
    shown = present(re.search(r"<!-- diff-sample-output[^>]*-->\n```text\n(.*?)```\n", section, re.DOTALL)).group(1)
    main(command.split()[1:])
    assert capsys.readouterr().out == shown


def test_the_diff_picture_lines_matched_kernels_up():
    from hloviz import api

    root = Path(__file__).resolve().parent.parent / "samples" / "captures"
    result = api.diff(str(root / "matmul_chain-tf2.17"), str(root / "matmul_chain-tf2.21"))
    dot = result.picture("dot").data.decode()
    pairs = re.findall(r"\{ rank=same; (n\d+); (n\d+); \}", dot)
    label = {m.group(1): m.group(2) for m in re.finditer(r"(n\d+) \[label=<(.*?)>[,\]]", dot)}
    assert any("custom-call.clone" in label[a] and "MatMul.2" in label[b] for a, b in pairs), pairs
