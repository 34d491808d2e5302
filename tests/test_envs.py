"""The environment manager behind ``--tf`` / ``--jax``, without installing TensorFlow.

The environments are real: uv (or venv + pip) builds them and installs wheels the tests make
(:mod:`tests.fakeframework`: a stand-in ``tensorflow`` whose compiler IR is a saved capture's
HLO), offline, from a folder that serves as the index. Only the framework is a stand-in.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
import threading
import time
from pathlib import Path

import pytest

from hloviz.capture.releases.cache import LAST_USED
from hloviz.capture.releases.envs import EnvManager, Phases
from hloviz.capture.releases.index import Index, WheelFile, resolve_release
from hloviz.capture.releases.installers import PipInstaller, UvInstaller, find_uv, phase_of_line
from hloviz.capture.releases.isolated import capture_in_env
from hloviz.capture.releases.source import HlovizSource, running_source
from hloviz.errors import CaptureError, DependencyError, InputError

from . import present
from .conftest import restore_default_sigint
from .fakeframework import build_tf_wheel, placeholder_wheel, write_target

ROOT = Path(__file__).resolve().parent.parent
SAVED = ROOT / "samples" / "captures"
PY = sys.version_info[:2]
OTHER_PYTHONS = [m for m in (9, 10, 11, 12, 13) if (3, m) != PY][:2]

pytestmark = pytest.mark.skipif(find_uv() is None, reason="uv is not installed (pip install uv)")


@pytest.fixture(scope="session")
def wheels(tmp_path_factory) -> Path:
    """The stand-in index: TF 2.17.9 and 2.21.9 (the saved seed captures), 2.16.9 that fails to
    import, and 2.15.9 with wheels only for two other Pythons."""
    folder = tmp_path_factory.mktemp("wheels")
    build_tf_wheel(folder, "2.17.9", SAVED / "fused_additions-tf2.17")
    build_tf_wheel(folder, "2.21.9", SAVED / "fused_additions-tf2.21")
    build_tf_wheel(folder, "2.16.9", None, behaviour="import-error")
    build_tf_wheel(folder, "2.18.9", None, behaviour="crash")
    import platform

    placeholder_wheel(folder, "2.15.9", [f"cp3{m}" for m in OTHER_PYTHONS], f"manylinux_2_17_{platform.machine()}")
    return folder


@pytest.fixture(autouse=True)
def _uv_cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("UV_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "uv-cache"))


def source() -> HlovizSource:
    """This hloviz, without its dependencies (they are not in the offline stand-in index; a
    capture needs none of them)."""
    src = running_source()
    return HlovizSource(src.kind, src.package, src.version, ())


def offline_uv(wheels: Path) -> UvInstaller:
    return UvInstaller(present(find_uv(), "uv"), ["--offline", "--no-index", "--find-links", str(wheels)])


def make_manager(root: Path, wheels: Path, installer=None) -> EnvManager:
    return EnvManager(root, installer=installer or offline_uv(wheels), index=Index(wheels), source=source())


class Counting:
    """An installer that counts installs and can be slow, or be interrupted after installing."""

    def __init__(self, inner, delay: float = 0.0, interrupt: bool = False) -> None:
        self.inner, self.delay, self.interrupt = inner, delay, interrupt
        self.name = inner.name
        self.installs = 0

    def create(self, env_dir, python):
        self.inner.create(env_dir, python)

    def install(self, env_dir, requirements, on_line):
        self.installs += 1
        time.sleep(self.delay)
        self.inner.install(env_dir, requirements, on_line)
        if self.interrupt:
            raise KeyboardInterrupt


def phases_log() -> tuple[Phases, list[tuple[str, str | None]]]:
    seen: list[tuple[str, str | None]] = []
    return Phases(lambda p, d: seen.append((p, d))), seen


def test_an_environment_is_built_once_then_reused(tmp_path, wheels):
    installer = Counting(offline_uv(wheels))
    manager = make_manager(tmp_path / "envs", wheels, installer)
    phases, seen = phases_log()
    env = manager.ensure("tensorflow", "2.17", phases)
    assert env.name == f"tf2.17-py{PY[0]}.{PY[1]}-{source().identity}"
    assert env.versions == {"tensorflow": "2.17.9"}  # "2.17" resolved to the newest 2.17.x there is
    assert env.manifest["python"] == f"{PY[0]}.{PY[1]}" and env.manifest["installer"] == "uv"
    names = [p for p, _ in seen]
    assert names[0] == "resolving" and "checking" in names and names.index("checking") > names.index("resolving")
    assert ("resolving", f"{env.manifest['package']} 2.17.9") in seen
    assert not list((tmp_path / "envs").glob(".tmp-*"))

    phases, seen = phases_log()
    again = manager.ensure("tensorflow", "2.17", phases)
    assert again.path == env.path and installer.installs == 1
    assert seen == [("reused", env.name)]


def test_the_environment_runs_this_hloviz(tmp_path, wheels):
    env = make_manager(tmp_path / "envs", wheels).ensure("tensorflow", "2.17")
    import subprocess

    out = subprocess.run([str(env.python), "-I", "-c", ("import hloviz, importlib.metadata as m; "
                                                        "print(hloviz.__file__); print(m.version('hloviz'))")],
                         capture_output=True, text=True)
    where, version = out.stdout.split()
    assert Path(where).resolve() == (source().package / "__init__.py").resolve()
    assert version == source().version


def test_concurrent_runs_share_one_install(tmp_path, wheels):
    installer = Counting(offline_uv(wheels), delay=1.5)
    manager = make_manager(tmp_path / "envs", wheels, installer)
    results: list = []
    logs: list[list] = []

    def run():
        phases, seen = phases_log()
        logs.append(seen)
        results.append(manager.ensure("tensorflow", "2.21", phases))

    threads = [threading.Thread(target=run) for _ in range(2)]
    for t in threads:
        t.start()
        time.sleep(0.3)
    for t in threads:
        t.join()
    assert installer.installs == 1
    assert results[0].path == results[1].path
    waited = [log for log in logs if log and log[0][0] == "waiting"]
    assert len(waited) == 1 and waited[0][-1][0] == "reused"


def test_an_interrupted_install_leaves_nothing_behind(tmp_path, wheels):
    root = tmp_path / "envs"
    interrupted = make_manager(root, wheels, Counting(offline_uv(wheels), interrupt=True))
    with pytest.raises(KeyboardInterrupt):
        interrupted.ensure("tensorflow", "2.17")
    assert [p.name for p in root.iterdir() if p.name != ".locks"] == []
    assert interrupted.list() == []
    env = make_manager(root, wheels).ensure("tensorflow", "2.17")  # the next run builds it cleanly
    assert env.versions == {"tensorflow": "2.17.9"}


def test_what_a_killed_build_left_is_never_trusted(tmp_path, wheels):
    manager = make_manager(tmp_path / "envs", wheels)
    name = manager.name_for("tensorflow", "2.17")
    leftover = manager.root / f".tmp-{name}-99999999"
    (leftover / "bin").mkdir(parents=True)
    half = manager.root / name  # a folder without a manifest: not an environment
    (half / "bin").mkdir(parents=True)
    assert manager.leftovers() == [leftover]
    assert manager.list() == [] and manager.find("tensorflow", "2.17") is None
    env = manager.ensure("tensorflow", "2.17")
    assert env.path == half and manager.complete(half) and not leftover.exists()


def test_list_remove_and_prune(tmp_path, wheels):
    manager = make_manager(tmp_path / "envs", wheels)
    a = manager.ensure("tensorflow", "2.17")
    b = manager.ensure("tensorflow", "2.21")
    assert [e.name for e in manager.list()] == [b.name, a.name]  # latest use first
    assert manager.select(framework="tensorflow", version="2.17.9") == [manager.load(a.path)]

    with manager.using(a):  # a capture holds it: remove refuses
        assert manager.remove(a) is False
    assert a.path.exists()

    old = time.time() - 40 * 86400
    os.utime(a.path / LAST_USED, (old, old))
    stale = manager.stale(30)
    assert [(e.name, why) for e, why in stale] == [(a.name, "unused for 40 days")]
    assert manager.remove(stale[0][0]) is True and not a.path.exists()

    manifest = json.loads((b.path / "hloviz-env.json").read_text())
    manifest["hloviz_path"] = str(tmp_path / "deleted-checkout" / "hloviz")
    (b.path / "hloviz-env.json").write_text(json.dumps(manifest))
    assert [why for _, why in manager.stale(30)] == [f"its hloviz checkout {tmp_path / 'deleted-checkout'} is gone"]

    manifest["hloviz_path"] = str(source().package)  # back to this checkout …
    (b.path / "hloviz-env.json").write_text(json.dumps(manifest))
    assert manager.stale(30) == []
    src = source()  # … whose dependencies then change: its environments are superseded
    changed = EnvManager(manager.root, installer=offline_uv(wheels), index=Index(wheels),
                         source=HlovizSource(src.kind, src.package, src.version, ("rich>=13",)))
    assert changed.name_for("tensorflow", "2.21") != b.name
    assert [(e.name, why) for e, why in changed.stale(30)] == [
        (b.name, "made for this hloviz before its dependencies changed")]


def test_no_wheel_for_this_python_names_the_pythons_that_have_one(tmp_path, wheels):
    manager = make_manager(tmp_path / "envs", wheels)
    with pytest.raises(DependencyError) as err:
        manager.ensure("tensorflow", "2.15")
    text = str(err.value)
    assert f"TensorFlow 2.15 has no wheel for Python {PY[0]}.{PY[1]}" in text
    assert f"wheels for Python {', '.join(f'3.{m}' for m in OTHER_PYTHONS)} on this platform" in text
    assert manager.list() == [] and not list(manager.root.glob(".tmp-*"))


def test_a_release_that_does_not_exist(tmp_path, wheels):
    with pytest.raises(InputError, match=r"TensorFlow 2\.99 does not exist .*\n.*recent releases: .*2\.21\.9"):
        make_manager(tmp_path / "envs", wheels).ensure("tensorflow", "2.99")


@pytest.mark.parametrize("bad", ["latest", "2.x", "", "2.17.1.0"])
def test_a_version_must_be_a_release_number(tmp_path, wheels, bad):
    with pytest.raises(InputError, match="--tf takes a release number"):
        make_manager(tmp_path / "envs", wheels).ensure("tensorflow", bad)


def test_no_network_says_cached_environments_still_work(tmp_path, wheels):
    root = tmp_path / "envs"
    make_manager(root, wheels).ensure("tensorflow", "2.17")
    offline = EnvManager(root, installer=offline_uv(wheels), index=Index("http://127.0.0.1:9/simple/", timeout=5),
                         source=source())
    assert offline.ensure("tensorflow", "2.17").versions == {"tensorflow": "2.17.9"}  # cached: no index needed
    with pytest.raises(DependencyError) as err:
        offline.ensure("tensorflow", "2.21")
    text = str(err.value)
    assert "cannot reach the package index (http://127.0.0.1:9/simple/tensorflow" in text
    assert "environments already built still work offline (hloviz envs list shows them)" in text


def test_a_release_that_does_not_import_is_not_kept(tmp_path, wheels):
    manager = make_manager(tmp_path / "envs", wheels)
    with pytest.raises(DependencyError) as err:
        manager.ensure("tensorflow", "2.16")
    assert "TensorFlow 2.16.9 installed, but it does not import under Python" in str(err.value)
    assert "libtensorflow_framework.so.2: cannot open shared object file" in str(err.value)
    assert manager.list() == [] and not list(manager.root.glob(".tmp-*"))


def test_a_capture_under_a_release_is_an_ordinary_capture(tmp_path, wheels):
    manager = make_manager(tmp_path / "envs", wheels)
    model = write_target(tmp_path / "model")
    notes: list[str] = []
    cap = capture_in_env(f"{model}:fused_additions", "tensorflow", "2.17", manager=manager, notify=notes.append)
    saved = SAVED / "fused_additions-tf2.17"
    assert cap.post_text == (saved / "post.hlo").read_text() and cap.pre_text == (saved / "pre.hlo").read_text()
    assert cap.info["tensorflow"] == "2.17.9" and cap.info["framework"] == "tensorflow"
    assert cap.info["python"].startswith(f"{PY[0]}.{PY[1]}.")
    assert cap.info["args"] == ["f32[100000000]", "f32[]"] and cap.info["arg_source"] == "HLOVIZ_ARGS"
    assert cap.info["env"]["requested"] == "2.17" and cap.info["env"]["name"] == manager.name_for("tensorflow", "2.17")
    assert cap.label == "fused_additions"
    assert present(cap.post_module()).entry is not None


def test_a_function_this_release_cannot_trace(tmp_path, wheels):
    manager = make_manager(tmp_path / "envs", wheels)
    model = write_target(tmp_path / "model")
    assert capture_in_env(f"{model}:new_api", "tensorflow", "2.21", manager=manager).info["tensorflow"] == "2.21.9"
    with pytest.raises(CaptureError) as err:
        capture_in_env(f"{model}:new_api", "tensorflow", "2.17", manager=manager)
    text = str(err.value)
    assert text.startswith("under TensorFlow 2.17.9: tracing new_api failed: AttributeError:")
    assert "only_in_2_21" in text and f'File "{model}", line 16, in new_api' in text


def test_a_missing_function_is_reported_as_in_a_plain_capture(tmp_path, wheels):
    manager = make_manager(tmp_path / "envs", wheels)
    model = write_target(tmp_path / "model")
    with pytest.raises(InputError, match=r"under TensorFlow 2\.17\.9: function 'nope' not found in .*"
                                         r"Functions there: fused_additions, new_api"):
        capture_in_env(f"{model}:nope", "tensorflow", "2.17", manager=manager)


def test_a_crash_under_a_release_shows_its_last_words(tmp_path, wheels, capsys):
    # the same child protocol as a capture here (hloviz.capture.child): the child's last words are
    # forwarded to stderr as they come, and the error names the release and how the process ended
    manager = make_manager(tmp_path / "envs", wheels)
    model = write_target(tmp_path / "model")
    with pytest.raises(CaptureError) as err:
        capture_in_env(f"{model}:fused_additions", "tensorflow", "2.18", manager=manager)
    text = str(err.value)
    assert text.startswith(f"capturing {model}:fused_additions under TensorFlow 2.18.9 ended before hloviz got "
                           "the HLO: the process ended with exit status 139")
    assert "; its last output is above" in text
    assert "Fatal Python error: Segmentation fault" in capsys.readouterr().err


def test_a_capture_under_a_release_runs_isolated(tmp_path, wheels, monkeypatch, capsys):
    # python -I: a PYTHONPATH of the caller's (here one holding a `tensorflow` that would shadow the
    # environment's) does not reach the capture; what the model prints goes to stderr, not stdout
    shadow = tmp_path / "shadow"
    (shadow / "tensorflow").mkdir(parents=True)
    (shadow / "tensorflow" / "__init__.py").write_text("raise ImportError('the caller\\'s tensorflow')\n")
    monkeypatch.setenv("PYTHONPATH", str(shadow))
    manager = make_manager(tmp_path / "envs", wheels)
    model = write_target(tmp_path / "model")
    with open(model, "a", encoding="utf-8") as f:
        f.write("\nimport os as _os_\n_os_.write(1, b'the model speaks on fd 1\\n')\n")
    cap = capture_in_env(f"{model}:fused_additions", "tensorflow", "2.17", manager=manager)
    assert cap.info["tensorflow"] == "2.17.9"
    out = capsys.readouterr()
    assert "the model speaks on fd 1" in out.err and "the model speaks" not in out.out


def test_a_missing_file_is_reported_before_installing(tmp_path, wheels):
    manager = make_manager(tmp_path / "envs", wheels)
    with pytest.raises(InputError, match=re.escape("file not found: nowhere/model.py")):
        capture_in_env("nowhere/model.py:f", "tensorflow", "2.17", manager=manager)
    assert manager.list() == []


@pytest.mark.slow
def test_venv_and_pip_where_uv_is_missing(tmp_path, wheels):
    manager = make_manager(tmp_path / "envs", wheels, PipInstaller(["--no-index", "--find-links", str(wheels)]))
    phases, seen = phases_log()
    env = manager.ensure("tensorflow", "2.17", phases)
    assert env.manifest["installer"] == "pip" and env.versions == {"tensorflow": "2.17.9"}
    assert "installing" in [p for p, _ in seen]
    model = write_target(tmp_path / "model")
    cap = capture_in_env(f"{model}:fused_additions", "tensorflow", "2.17", manager=manager)
    assert cap.post_text == (SAVED / "fused_additions-tf2.17" / "post.hlo").read_text()


# -- the pieces -------------------------------------------------------------------------------


def test_wheel_names_and_the_pythons_they_fit():
    w = WheelFile.parse("tensorflow_cpu-2.17.1-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl")
    assert w is not None and w.version == "2.17.1" and w.pythons() == {"3.11"}
    assert w.fits((3, 11), "Linux", "x86_64") and not w.fits((3, 12), "Linux", "x86_64")
    assert not w.fits((3, 11), "Linux", "aarch64") and not w.fits((3, 11), "Darwin", "x86_64")
    mac = WheelFile.parse("tensorflow-2.17.1-cp312-cp312-macosx_12_0_arm64.whl")
    assert mac is not None and mac.fits((3, 12), "Darwin", "arm64")
    win = WheelFile.parse("tensorflow-2.17.1-cp310-cp310-win_amd64.whl")
    assert win is not None and win.fits((3, 10), "Windows", "AMD64")
    abi3 = WheelFile.parse("jaxlib-0.4.30-cp39-abi3-manylinux2014_x86_64.whl")
    assert abi3 is not None and abi3.fits((3, 12), "Linux", "x86_64")
    pure = WheelFile.parse("jax-0.4.30-py3-none-any.whl")
    assert pure is not None and pure.fits((3, 13), "Windows", "AMD64")
    sdist = WheelFile.parse("jax-0.3.1.tar.gz")
    assert sdist is not None and sdist.is_source and sdist.version == "0.3.1"
    assert not sdist.fits((3, 11), "Linux", "x86_64")
    assert WheelFile.parse("README.txt") is None


def test_the_newest_matching_release_with_a_fitting_wheel(tmp_path):
    for name in ("tf-2.17.0-cp311-cp311-manylinux_2_17_x86_64.whl", "tf-2.17.1-cp311-cp311-manylinux_2_17_x86_64.whl",
                 "tf-2.17.2-cp312-cp312-manylinux_2_17_x86_64.whl", "tf-2.17.3rc0-cp311-cp311-manylinux_2_17_x86_64.whl",
                 "tf-2.18.0-cp311-cp311-manylinux_2_17_x86_64.whl"):
        (tmp_path / name).write_bytes(b"")
    index = Index(tmp_path)
    pick = resolve_release(index, "tf", "2.17", framework="TF", python=(3, 11), system="Linux", machine="x86_64")
    assert pick.version == "2.17.1"  # 2.17.2 has no 3.11 wheel; the rc is not a release
    assert resolve_release(index, "tf", "2.17.0", framework="TF", python=(3, 11), system="Linux",
                           machine="x86_64").version == "2.17.0"
    with pytest.raises(DependencyError, match=r"no wheel for Python 3\.13 on Linux x86_64 \(tf 2\.17\.2\)\n"
                                              r"TF 2\.17\.2 has wheels for Python 3\.12 on this platform"):
        resolve_release(index, "tf", "2.17", framework="TF", python=(3, 13), system="Linux", machine="x86_64")
    (tmp_path / "tf-2.9.0.tar.gz").write_bytes(b"")
    with pytest.raises(DependencyError, match=r"TF 2\.9\.0 is published only as a source archive"):
        resolve_release(index, "tf", "2.9", framework="TF", python=(3, 11), system="Linux", machine="x86_64")


@pytest.mark.parametrize("line, phase", [
    ("Resolved 25 packages in 1.21s", "downloading"),
    ("Downloading tensorflow-cpu (220.0MiB)", "downloading"),
    ("Prepared 25 packages in 41.3s", "installing"),
    ("Installed 25 packages in 1.5s", "installing"),
    ("Collecting tensorflow-cpu==2.17.1", "resolving"),
    ("  Downloading tensorflow_cpu-2.17.1-cp311-cp311-manylinux_2_17_x86_64.whl (221.4 MB)", "downloading"),
    ("Installing collected packages: tensorflow-cpu", "installing"),
    (" + tensorflow-cpu==2.17.1", None),
])
def test_installer_lines_announce_phases(line, phase):
    assert phase_of_line(line)[0] == phase


INTERRUPTED_RUN = '''
import sys
from hloviz.capture.releases import envs
from hloviz.capture.releases.index import Index
from hloviz.capture.releases.installers import UvInstaller, _run, find_uv
from hloviz.capture.releases.source import HlovizSource, running_source

wheels, root, target = sys.argv[1:4]


class SlowToFinish(UvInstaller):
    """Installs, then keeps an installer process running (as uv does while it links files)."""

    def install(self, env_dir, requirements, on_line):
        super().install(env_dir, requirements, on_line)

        def told(line):  # called from _run's loop over the installer's output: it is running
            if line == "LINKING":
                print("STILL-INSTALLING", file=sys.stderr, flush=True)
            on_line(line)

        _run([sys.executable, "-c", "import time; print('LINKING', flush=True); time.sleep(600)"], told,
             "a slow installer")


src = running_source()
manager = envs.EnvManager(root, installer=SlowToFinish(find_uv(), ["--offline", "--no-index", "--find-links", wheels]),
                          index=Index(wheels), source=HlovizSource(src.kind, src.package, src.version, ()))
envs.default_manager = lambda: manager
from hloviz.cli import main

main(["stats", target, "--tf", "2.17"])
'''


def test_ctrl_c_during_an_install_leaves_no_half_made_environment(tmp_path, wheels):
    """A real SIGINT to the process group, as a terminal sends for Ctrl-C, mid-install."""
    import signal
    import subprocess

    model = write_target(tmp_path / "model")
    root = tmp_path / "envs"
    script = tmp_path / "run.py"
    script.write_text(INTERRUPTED_RUN)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, str(script), str(wheels), str(root), f"{model}:fused_additions"],
                            stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, env=env,
                            start_new_session=True, preexec_fn=restore_default_sigint)
    seen = []
    assert proc.stderr is not None
    for line in proc.stderr:  # the event: the slow installer runs and hloviz reads its output
        seen.append(line)
        if "STILL-INSTALLING" in line:
            break
    assert list(root.glob(".tmp-tf2.17-*")), "the environment is being built in a temporary folder"
    os.killpg(proc.pid, signal.SIGINT)
    rest = proc.stderr.read()
    assert proc.wait(timeout=300) == 130  # the installer sleeps 600 s: a hloviz that waits for it fails
    assert "hloviz: interrupted" in rest and "Traceback" not in rest
    assert any("tf 2.17: installing" in line for line in seen)
    assert [p.name for p in root.iterdir() if p.name != ".locks"] == []


def _another_python() -> str | None:
    """A second interpreter: $HLOVIZ_TEST_PYTHON, or python3.12 / 3.10 / 3.13 on PATH."""
    import shutil
    import subprocess

    if os.environ.get("HLOVIZ_TEST_PYTHON"):
        return os.environ["HLOVIZ_TEST_PYTHON"]
    for minor in (12, 10, 13):
        if (3, minor) == PY:
            continue
        exe = shutil.which(f"python3.{minor}")
        if exe and subprocess.run([exe, "-c", "pass"], capture_output=True).returncode == 0:
            return exe
    return None


def test_environments_can_use_another_python(tmp_path, wheels, monkeypatch):
    """HLOVIZ_PYTHON: how to capture under a release without a wheel for the running Python."""
    other = _another_python()
    if other is None:
        pytest.skip("no second Python 3.10+ on PATH")
    from hloviz.capture.releases import envs as envs_module

    monkeypatch.setenv("HLOVIZ_PYTHON", other)
    manager = envs_module.default_manager()
    manager = EnvManager(tmp_path / "envs", installer=offline_uv(wheels), index=Index(wheels), source=source(),
                         python=manager.python)
    assert manager.python_version != f"{PY[0]}.{PY[1]}"
    env = manager.ensure("tensorflow", "2.17")
    assert env.name.startswith(f"tf2.17-py{manager.python_version}-") and env.manifest["python"] == manager.python_version
    model = write_target(tmp_path / "model")
    cap = capture_in_env(f"{model}:fused_additions", "tensorflow", "2.17", manager=manager)
    assert cap.info["python"].startswith(manager.python_version + ".")
    assert cap.post_text == (SAVED / "fused_additions-tf2.17" / "post.hlo").read_text()


def test_a_missing_hloviz_python_is_one_clear_error(monkeypatch):
    from hloviz.capture.releases import envs as envs_module

    monkeypatch.setenv("HLOVIZ_PYTHON", "python3.99-does-not-exist")
    with pytest.raises(InputError, match=r"cannot run the Python interpreter 'python3\.99-does-not-exist' \(HLOVIZ_PYTHON\)"):
        envs_module.default_manager()


def test_jax_resolves_with_its_jaxlib(tmp_path):
    import platform

    tag = f"cp{PY[0]}{PY[1]}"
    (tmp_path / "jax-0.4.30-py3-none-any.whl").write_bytes(b"x" * 10)
    (tmp_path / f"jaxlib-0.4.30-{tag}-{tag}-manylinux2014_{platform.machine()}.whl").write_bytes(b"x" * 1000)
    (tmp_path / "jax-0.4.31-py3-none-any.whl").write_bytes(b"x" * 10)  # no jaxlib 0.4.31 here
    manager = EnvManager(tmp_path / "envs", installer=offline_uv(tmp_path), index=Index(tmp_path), source=source())
    from hloviz.capture.releases.envs import FRAMEWORKS

    jax = FRAMEWORKS["jax"]
    release = manager._resolve(jax, "0.4.30")
    assert release.package == "jax" and release.download_bytes == 1010
    assert jax.requirements(release) == ["jax[cpu]==0.4.30"]  # jax[cpu] pins the jaxlib it needs
    assert manager._resolve(jax, "0.4").version == "0.4.31" and manager._resolve(jax, "0.4").companions == ()
    assert manager.name_for("jax", "0.4.30").startswith(f"jax0.4.30-py{PY[0]}.{PY[1]}-")


TERMINATED_RUN = '''
import os
import sys
from hloviz.capture.releases import envs
from hloviz.capture.releases.index import Index
from hloviz.capture.releases.installers import UvInstaller, _run, find_uv
from hloviz.capture.releases.source import HlovizSource, running_source

wheels, root, target, stubborn = sys.argv[1:5]
INSTALLER = """
import os, signal, subprocess, sys, time
if sys.argv[1] == "yes":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # an installer that does not stop when told
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
print("PIDS", os.getpid(), child.pid, flush=True)
time.sleep(120)
"""


class StartsABackend(UvInstaller):
    """Installs, then runs an installer that has started a child of its own (a build backend)."""

    def install(self, env_dir, requirements, on_line):
        super().install(env_dir, requirements, on_line)

        def echo(line):
            print(line, file=sys.stderr, flush=True)

        _run([sys.executable, "-c", INSTALLER, stubborn], echo, "a slow installer")


src = running_source()
manager = envs.EnvManager(root, installer=StartsABackend(find_uv(), ["--offline", "--no-index", "--find-links", wheels]),
                          index=Index(wheels), source=HlovizSource(src.kind, src.package, src.version, ()))
envs.default_manager = lambda: manager
from hloviz.cli import main

main(["stats", target, "--tf", "2.17"])
'''


def _alive(pid: int) -> bool:
    """``pid`` runs (a zombie, reaped by nobody yet, counts as ended)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("stubborn", ["no", "yes"])
def test_sigterm_during_an_install_tells_the_installer_and_ends_promptly(tmp_path, wheels, stubborn):
    """SIGTERM to hloviz alone (as docker stop sends it), not to its process group: the
    installer is told, and it and the child it started are gone when hloviz exits, well inside
    docker's 10 s grace — also when the installer ignores SIGTERM."""
    import signal
    import subprocess

    model = write_target(tmp_path / "model")
    root = tmp_path / "envs"
    script = tmp_path / "run.py"
    script.write_text(TERMINATED_RUN)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, str(script), str(wheels), str(root), f"{model}:fused_additions", stubborn],
                            stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, env=env,
                            start_new_session=True)
    assert proc.stderr is not None
    pids: list[int] = []
    for line in proc.stderr:
        if line.startswith("PIDS "):
            pids = [int(p) for p in line.split()[1:]]
            break
    assert len(pids) == 2 and all(_alive(p) for p in pids)
    started = time.monotonic()
    os.kill(proc.pid, signal.SIGTERM)
    rest = proc.stderr.read()
    code = proc.wait(timeout=60)
    took = time.monotonic() - started
    print(f"stubborn={stubborn}: SIGTERM to exit {took:.2f} s")
    try:
        assert code == 143, rest
        assert "terminated by SIGTERM" in rest and "Traceback" not in rest
        assert took < 8, f"hloviz took {took:.1f} s to end after SIGTERM"
        assert not any(_alive(p) for p in pids), "the installer and its child are gone"
        assert [p.name for p in root.iterdir() if p.name != ".locks"] == []
    finally:
        for p in pids:
            with contextlib.suppress(OSError):
                os.kill(p, signal.SIGKILL)
