"""XLA's memory records are untrusted input: a dump's ``*-buffer-assignment.txt`` (and JAX's
``*-live-range.txt``) and a saved capture's ``memory.json`` are checked before any number of
them is used. Each test builds the hostile record itself, from a real dump or capture.

* a live range past the schedule (``fusion{}:2-100000000`` in a few hundred bytes) is refused,
  not a timeline of a hundred million positions (gigabytes);
* a forged ``memory.json`` (a key that is no value, a lone surrogate, a negative size) is an
  input error naming the file: exit 2 for ``memory``; ``stats`` leaves memory out with a note;
* a live-range section cut short is exit 2 naming the file, never a peak hloviz made up and
  labelled as XLA's.
"""

from __future__ import annotations

import json
import os
import re
import resource
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests import run_cli

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "memory"
TF_DUMP = DATA / "tf_dump"
JAX_DUMP = DATA / "jax_dump"
SAVED = ROOT / "samples" / "memory" / "jax_donated"


def _tf_dump(tmp_path: Path) -> tuple[Path, Path]:
    folder = tmp_path / "dump"
    shutil.copytree(TF_DUMP, folder)
    return folder, next(folder.glob("*-buffer-assignment.txt"))


def _memory_in_a_small_process(folder: Path, limit: int = 1 << 30) -> subprocess.CompletedProcess:
    """``hloviz memory FOLDER`` in a process that may take at most ``limit`` bytes of address
    space: a timeline of one entry per position of a forged range cannot fit there."""
    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "hloviz", "memory", str(folder)], env=env, capture_output=True,
                          text=True, timeout=300, preexec_fn=cap)


# --- 9: bounded by the input's size ----------------------------------------------------------


def test_a_live_range_past_the_schedule_is_refused_without_gigabytes(tmp_path):
    folder, ba = _tf_dump(tmp_path)
    text = ba.read_text()
    forged, count = re.subn(r"^(    matmul\.2\{\}):3-4$", r"\1:2-100000000", text, flags=re.MULTILINE)
    assert count == 1
    ba.write_text(forged)
    done = _memory_in_a_small_process(folder)
    assert done.returncode == 2, done.stderr
    assert ba.name in done.stderr and "matmul.2{}" in done.stderr and "100000000" in done.stderr
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr


def test_a_range_past_the_schedule_in_memory_json_is_refused_without_gigabytes(tmp_path):
    cap = _saved(tmp_path, lambda m: m.update(live=_live_of(m, end=100_000_000)))
    done = _memory_in_a_small_process(cap)
    assert done.returncode == 2, done.stderr
    assert "memory.json" in done.stderr and "100000000" in done.stderr
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr


# --- 10: a forged memory.json ----------------------------------------------------------------


def _saved(tmp_path: Path, forge) -> Path:
    """A copy of a real saved capture whose memory.json ``forge(record)`` changed in place."""
    cap = tmp_path / "cap"
    shutil.copytree(SAVED, cap)
    record = json.loads((cap / "memory.json").read_text())
    forge(record)
    (cap / "memory.json").write_text(json.dumps(record))
    return cap


def _live_of(record: dict, *, end: int | None = None, key: str | None = None) -> dict:
    """A plausible live-range record for the values of ``record`` (each live throughout), with
    one range's end or key forged."""
    names = [v[1] for a in record["allocations"] for v in a["values"]]
    keys = [f"{v[1]}{{{','.join(map(str, v[2]))}}}" for a in record["allocations"] for v in a["values"]]
    n = len(names)
    ranges = {k: [0, n] for k in keys}
    if end is not None:
        ranges[keys[0]] = [0, end]
    if key is not None:
        ranges[key] = [0, 1]
    return {"sequence": names, "ranges": ranges, "peak_time": 0, "peak": []}


def _first_value(record: dict) -> list:
    return next(a for a in record["allocations"] if a["values"])["values"][0]


FORGERIES = {
    "a range key that names no value (fusion{zz})": lambda m: m.update(live=_live_of(m, key="fusion{zz}")),
    "a lone surrogate in an instruction name": lambda m: _first_value(m).__setitem__(1, "fusion\ud800"),
    "a lone surrogate in the origin": lambda m: m.__setitem__("origin", "XLA\udcff"),
    "a negative allocation size": lambda m: (m["allocations"][0].__setitem__("size", -3),
                                             m.__setitem__("total_bytes", -3)),
    "a negative value size": lambda m: _first_value(m).__setitem__(3, -1),
    "a total that is not the allocations' sum": lambda m: m.__setitem__("total_bytes", m["total_bytes"] + 1),
    "a size as text": lambda m: m["allocations"][0].__setitem__("size", "12"),
    "a flag as text": lambda m: m["allocations"][0].__setitem__("live_out", "false"),
    "a size past int64": lambda m: (m["allocations"][0].__setitem__("size", 1 << 70),
                                    m.__setitem__("total_bytes", m["total_bytes"] + (1 << 70))),
    "a value outside its allocation": lambda m: _first_value(m).__setitem__(4, 1 << 40),
    "an allocation index twice": lambda m: m["allocations"][1].__setitem__("index", m["allocations"][0]["index"]),
    "a negative JAX statistic": lambda m: m["stats"].__setitem__("temp_size_in_bytes", -5),
}


@pytest.mark.parametrize("what", sorted(FORGERIES))
def test_a_forged_memory_json_is_an_input_error_naming_it(tmp_path, capsys, what):
    cap = _saved(tmp_path, FORGERIES[what])
    code, out, err = run_cli(["memory", str(cap)], capsys)
    assert code == 2, (what, out, err)
    assert "memory.json" in err and "internal error" not in err and "Traceback" not in err
    assert "-3 B" not in out + err and "−3" not in out + err


@pytest.mark.parametrize("what", ["a range key that names no value (fusion{zz})", "a negative allocation size",
                                  "a lone surrogate in an instruction name"])
def test_stats_leaves_a_forged_memory_out_with_a_note(tmp_path, capsys, what):
    cap = _saved(tmp_path, FORGERIES[what])
    code, out, err = run_cli(["stats", str(cap), "--json"], capsys)
    assert code == 0, err
    got = json.loads(out)
    assert "memory" not in got or got["memory"] is None
    code, out, err = run_cli(["stats", str(cap)], capsys)
    assert code == 0, err
    assert "no memory report" in out + err and "memory.json" in out + err


def test_the_real_record_still_reads(tmp_path, capsys):
    """The checks refuse forgeries, not XLA: the untouched copy reports XLA's total (summed here)."""
    cap = _saved(tmp_path, lambda m: None)
    record = json.loads((cap / "memory.json").read_text())
    code, out, err = run_cli(["memory", str(cap), "--json"], capsys)
    assert code == 0, err
    assert json.loads(out)["total_bytes"] == sum(a["size"] for a in record["allocations"])


# --- 11: a live-range section cut short -------------------------------------------------------


def _cuts(text: str) -> dict[str, str]:
    """The buffer-assignment text cut at places inside its HloLiveRange section."""
    start = text.index("HloLiveRange (max ")
    section = text[start:]
    return {
        "inside the instruction sequence": text[: start + section.index("    5:")],
        "between sequence and ranges": text[: start + section.index("  BufferLiveRange:")],
        "inside the ranges, at a line's end": text[: start + section.index("    matmul_1.2{}")],
        "inside the ranges, mid-line": text[: start + section.index("    matmul_1.2{}") + len("    matmul_1.2{}:5-")],
        "before the peak": text[: start + section.index("  Live ranges at")],
        "inside the peak's rows": text[: start + section.index("    wrapped_tanh{}: 32768 bytes")],
    }


@pytest.mark.parametrize("where", sorted(_cuts((next(TF_DUMP.glob("*-buffer-assignment.txt"))).read_text())))
def test_a_buffer_assignment_cut_inside_its_live_ranges_is_exit_2_naming_the_file(tmp_path, capsys, where):
    folder, ba = _tf_dump(tmp_path)
    ba.write_text(_cuts(ba.read_text())[where])
    code, out, err = run_cli(["memory", str(folder)], capsys)
    assert code == 2, (where, out)
    assert ba.name in err and "Traceback" not in err, err


def test_jax_live_range_file_cut_short_names_that_file(tmp_path, capsys):
    folder = tmp_path / "dump"
    shutil.copytree(JAX_DUMP, folder)
    live = next(folder.glob("*-live-range.txt"))
    text = live.read_text()
    live.write_text(text[: text.index("  Live ranges at")])
    code, _, err = run_cli(["memory", str(folder)], capsys)
    assert code == 2
    assert live.name in err and "Traceback" not in err, err


@pytest.mark.requires_dot
def test_show_leaves_a_forged_memory_out_with_a_note(tmp_path, capsys):
    cap = _saved(tmp_path, FORGERIES["a negative allocation size"])
    code, out, err = run_cli(["show", str(cap), "-o", str(tmp_path / "out")], capsys)
    assert code == 0, err
    assert re.search(r"no memory section: .*memory\.json.*-3", err), err
    assert (tmp_path / "out" / "report.html").is_file()
    assert "internal error" not in out + err
