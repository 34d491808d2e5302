"""``hloviz`` as a process (``python -m hloviz``, the console script): :func:`hloviz.cli.run`
ends the process without Python's teardown once the command is done, so everything it printed
must be flushed and its exit code kept; under a profiler it ends normally, so the profile is
written. Oracles: the JSON module parses what the process printed; the exit code and files are
the operating system's."""

from __future__ import annotations

import json
import pstats
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CAPTURE = ROOT / "samples" / "captures" / "fused_additions-tf2.21"


def _hloviz(*args: str, prefix: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *prefix, "-m", "hloviz", *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=300, check=False)


def test_a_long_output_is_flushed_whole_before_the_process_ends():
    done = _hloviz("stats", str(CAPTURE), "--json")
    assert done.returncode == 0, done.stderr
    facts = json.loads(done.stdout)  # all of it: a cut-off JSON does not parse
    assert done.stdout.endswith("\n") and len(done.stdout) > 1000
    assert facts  # the command's own answer, not an empty object


def test_an_error_keeps_its_exit_code_and_message(tmp_path):
    done = _hloviz("render", str(tmp_path / "missing"), "-o", str(tmp_path / "x.svg"))
    assert done.returncode == 2
    assert done.stderr.startswith("hloviz: error: ") and "missing" in done.stderr
    assert not (tmp_path / "x.svg").exists()


def test_under_a_profiler_the_process_ends_normally_and_the_profile_is_written(tmp_path):
    out = tmp_path / "prof"
    done = _hloviz("stats", str(CAPTURE), prefix=("-m", "cProfile", "-o", str(out)))
    assert done.returncode == 0, done.stderr
    stats = pstats.Stats(str(out))
    assert any(func[2] == "main" and "cli" in func[0] for func in stats.stats)  # type: ignore[attr-defined]
