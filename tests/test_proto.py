"""Binary HLO protos: single ``.hlo.pb`` files (plain, ``.xz``, ``.gz``), ``HloModuleProto`` and
``HloProto``, and XLA dump folders holding only protos, through the library and every command.

Test data (tests/data/protos): ``multiple_gemm_fusions.hlo.pb`` is the ``HloModuleProto`` XLA
(jaxlib 0.10.2) made of the corpus module ``tools__multihost_hlo_runner__data__multiple_gemm_fusions.hlo``
(a GPU module with three Triton GEMM fusions); ``dump/`` is what ``XLA_FLAGS=--xla_dump_to=DIR
--xla_dump_hlo_as_proto`` wrote for ``jax.jit(lambda x, w: jnp.tanh(x @ w + 1.0).sum(axis=0))`` on
CPU (two ``HloProto``s).
"""

from __future__ import annotations

import builtins
import json
from pathlib import Path

import pytest

import hloviz
from hloviz.errors import DependencyError, InputError
from hloviz.parser.proto import is_proto_path, module_proto

from . import run_cli

DATA = Path(__file__).resolve().parent / "data" / "protos"
CORPUS = Path(__file__).resolve().parent / "corpus"
GEMMS = DATA / "multiple_gemm_fusions.hlo.pb"
DUMP = DATA / "dump"
POST = DUMP / "module_0006.jit_f.cpu_after_optimizations.hlo.pb"

pytestmark = pytest.mark.requires_jax


def _counts(m: hloviz.HloModule) -> tuple[int, int, list[str]]:
    return len(m.computations), m.instruction_count, sorted(i.name for i in m.instructions() if i.opcode == "fusion")


def test_a_module_proto_reads_as_its_text_did():
    text_module = hloviz.parse_file(CORPUS / "modules" / "tools__multihost_hlo_runner__data__multiple_gemm_fusions.hlo")
    for path in (GEMMS, DATA / "multiple_gemm_fusions.hlo.pb.xz", DATA / "multiple_gemm_fusions.pb.gz"):
        m = hloviz.parse_file(path)
        assert _counts(m) == _counts(text_module)
        assert {i.fusion_kind for i in m.instructions() if i.opcode == "fusion"} == {"kCustom", "kLoop"}


def test_an_hlo_proto_from_a_dump_reads_with_its_schedule_and_fusions():
    m = hloviz.parse_file(POST)
    assert m.name == "jit_f" and m.is_scheduled
    assert sorted(i.opcode for i in m.entry.instructions) == ["fusion", "fusion", "parameter", "parameter"]
    pre = hloviz.parse_file(DUMP / "module_0006.jit_f.before_optimizations.hlo.pb")
    assert {i.opcode for i in pre.instructions()} >= {"dot", "tanh", "reduce"}


def test_the_wrapper_is_unwrapped_and_names_are_not_mistaken_for_wrappers():
    data = POST.read_bytes()
    inner = module_proto(data)
    assert inner != data and module_proto(inner) == inner  # HloProto → its HloModuleProto, once
    assert module_proto(GEMMS.read_bytes()) == GEMMS.read_bytes()
    assert is_proto_path("a.hlo.pb") and is_proto_path("x.pb.xz") and not is_proto_path("a.hlo")


@pytest.mark.parametrize("data, words", [(b"", "empty"), (b"\xff\xff\xff", "not a binary HLO proto"),
                                         (b"\x0a\x05ab", "runs past the end")])
def test_bytes_that_are_no_proto_give_an_input_error(tmp_path, data, words):
    bad = tmp_path / "bad.pb"
    bad.write_bytes(data)
    with pytest.raises(InputError, match=words):
        hloviz.parse_file(bad)


@pytest.mark.parametrize("suffix", [".hlo.pb", ".hlo.pb.gz", ".hlo.pb.xz"])
def test_a_proto_is_read_under_the_input_limit(tmp_path, monkeypatch, suffix):
    """Protos go through the same bounded, streamed reading as text (--max-input, truncated
    archives); a compressed proto is limited by its decompressed size."""
    import gzip
    import lzma

    data = GEMMS.read_bytes()
    pack = {".gz": gzip.compress, ".xz": lzma.compress}.get(suffix[-3:], lambda b: b)
    path = tmp_path / f"gemms{suffix}"
    path.write_bytes(pack(data))
    assert hloviz.parse_file(path).name == hloviz.parse_file(GEMMS).name
    monkeypatch.setenv("HLOVIZ_MAX_INPUT", str(len(data) - 1))
    with pytest.raises(InputError, match="max-input"):
        hloviz.parse_file(path)
    if suffix != ".hlo.pb":
        monkeypatch.delenv("HLOVIZ_MAX_INPUT")
        path.write_bytes(pack(data)[:-20])
        with pytest.raises(InputError, match=r"truncated|not a valid"):
            hloviz.parse_file(path)


def test_a_proto_xla_cannot_read_gives_an_input_error(tmp_path, capsys):
    bad = tmp_path / "bad.hlo.pb"
    bad.write_bytes(b"\x0a\x03abc\x12\x03xyz")  # a name and an entry name, no computations
    code, _, err = run_cli(["stats", str(bad)], capsys)
    assert code == 2
    assert "XLA could not read this HloModuleProto" in err and "Traceback" not in err


def test_without_jaxlib_the_error_says_what_to_install(monkeypatch, capsys):
    real_import = builtins.__import__

    def no_jax(name, *args, **kwargs):
        if name.startswith(("jaxlib", "jax")):
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_jax)
    with pytest.raises(DependencyError) as info:
        hloviz.parse_file(GEMMS)
    assert "pip install 'hloviz[jax]'" in str(info.value)
    code, _, err = run_cli(["stats", str(GEMMS)], capsys)
    assert code == 2 and "pip install 'hloviz[jax]'" in err


# -- every command on a dump folder of protos and on a single .hlo.pb --------------------------

def test_stats_on_a_dump_of_protos_and_on_one_proto(capsys):
    code, out, _ = run_cli(["stats", str(DUMP), "--json"], capsys)
    report = json.loads(out)
    assert code == 0
    assert (report["source"], report["target"], report["kernel_count"]) == ("xla_dump", "jit_f", 2)
    assert (report["pre"], report["post"]) == (12, 17)  # instructions before and after XLA's passes
    code, out, _ = run_cli(["stats", str(GEMMS), "--json"], capsys)
    single = json.loads(out)
    assert code == 0
    assert (single["source"], single["post"], single["kernel_count"]) == ("hlo_file", 26, 4)


@pytest.mark.requires_dot
def test_render_and_show_on_protos(tmp_path, capsys):
    svg = tmp_path / "post.svg"
    assert run_cli(["render", str(DUMP), "-o", str(svg)], capsys)[0] == 0
    assert svg.read_text().lstrip().startswith("<?xml") or "<svg" in svg.read_text()
    one = tmp_path / "gemm.svg"
    assert run_cli(["render", str(GEMMS), "-o", str(one)], capsys)[0] == 0 and "<svg" in one.read_text()
    out = tmp_path / "show"
    assert run_cli(["show", str(DUMP), "-o", str(out)], capsys)[0] == 0
    assert (out / "report.html").is_file() and (out / "post.svg").is_file()


def test_diff_of_protos(capsys):
    code, out, _ = run_cli(["diff", str(DUMP), str(DUMP)], capsys)
    assert code == 0 and "identical" in out
    code, out, _ = run_cli(["diff", str(GEMMS), str(DATA / "multiple_gemm_fusions.hlo.pb.xz")], capsys)
    assert code == 0 and "identical" in out


def test_dump_and_pre_post_files_take_protos(tmp_path, capsys):
    out = tmp_path / "capture"
    assert run_cli(["dump", str(DUMP), "-o", str(out)], capsys)[0] == 0
    assert hloviz.parse_file(out / "post.hlo").name == "jit_f"  # saved as text, readable without jaxlib
    pre = DUMP / "module_0006.jit_f.before_optimizations.hlo.pb"
    code, out, _ = run_cli(["stats", "--pre", str(pre), "--post", str(POST), "--json"], capsys)
    report = json.loads(out)
    assert code == 0
    assert (report["pre"], report["post"], report["kernel_count"]) == (12, 17, 2)
