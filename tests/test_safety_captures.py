"""Live captures (``passes model.py:fn``, every ``model.py:fn`` target) and the pass options,
against hostile surroundings each test builds itself: a ``TMPDIR`` whose name has a space, a
double quote and a backslash; the user's own ``XLA_FLAGS`` with quoted values; a model that
leaves temporary files behind, as TensorFlow's autograph does (``__autograph_generated_file*.py``);
``--save`` naming a file or a FIFO; a step number of 300 digits or of non-ASCII digits.

The oracle for where XLA wrote is the file system itself: the names XLA gives its dump files
(read with a regex), and the folders that must stay empty.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from tests import run_cli

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "samples" / "captures" / "passes" / "jax_mlp.tar.xz"
MLP = f"{ROOT / 'samples' / 'jax_mlp.py'}:mlp"
#: XLA's names for a per-pass snapshot and for the optimized module.
_SNAPSHOT = re.compile(r"^module_\d+\.\S+\.\d{4}\.[^.]+\.after_[^.]+\.before_[^.]+\.txt$")
_AFTER = re.compile(r"^module_\d+\.\S+\.\w*after_optimizations\.txt$")
#: A TMPDIR no shell or flag parser should split or unquote.
HOSTILE_TMP = 'tmp with space "q" \\b'


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    return {**env, "PYTHONPATH": str(ROOT), **extra}


def _hloviz(*args: str, cwd: Path, env: dict[str, str], timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "hloviz", *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)


# --- 6. XLA_FLAGS: quoting, and XLA writes only where hloviz says --------------------------------

@pytest.mark.requires_jax
@pytest.mark.parametrize("user_flags", ["", '--xla_gpu_cuda_data_dir="/no such/dir"', "--xla_gpu_cuda_data_dir='a b'",
                                        '--xla_gpu_cuda_data_dir="unterminated'])
def test_xla_dumps_into_the_folder_hloviz_chose_whatever_its_name(tmp_path, user_flags):
    """Real XLA (JAX's CPU compiler) reads the XLA_FLAGS hloviz builds: the dump lands in a
    folder whose name has a space, a quote and a backslash, with the per-pass snapshots (a flag
    after the folder's), and nothing appears anywhere else."""
    from hloviz.capture.dumps.pass_dump import xla_flags_with_dump

    folder = tmp_path / HOSTILE_TMP / "hloviz-passes-x"
    folder.mkdir(parents=True)
    work = tmp_path / "work"
    work.mkdir()
    flags = xla_flags_with_dump(user_flags or None, folder)
    code = "import jax, jax.numpy as jnp\nprint(jax.jit(lambda x: jnp.tanh(x @ x.T) + 1)(jnp.ones((4, 4))).sum())"
    done = subprocess.run([sys.executable, "-c", code], cwd=work, env=_env(XLA_FLAGS=flags), capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    names = [p.name for p in folder.iterdir()]
    assert any(_AFTER.match(n) for n in names), names
    assert any(_SNAPSHOT.match(n) for n in names), names  # --xla_dump_hlo_pass_re came after the folder
    assert list(work.iterdir()) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([HOSTILE_TMP, "work"])  # no tmp/ beside


def test_the_users_own_flags_are_kept_as_xla_reads_them():
    """What XLA's parser (xla/parse_flags_from_env.cc) makes of the user's flags survives: a
    value in double or single quotes keeps its spaces; the user's dump flags give way to ours."""
    from hloviz.capture.dumps.pass_dump import xla_flags_with_dump

    flags = xla_flags_with_dump('  --a="x y" --b=\'p q\' --c --xla_dump_to=/elsewhere --d=plain', Path("/t"))
    assert flags.startswith('--a="x y" --b="p q" --c --d=plain ')
    assert "/elsewhere" not in flags and '--xla_dump_to="/t"' in flags


# --- 6 and 7, end to end: a live `passes` under that TMPDIR ------------------------------------------

_MODEL = '''
import tempfile

import jax
import jax.numpy as jnp

# what TensorFlow's autograph does for every function it converts: a module in the temporary
# folder, never removed
_, _NAME = tempfile.mkstemp(prefix="__autograph_generated_file", suffix=".py")

HLOVIZ_ARGS = {"f": ["f32[8,16]", "f32[16,4]"]}


def f(x, w):
    return jnp.sum(jnp.tanh(x @ w))
'''


@pytest.mark.requires_jax
@pytest.mark.slow
@pytest.mark.parametrize("command", ["passes", "stats"])
def test_a_live_capture_leaves_nothing_in_tmpdir_or_the_working_folder(tmp_path, command):
    temp = tmp_path / HOSTILE_TMP
    temp.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    model = tmp_path / "model.py"
    model.write_text(_MODEL)
    done = _hloviz(command, f"{model}:f", "--json", cwd=work, env=_env(TMPDIR=str(temp)))
    assert done.returncode == 0, done.stderr[-3000:]
    data = json.loads(done.stdout)
    if command == "passes":
        assert data["snapshots"] and data["fusions"]
    assert list(work.iterdir()) == []
    assert list(temp.iterdir()) == []  # the child's temporary files went with its own folder
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([HOSTILE_TMP, "work", "model.py"])


# --- 8. --save on a file or a FIFO; step numbers ------------------------------------------------

#: Modules of the standard library a user's project may well have a file of its own for; each
#: one here raises when imported, so that a capture which reads it fails.
_SHADOWS = ("grp", "random", "queue", "signal", "selectors", "tempfile", "json", "logging", "inspect", "types")


@pytest.mark.requires_jax
@pytest.mark.slow
def test_a_capture_from_a_folder_whose_files_are_named_like_the_standard_library(tmp_path):
    """The user stands in a project folder holding its own ``grp.py``, ``random.py``, ``json.py``
    …: the capture's child Python reads the standard library's modules, not theirs (``python -m``
    would have put the folder first on its path), and the model beside them still imports its
    own sibling module, as ``python model.py`` would."""
    work = tmp_path / "project"
    work.mkdir()
    for name in _SHADOWS:
        (work / f"{name}.py").write_text(f"raise RuntimeError('this project: its own {name}.py was imported')\n")
    (work / "layers.py").write_text("import jax.numpy as jnp\n\ndef dense(x, w):\n    return jnp.tanh(x @ w)\n")
    (work / "model.py").write_text(_MODEL.replace("import tempfile\n", "").replace(
        "_, _NAME = tempfile.mkstemp(prefix=\"__autograph_generated_file\", suffix=\".py\")\n", "").replace(
        "return jnp.sum(jnp.tanh(x @ w))", "return jnp.sum(layers.dense(x, w))").replace(
        "import jax.numpy as jnp\n", "import jax.numpy as jnp\nimport layers\n", 1))
    script = Path(sys.executable).with_name("hloviz")  # as a user runs it: not `python -m`, which adds the folder
    if not script.exists():
        pytest.skip(f"no hloviz script beside {sys.executable}")
    done = subprocess.run([str(script), "stats", "model.py:f", "--json"], cwd=work, env=_env(), capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "its own" not in done.stderr
    kernels = json.loads(done.stdout)["kernels"]
    assert kernels and any("dot" in json.dumps(k) for k in kernels)


@pytest.mark.parametrize("kind", ["file", "fifo", "under a file"])
def test_save_naming_a_file_or_a_fifo_is_a_clear_error(tmp_path, capsys, kind):
    mine = tmp_path / "mine.txt"
    if kind == "fifo":
        os.mkfifo(mine)
    else:
        mine.write_text("my notes\n")
    save = mine / "sub" if kind == "under a file" else mine
    code, _, err = run_cli(["passes", MLP, "--save", str(save)], capsys)
    assert code == 2, err
    assert "internal error" not in err and "Traceback" not in err
    assert "--save" in err and str(save) in err, err
    if kind != "fifo":
        assert mine.read_text() == "my notes\n"


@pytest.fixture
def dump(tmp_path) -> Path:
    with tarfile.open(SAMPLE) as tar:
        tar.extractall(tmp_path / "dump", filter="data")
    return tmp_path / "dump"


@pytest.mark.parametrize("digits", [300, 5000])
def test_a_step_number_of_hundreds_of_digits_is_a_clear_error(dump, capsys, digits):
    code, _, err = run_cli(["diff", f"{dump}@{'1' * digits}", "@fusion"], capsys)
    assert code == 2, err
    assert "internal error" not in err and "Traceback" not in err
    assert "no snapshot" in err and len(err) < 1000, err


@pytest.mark.parametrize("step", ["١٦", "１６", "16\u0663"])
def test_a_step_number_in_non_ascii_digits_is_refused(dump, capsys, step):
    code, _, err = run_cli(["diff", f"{dump}@{step}", f"{dump}@fusion"], capsys)
    assert code == 2, err
    assert "ASCII" in err and "internal error" not in err, err


def test_a_step_number_in_ascii_digits_still_names_its_snapshot(dump, capsys):
    """The step that ``fusion`` names in the sample is 16 (XLA's file name says so)."""
    names = [p.name for p in dump.iterdir() if ".after_fusion." in p.name]
    assert len(names) == 1 and ".0016." in names[0]
    code, out, err = run_cli(["diff", f"{dump}@0016", f"{dump}@fusion"], capsys)
    assert code in (0, None), err
    assert f"{dump}@16 (HLO_passes_after_layout_assignment/fusion) → {dump}@16 " in out.splitlines()[0]


# --- a live pass capture's messages never name its deleted temporary folder ----------------------

def test_a_live_capture_without_snapshots_names_the_target_not_the_temporary_folder(tmp_path, capsys, monkeypatch):
    """XLA wrote nothing (here: the capture is replaced by a saved one, so no XLA runs): the
    message says so of the target's dump, not of a ``hloviz-passes-*`` folder already removed."""
    import hloviz.capture as capture

    saved = capture.load_target(str(ROOT / "samples" / "captures" / "jax_mlp"))
    monkeypatch.setattr(capture, "load_target", lambda *_a, **_k: saved)
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr("tempfile.tempdir", str(temp))
    code, _, err = run_cli(["passes", MLP], capsys)
    assert code == 2, err
    assert "no per-pass snapshots" in err and "jax_mlp.py:mlp" in err, err
    assert str(temp) not in err and "hloviz-passes-" not in err, err
    assert list(temp.iterdir()) == []


@pytest.mark.parametrize("command", [["passes", "{}"], ["passes", "{}.tar"], ["show", "{}", "--passes"],
                                     ["versions", "{}.tar", "{}.tgz", "--passes"], ["stats", "{}"]])
def test_a_target_name_too_long_to_look_up_is_a_clear_error(tmp_path, capsys, command):
    """A name with a component of 300 bytes: the system answers ENAMETOOLONG to any look-up."""
    name = str(tmp_path / ("x" * 300))
    code, _, err = run_cli([part.format(name) for part in command], capsys)
    assert code == 2, err
    assert "internal error" not in err and "Traceback" not in err and "File name too long" not in err, err


# --- pre and post of two compiles -------------------------------------------------------------

def test_pre_and_post_of_two_compiles_are_refused_with_both_names(tmp_path, capsys):
    """A capture folder (or --pre/--post) whose two modules come from two compiles — one
    function's pre.hlo beside another's post.hlo — is one clear message naming both modules,
    exit 2, no traceback, no picture written: compared, every op of one was "eliminated" from
    the other. The oracle for the names: the files' own ``HloModule`` lines."""
    captures = ROOT / "samples" / "captures"
    pre_text = (captures / "jax_mlp" / "pre.hlo").read_text(encoding="utf-8")
    post_text = (captures / "loops_newton" / "post.hlo").read_text(encoding="utf-8")
    names = [re.match(r"HloModule ([^\s,]+)", t).group(1) for t in (pre_text, post_text)]  # type: ignore[union-attr]
    assert names[0] != names[1]
    folder = tmp_path / "mixed"
    folder.mkdir()
    (folder / "pre.hlo").write_text(pre_text, encoding="utf-8")
    (folder / "post.hlo").write_text(post_text, encoding="utf-8")
    out = tmp_path / "x.svg"
    for args in (["show", str(folder)], ["stats", str(folder), "--json"], ["render", str(folder), "--stage", "both", "-o", str(out)],
                 ["show", "--pre", str(folder / "pre.hlo"), "--post", str(folder / "post.hlo")]):
        code, stdout, stderr = run_cli(args, capsys)
        assert code == 2, (args, stderr)
        assert all(n in stderr for n in names) and "Traceback" not in stderr + stdout, stderr
    assert not out.exists()
    # each module alone is still drawn
    code, _out, stderr = run_cli(["render", "--post", str(folder / "post.hlo"), "-o", str(out)], capsys)
    assert code == 0 and out.exists(), stderr


def test_a_byte_order_mark_is_no_part_of_the_hlo(tmp_path, capsys):
    """An HLO file a Windows editor saved with a UTF-8 byte-order mark reads as the same module:
    the same statistics, as a file and in a capture folder (it was 'expected HloModule name' at
    1:1, the mark printed as ``\\ufeff``)."""
    source = ROOT / "samples" / "captures" / "jax_mlp" / "post.hlo"
    marked = tmp_path / "post.hlo"
    marked.write_bytes(b"\xef\xbb\xbf" + source.read_bytes())
    outs = []
    for path in (source, marked, tmp_path):
        code, stdout, stderr = run_cli(["stats", *(["--post", str(path)] if path.is_file() else [str(path)]), "--json"],
                                       capsys)
        assert code == 0, stderr
        outs.append({k: v for k, v in json.loads(stdout).items() if k in ("kernel_count", "flops", "bytes_read", "post")})
    assert outs[0] == outs[1] == outs[2] and outs[0]["kernel_count"] > 0
