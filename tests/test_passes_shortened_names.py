"""``hloviz passes`` on a dump whose long file names XLA shortened (issue 31 item 7).

``samples/captures/passes/long_name.tar.xz`` is what XLA wrote for ``samples/long_name.py`` run
by itself under ``XLA_FLAGS="--xla_dump_to=DIR --xla_dump_hlo_pass_re=.*"``: TF names the
module ``a_inference_<a 75-character function name>_18__XlaMustCompile_true_config_proto_…``,
and XLA leaves that name out of every file name that would pass 255 characters
(``module_0000.0019.HLO_passes_after_layout_assignment.after_fusion.before_fusion-wrapper.txt``)
while the shorter ones keep it. The oracle reads the file names with a regex that accepts both.
"""

from __future__ import annotations

import re
import tarfile
from pathlib import Path

import pytest

from hloviz.api.passes import read_pass_history
from hloviz.capture.dumps.pass_dump import list_pass_modules
from tests import run_cli

ARCHIVE = Path(__file__).resolve().parents[1] / "samples" / "captures" / "passes" / "long_name.tar.xz"

#: A snapshot's file name, the module's name there or not: (index, pipeline or pass, pass or step).
_FILE = re.compile(r"^module_0000\.(?:a_inference_\w+\.\d+\.)?(\d{4})\."
                   r"([^.]+)\.(?:after_([^.]+)\.before_[^.]+|([^.]+))\.txt$")
_FUSION = re.compile(r"^\s*(?:ROOT )?%?([\w.\-]+) = \S.*? fusion\(", re.MULTILINE)


@pytest.fixture(scope="module")
def dump(tmp_path_factory) -> Path:
    where = tmp_path_factory.mktemp("long_name")
    with tarfile.open(ARCHIVE) as tar:
        tar.extractall(where, filter="data")
    return where


def _files(dump: Path) -> list[tuple[int, str, str, str]]:
    out = []
    for p in dump.iterdir():
        m = _FILE.match(p.name)
        if m:
            index, first, after, during = m.groups()
            out.append((int(index), first, after or during, p.name))
    return sorted(out)


def test_the_fixture_has_both_forms_of_file_name(dump):
    names = [f[3] for f in _files(dump)]
    shortened = [n for n in names if re.match(r"^module_0000\.\d{4}\.", n)]
    assert len(names) == 26 and 0 < len(shortened) < len(names)
    # why XLA shortened them: with the module's name they would pass 255 characters
    module = re.match(r"HloModule (\S+),", (dump / next(n for n in names)).read_text()).group(1)  # type: ignore[union-attr]
    assert all(len(n.replace("module_0000.", f"module_0000.{module}.", 1)) > 255 for n in shortened)


def test_every_snapshot_is_read_whatever_its_file_name(dump):
    [module] = list_pass_modules(dump)
    assert module.name.startswith("a_inference_normalise_sensor_readings_then_scale_and_shift_them_for_the_"
                                  "classifier_head_18__XlaMustCompile_true_config_proto_")
    assert module.before is not None and module.after is not None
    history = read_pass_history(dump).history
    listed = [(s.step.index, s.step.pipeline if s.step.during is None else s.step.pass_name,
               s.step.pass_name if s.step.during is None else s.step.during) for s in history.steps]
    assert listed == [(i, first, second) for i, first, second, _ in _files(dump)]
    assert history.complete, history.problems


def test_fusions_are_credited_across_shortened_names(dump):
    history = read_pass_history(dump).history
    final = set(_FUSION.findall(next(dump.glob("*after_optimizations.txt")).read_text()))
    assert {f.name for f in history.fusions} == final and final
    # the fusion pass's snapshot is one of the shortened names: it must be the one credited
    fusion_files = [f for f in _files(dump) if f[1:3] == ("HLO_passes_after_layout_assignment", "fusion")]
    assert fusion_files and fusion_files[0][3].startswith("module_0000.0019.")
    assert any(f.step is not None and f.step.index == 19 for f in history.fusions)


def test_the_cli_says_no_snapshot_is_missing(dump, capsys):
    code, out, err = run_cli(["passes", str(dump)], capsys)
    assert code == 0, err
    assert "missing" not in out + err and "26 snapshots" in out
