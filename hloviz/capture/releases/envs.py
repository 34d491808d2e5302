"""Environments that hold one TensorFlow (or JAX) release each, for ``--tf VERSION`` captures.

``hloviz stats model.py:fn --tf 2.17`` captures under TensorFlow 2.17 without touching the
user's own environment: hloviz keeps one virtual environment per framework release, Python
version and hloviz source, in ``$XDG_CACHE_HOME/hloviz/envs/`` (``~/.cache/hloviz/envs/``;
``HLOVIZ_ENVS`` overrides it), named like ``tf2.17-py3.11-1a2b3c4d``. Each holds the framework,
hloviz itself (the running one, see :mod:`hloviz.capture.releases.source`) and hloviz's dependencies.

Building one (:meth:`EnvManager.ensure`) goes through phases the caller can show —
``resolving`` (the index says which release ``2.17`` is and that a wheel fits this Python),
``downloading``, ``installing``, ``checking`` (the framework imports) — and is safe:

- it happens in a temporary folder beside the cache, renamed into place only when complete, so
  Ctrl-C (or a crash) never leaves a half-made environment that a later run would trust;
- a file lock per environment makes concurrent runs wait for one install and then share it;
- a capture holds a shared lock on its environment, so ``hloviz envs remove`` cannot pull the
  environment from under it.

Environments are reused across runs; ``hloviz envs list|remove|prune`` manage them. File locks
are POSIX ``flock``; where there is none (Windows) concurrent runs are not serialised.

The cache may be shared, so hloviz touches only what it names itself: folders named like an
environment (:data:`ENV_NAME`) and its own temporary folders (``.tmp-NAME-PID``,
``.tmp-NAME-removing-PID``). Anything else there — a user's ``.tmp-thesis/``, a file — is
never listed, locked or removed. A symbolic link under an environment's name is not followed:
it is never used or deleted through; ``remove`` deletes the link alone and says so. A damaged
``hloviz-env.json`` makes an environment *damaged* (listed with the reason, rebuilt when
needed, removed by ``prune``), never an error.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as _dt
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from hloviz.capture.releases.env_files import (
    ENV_NAME,
    MANIFEST_LIMIT,
    TEMP_NAME,
    delete,
    is_package,
    link_target,
    manifest_problem,
)
from hloviz.capture.releases.index import Index, Release, default_index, resolve_release
from hloviz.capture.releases.installers import Installer, InstallFailed, default_installer, env_python, phase_of_line
from hloviz.capture.releases.source import HlovizSource, running_source
from hloviz.errors import DependencyError, InputError, visible

__all__ = ["FRAMEWORKS", "Env", "EnvManager", "Framework", "Phases", "cache_root", "check_release",
           "default_manager"]

MANIFEST = "hloviz-env.json"
LAST_USED = "last-used"



@dataclass(frozen=True)
class Framework:
    """How to install and check one framework: its option, package and import test."""

    name: str  # "tensorflow" / "jax" (the capture.json key)
    option: str  # "--tf"
    short: str  # "tf": environment names
    words: str  # "TensorFlow": messages
    probe: str  # Python that prints the installed versions as JSON

    def package(self, machine: str | None = None) -> str:
        if self.name == "jax":
            return "jax"
        machine = (machine or platform.machine()).lower()
        # tensorflow-cpu: the CPU build without the CUDA libraries (a quarter of the download)
        return "tensorflow-cpu" if platform.system() == "Linux" and machine in ("x86_64", "amd64") else "tensorflow"

    def requirements(self, release: Release) -> list[str]:
        if self.name == "jax":
            return [f"jax[cpu]=={release.version}"]
        return [f"{release.package}=={release.version}"]


FRAMEWORKS = {
    "tensorflow": Framework("tensorflow", "--tf", "tf", "TensorFlow",
                            "import json, tensorflow as tf; print(json.dumps({'tensorflow': tf.__version__}))"),
    "jax": Framework("jax", "--jax", "jax", "JAX",
                     "import json, jax, jaxlib; print(json.dumps({'jax': jax.__version__, "
                     "'jaxlib': getattr(jaxlib, '__version__', None) or jaxlib.version.__version__}))"),
}


def cache_root() -> Path:
    """``$HLOVIZ_ENVS``, else ``$XDG_CACHE_HOME/hloviz/envs``, else ``~/.cache/hloviz/envs``."""
    if os.environ.get("HLOVIZ_ENVS"):
        return Path(os.environ["HLOVIZ_ENVS"]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "hloviz" / "envs"


class Phases:
    """Timings of the phases of one version's capture, reported to ``on_phase`` as they start.

    ``on_phase(phase, detail)`` is called with ``resolving``, ``waiting``, ``downloading``,
    ``installing``, ``checking``, ``capturing``, ``reused`` and finally ``done``.
    """

    def __init__(self, on_phase: Callable[[str, str | None], None] | None = None) -> None:
        self.on_phase = on_phase
        self.seconds: dict[str, float] = {}
        self.current: str | None = None
        self._started = time.monotonic()

    def start(self, phase: str, detail: str | None = None) -> None:
        if phase == self.current and detail is None:
            return
        self._close()
        self.current = phase
        if self.on_phase is not None:
            self.on_phase(phase, detail)

    def _close(self) -> None:
        now = time.monotonic()
        if self.current is not None and self.current not in ("done", "reused"):
            self.seconds[self.current] = round(self.seconds.get(self.current, 0.0) + now - self._started, 3)
        self._started = now

    def finish(self) -> None:
        self.start("done")


@dataclass
class Env:
    """A complete environment in the cache."""

    path: Path
    manifest: dict = field(default_factory=dict)
    #: Why hloviz will not use it, when it will not: its ``hloviz-env.json`` is damaged, or the
    #: entry is a symbolic link (see the module docstring). None for a sound environment.
    problem: str | None = None

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def is_link(self) -> bool:
        return self.path.is_symlink()

    @property
    def python(self) -> Path:
        return env_python(self.path)

    @property
    def versions(self) -> dict:
        """The exact framework versions installed (``{"tensorflow": "2.17.1"}``)."""
        return dict(self.manifest.get("installed") or {})

    def last_used(self) -> float:
        """When a capture last used it (its manifest's time before the first), 0 when unknown."""
        for name in (LAST_USED, MANIFEST):
            with contextlib.suppress(OSError):
                return os.lstat(self.path / name).st_mtime
        return 0.0

    def size(self) -> int:
        """Bytes of its files (a link's target is not counted: hloviz does not follow it)."""
        if self.is_link:
            return 0
        total = 0
        for dirpath, _dirs, files in os.walk(self.path):
            for f in files:
                with contextlib.suppress(OSError):
                    total += os.lstat(os.path.join(dirpath, f)).st_size
        return total


@contextlib.contextmanager
def file_lock(path: Path, *, shared: bool = False, wait: bool = True,
              on_wait: Callable[[], None] | None = None) -> Iterator[bool]:
    """Hold a ``flock`` on ``path``; yields False (holding nothing) when ``wait`` is False and
    another process holds it. ``on_wait`` is called once if we have to wait."""
    try:
        import fcntl
    except ImportError:  # no flock here: go ahead unserialised (see the module docstring)
        yield True
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        mode = fcntl.LOCK_SH if shared else fcntl.LOCK_EX
        try:
            fcntl.flock(fd, mode | fcntl.LOCK_NB)
        except BlockingIOError:
            if not wait:
                yield False
                return
            if on_wait is not None:
                on_wait()
            fcntl.flock(fd, mode)
        yield True
    finally:
        os.close(fd)  # closing releases the lock


class EnvManager:
    """The cache of environments: build (:meth:`ensure`), :meth:`list`, :meth:`remove`, :meth:`prune`."""

    def __init__(self, root: Path | str | None = None, *, installer: Installer | None = None,
                 index: Index | None = None, source: HlovizSource | None = None,
                 python: str | None = None) -> None:
        self.root = Path(root) if root is not None else cache_root()
        self._installer = installer
        self._index = index
        self.source = source or running_source()
        self.python = python or sys.executable
        self.python_version = ".".join(map(str, sys.version_info[:2])) if python is None else self._ask_version(python)

    @property
    def installer(self) -> Installer:
        if self._installer is None:
            self._installer = default_installer()
        return self._installer

    @property
    def index(self) -> Index:
        if self._index is None:
            self._index = default_index()
        return self._index

    @staticmethod
    def _ask_version(python: str) -> str:
        try:
            out = subprocess.run([python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                                 capture_output=True, text=True, check=False, stdin=subprocess.DEVNULL)
        except OSError as exc:
            raise InputError(f"cannot run the Python interpreter {python!r} (HLOVIZ_PYTHON): {exc.strerror or exc}",
                             hint="set HLOVIZ_PYTHON to an interpreter on PATH, e.g. python3.12, or unset it") from None
        if out.returncode != 0:
            raise InputError(f"cannot run the Python interpreter {python!r} (HLOVIZ_PYTHON)")
        return out.stdout.strip()

    # -- naming ---------------------------------------------------------------------------------

    def name_for(self, framework: str, requested: str) -> str:
        fw = _framework(framework)
        return f"{fw.short}{requested}-py{self.python_version}-{self.source.identity}"

    def _lock_path(self, name: str) -> Path:
        return self.root / ".locks" / f"{name}.lock"

    @staticmethod
    def complete(path: Path) -> bool:
        """``path`` holds a whole environment: a real folder (not a link) with a manifest and an
        interpreter. Whether the manifest is sound is :meth:`_load`'s question."""
        return (not path.is_symlink() and path.is_dir() and (path / MANIFEST).is_file()
                and env_python(path).exists())

    def find(self, framework: str, requested: str) -> Env | None:
        path = self.root / self.name_for(framework, requested)
        if not self.complete(path):
            return None
        env = self._load(path)
        return env if env.problem is None else None

    @staticmethod
    def _load(path: Path) -> Env:
        """The environment at ``path``, with :attr:`Env.problem` set when it is a link or its
        manifest is damaged (then ``manifest`` is empty: nothing in it is trusted)."""
        if path.is_symlink():
            return Env(path, {}, f"a symbolic link to {link_target(path)}; hloviz does not follow it")
        try:
            manifest = json.loads((path / MANIFEST).read_bytes()[:MANIFEST_LIMIT].decode("utf-8"))
        except OSError as err:
            return Env(path, {}, f"its {MANIFEST} cannot be read ({err.strerror or err})")
        except UnicodeDecodeError:
            return Env(path, {}, f"its {MANIFEST} is not UTF-8 text")
        except (ValueError, RecursionError):
            return Env(path, {}, f"its {MANIFEST} is not JSON")
        problem = manifest_problem(manifest, FRAMEWORKS)
        if problem is not None:
            return Env(path, {}, f"its {MANIFEST} is damaged: {problem}")
        return Env(path, manifest)

    # -- building -------------------------------------------------------------------------------

    def ensure(self, framework: str, requested: str, phases: Phases | None = None) -> Env:
        """The environment for ``framework`` ``requested`` (``"2.17"``, ``"2.17.1"``), built if
        missing (see the module docstring for the phases and the guarantees)."""
        fw = _framework(framework)
        requested = _check_version(fw, requested)
        phases = phases or Phases()
        name = self.name_for(framework, requested)
        final = self.root / name
        if final.is_symlink():
            raise InputError(f"{final} is a symbolic link; hloviz does not follow links in its cache of environments",
                             hint=f"remove the link (hloviz envs remove {name}) and hloviz builds the environment there")
        env = self.find(framework, requested)
        if env is not None:
            phases.start("reused", name)
            _touch(final / LAST_USED)
            return env
        self.root.mkdir(parents=True, exist_ok=True)
        with file_lock(self._lock_path(name),
                       on_wait=lambda: phases.start("waiting", "another hloviz is installing it")):
            env = self.find(framework, requested)
            if env is not None:  # built by the run we waited for
                phases.start("reused", name)
                _touch(final / LAST_USED)
                return env
            self._clear_leftovers(name)
            phases.start("resolving", f"{fw.words} {requested}")
            release = self._resolve(fw, requested)
            phases.start("resolving", f"{release.package} {release.version}")
            return self._build(fw, requested, release, final, phases)

    def _resolve(self, fw: Framework, requested: str) -> Release:
        py = tuple(int(p) for p in self.python_version.split("."))
        release = resolve_release(self.index, fw.package(), requested, framework=fw.words, python=py)  # type: ignore[arg-type]
        if fw.name == "jax":  # jax is pure Python; jaxlib is the part that needs a wheel for this Python
            try:
                jaxlib = resolve_release(self.index, "jaxlib", release.version, framework="jaxlib", python=py)  # type: ignore[arg-type]
            except InputError:  # no jaxlib of the same number: jax[cpu] names the one it needs
                return release
            return dataclasses.replace(release, companions=(jaxlib.wheel,))
        return release

    def _clear_leftovers(self, name: str) -> None:
        """Remove what an interrupted build of ``name`` left, and a damaged environment of that
        name (we hold its lock: nobody builds or uses it)."""
        for p in self._temporaries():
            if TEMP_NAME.fullmatch(p.name)["name"] == name:  # type: ignore[index]  # _temporaries matched it
                delete(p)
        final = self.root / name
        if final.exists() and not final.is_symlink() and self._load(final).problem is not None:
            delete(final)

    def _build(self, fw: Framework, requested: str, release: Release, final: Path, phases: Phases) -> Env:
        tmp = self.root / f".tmp-{final.name}-{os.getpid()}"
        started = time.monotonic()
        try:
            self.installer.create(tmp, self.python)
            self.source.place(tmp, _site_packages(tmp))
            size = f" ({release.download_bytes / 1e6:.0f} MB)" if release.download_bytes else ""

            def on_line(line: str) -> None:
                phase, _detail = phase_of_line(line)
                if phase in ("downloading", "installing") and phase != phases.current:
                    phases.start(phase, f"{release.package} {release.version}{size if phase == 'downloading' else ''}")

            try:
                self.installer.install(tmp, [*fw.requirements(release), *self.source.requirements], on_line)
            except InstallFailed as exc:
                raise _explain_install_failure(fw, release, exc, self.python_version) from None
            phases.start("checking", f"import {fw.name}")
            installed = self._probe(fw, tmp, release)
            manifest = {
                "framework": fw.name, "requested": requested, "package": release.package,
                "installed": installed, "python": self.python_version, "python_executable": self.python,
                "hloviz": self.source.version, "hloviz_source": self.source.kind,
                "hloviz_path": str(self.source.package), "hloviz_identity": self.source.identity,
                "installer": self.installer.name,
                "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
                "build_seconds": round(time.monotonic() - started, 1),
            }
            (tmp / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
            _touch(tmp / LAST_USED)
            os.rename(tmp, final)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        return Env(final, manifest)

    def _probe(self, fw: Framework, env_dir: Path, release: Release) -> dict:
        """Import the framework in the new environment: a release that installs but does not
        import (a missing system library, an ABI mismatch) fails here, not in every capture."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
        env.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
        out = subprocess.run([str(env_python(env_dir)), "-I", "-c", fw.probe], capture_output=True, text=True,
                             env=env, check=False, stdin=subprocess.DEVNULL)
        if out.returncode != 0:
            lines = [ln for ln in out.stderr.strip().splitlines() if ln.strip()]
            raise DependencyError(
                f"{fw.words} {release.version} installed, but it does not import under Python {self.python_version}: "
                f"{lines[-1] if lines else f'exit code {out.returncode}'}",
                hint=f"try another release ({fw.option} …), or run hloviz under another Python")
        try:
            return json.loads(out.stdout.strip().splitlines()[-1])
        except (IndexError, json.JSONDecodeError):
            raise DependencyError(f"{fw.words} {release.version}: importing it printed no version") from None

    # -- using ----------------------------------------------------------------------------------

    @contextlib.contextmanager
    def using(self, env: Env) -> Iterator[Env]:
        """Hold ``env`` for a capture: ``remove``/``prune`` leave it alone meanwhile."""
        with file_lock(self._lock_path(env.name), shared=True):
            if not self.complete(env.path):
                raise DependencyError(f"the environment {env.path} was removed while hloviz was about to use it",
                                      hint="run the command again; it will be rebuilt")
            yield env

    # -- managing -------------------------------------------------------------------------------

    def list(self) -> list[Env]:
        """The environments, newest use first: folders named as hloviz names them that hold a
        manifest and an interpreter, damaged ones and links under such names too (with their
        :attr:`Env.problem`). Nothing else in the folder is hloviz's."""
        if not self.root.is_dir():
            return []
        envs = [self._load(p) for p in self.root.iterdir()
                if ENV_NAME.fullmatch(p.name) and (p.is_symlink() or self.complete(p))]
        return sorted(envs, key=lambda e: -e.last_used())

    def select(self, names: Sequence[str] = (), framework: str | None = None, version: str | None = None) -> list[Env]:
        """Environments by name (or name prefix), or by framework and requested version."""
        out = []
        for env in self.list():
            if names and not any(env.name == n or env.name.startswith(n) for n in names):
                continue
            if framework and env.manifest.get("framework") != framework:
                continue
            if version and version not in (env.manifest.get("requested"),
                                           (env.manifest.get("installed") or {}).get(framework or "", None)):
                continue
            out.append(env)
        return out

    def remove(self, env: Env) -> bool:
        """Delete ``env`` unless a capture is using it; True when it is gone, False when in use.
        A link is deleted alone, never what it points to. :class:`InputError` when ``env`` is
        not one of this cache's or cannot be deleted whole (naming what is left)."""
        if env.path.parent != self.root or not ENV_NAME.fullmatch(env.name):
            raise InputError(f"{env.path} is not an environment of {self.root}; hloviz removes only its own")
        if env.is_link:
            delete(env.path)
            return True
        with file_lock(self._lock_path(env.name), wait=False) as got:
            if not got:
                return False
            doomed = self.root / f".tmp-{env.name}-removing-{os.getpid()}"
            try:
                os.rename(env.path, doomed)  # gone from the cache at once, even if deleting takes long
            except FileNotFoundError:
                return True
            except OSError as err:
                raise InputError(f"cannot remove {env.path}: {err.strerror or err}") from None
            delete(doomed)
        return True  # the lock file stays: a run waiting on it must not race one that made a new one

    def stale(self, older_than_days: float) -> list[tuple[Env, str]]:
        """Environments ``prune`` would remove, with the reason."""
        cutoff = time.time() - older_than_days * 86400
        out = []
        for env in self.list():
            m = env.manifest
            if env.is_link:
                continue  # not hloviz's to judge: envs remove NAME deletes the link
            if env.problem is not None:
                out.append((env, env.problem))
            elif m.get("hloviz_source") == "checkout" and not is_package(m.get("hloviz_path", "")):
                checkout = str(Path(m.get("hloviz_path", "")).parent)
                shown = checkout if len(checkout) <= 200 else f"{checkout[:200]}… ({len(checkout)} characters)"
                out.append((env, f"its hloviz checkout {visible(shown)} is gone"))
            elif m.get("hloviz_path") == str(self.source.package) and m.get("hloviz_identity") != self.source.identity:
                out.append((env, "made for this hloviz before its dependencies changed"))
            elif m.get("hloviz_identity") != self.source.identity and m.get("hloviz_source") == "installed":
                out.append((env, f"made for another installed hloviz ({m.get('hloviz')})"))
            elif env.last_used() < cutoff:
                days = (time.time() - env.last_used()) / 86400
                out.append((env, f"unused for {days:.0f} days"))
        return out

    def leftovers(self) -> list[Path]:
        """hloviz's temporary folders (builds and removals) whose process is gone (no lock
        held). Only names hloviz gives them count (a user's ``.tmp-thesis`` is not one), and
        the lock is looked at only for such a name."""
        out = []
        for p in self._temporaries():
            name = TEMP_NAME.fullmatch(p.name)["name"]  # type: ignore[index]  # _temporaries matched it
            if not self._lock_path(name).exists():
                out.append(p)  # no build ever locked it: nobody is building it
                continue
            with file_lock(self._lock_path(name), wait=False) as got:
                if got:
                    out.append(p)
        return out

    def remove_leftover(self, path: Path) -> None:
        """Delete one of :meth:`leftovers` (a link alone, not what it points to);
        :class:`InputError` naming what is left when it cannot."""
        if path.parent != self.root or not TEMP_NAME.fullmatch(path.name):
            raise InputError(f"{path} is not a temporary folder of hloviz's; hloviz removes only its own")
        delete(path)

    def _temporaries(self) -> list[Path]:
        if not self.root.is_dir():
            return []
        return sorted(p for p in self.root.iterdir() if TEMP_NAME.fullmatch(p.name))


def default_manager() -> EnvManager:
    """The manager of the user's cache (:func:`cache_root`), with uv or pip and the default index.
    Environments get the running Python, or ``$HLOVIZ_PYTHON`` (e.g. ``python3.12``) when set:
    the way to capture under a release that has no wheel for the running Python."""
    return EnvManager(python=os.environ.get("HLOVIZ_PYTHON") or None)


def _framework(name: str) -> Framework:
    if name not in FRAMEWORKS:
        raise InputError(f"unknown framework {name!r}; hloviz installs: {', '.join(FRAMEWORKS)}")
    return FRAMEWORKS[name]


#: A release number as ``--tf`` / ``--jax`` take it: one to three parts of ASCII digits, each
#: short (real ones have at most four: 2.17.1, 0.4.30, 2024.1); it becomes part of a folder name.
_RELEASE = re.compile(r"[0-9]{1,6}(?:\.[0-9]{1,6}){0,2}", re.ASCII)


def check_release(framework: str, requested: str) -> str:
    """``requested`` (``--tf`` / ``--jax``'s value) stripped, or an :class:`InputError` saying
    what a release number is."""
    return _check_version(_framework(framework), requested)


def _check_version(fw: Framework, requested: str) -> str:
    """``requested`` stripped, when it is a release number; checked before anything is named,
    locked or created after it."""
    v = requested.strip()
    if not _RELEASE.fullmatch(v):
        shown = requested if len(requested) <= 40 else f"{requested[:40]}… ({len(requested)} characters)"
        raise InputError(f"{fw.option} takes a release number such as 2.17 or 2.17.1 (ASCII digits), "
                         f"not {visible(repr(shown))}")
    return v


def _touch(path: Path) -> None:
    with contextlib.suppress(OSError):
        path.touch()
        os.utime(path)


def _site_packages(env_dir: Path) -> Path:
    """The environment's purelib folder, asked from its own interpreter."""
    out = subprocess.run([str(env_python(env_dir)), "-I", "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                         capture_output=True, text=True, check=False, stdin=subprocess.DEVNULL)
    if out.returncode != 0 or not out.stdout.strip():
        raise DependencyError(f"the new environment's Python ({env_python(env_dir)}) does not run: "
                              f"{out.stderr.strip()[-300:]}")
    return Path(out.stdout.strip())


def _explain_install_failure(fw: Framework, release: Release, exc: InstallFailed, python: str) -> DependencyError:
    text = "\n".join(exc.lines).lower()
    offline = ("failed to fetch", "dns error", "could not connect", "network is unreachable", "connection refused",
               "temporary failure in name resolution", "offline")
    if any(s in text for s in offline):
        return DependencyError(
            f"installing {release.package} {release.version} failed: the package index cannot be reached\n"
            + "\n".join(f"  {ln}" for ln in exc.lines[-6:]),
            hint="environments already built still work offline (hloviz envs list shows them)")
    return DependencyError(f"installing {fw.words} {release.version} for Python {python} failed "
                           f"({exc.what}, exit code {exc.rc}):\n" + "\n".join(f"  {ln}" for ln in exc.lines[-12:]))
