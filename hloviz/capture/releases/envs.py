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
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from hloviz.capture.releases.cache import LAST_USED, MANIFEST, Env, EnvCache, cache_root, file_lock
from hloviz.capture.releases.env_files import (
    TEMP_NAME,
    delete,
)
from hloviz.capture.releases.frameworks import FRAMEWORKS, Framework, check_release, checked_release, framework_named
from hloviz.capture.releases.index import Index, Release, default_index, resolve_release
from hloviz.capture.releases.installers import Installer, InstallFailed, default_installer, env_python, phase_of_line
from hloviz.capture.releases.source import HlovizSource, running_source
from hloviz.errors import DependencyError, InputError

__all__ = ["FRAMEWORKS", "Env", "EnvManager", "Framework", "Phases", "cache_root", "check_release",
           "default_manager"]


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


class EnvManager(EnvCache):
    """The cache of environments: build (:meth:`ensure`); :meth:`list`, :meth:`remove`,
    :meth:`stale` … are :class:`~.cache.EnvCache`'s."""

    def __init__(self, root: Path | str | None = None, *, installer: Installer | None = None,
                 index: Index | None = None, source: HlovizSource | None = None,
                 python: str | None = None) -> None:
        super().__init__(root, source or running_source())
        self._installer = installer
        self._index = index
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
        fw = framework_named(framework)
        return f"{fw.short}{requested}-py{self.python_version}-{self.source.identity}"

    def find(self, framework: str, requested: str) -> Env | None:
        path = self.root / self.name_for(framework, requested)
        if not self.complete(path):
            return None
        env = self.load(path)
        return env if env.problem is None else None

    # -- building -------------------------------------------------------------------------------

    def ensure(self, framework: str, requested: str, phases: Phases | None = None) -> Env:
        """The environment for ``framework`` ``requested`` (``"2.17"``, ``"2.17.1"``), built if
        missing (see the module docstring for the phases and the guarantees)."""
        fw = framework_named(framework)
        requested = checked_release(fw, requested)
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
        with file_lock(self.lock_path(name),
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
        if final.exists() and not final.is_symlink() and self.load(final).problem is not None:
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

def default_manager() -> EnvManager:
    """The manager of the user's cache (:func:`cache_root`), with uv or pip and the default index.
    Environments get the running Python, or ``$HLOVIZ_PYTHON`` (e.g. ``python3.12``) when set:
    the way to capture under a release that has no wheel for the running Python."""
    return EnvManager(python=os.environ.get("HLOVIZ_PYTHON") or None)


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
