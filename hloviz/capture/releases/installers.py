"""Make a virtual environment and install packages into it: with uv, or venv + pip without it.

uv (a dependency of hloviz, so normally present) resolves and installs TensorFlow in seconds
once its cache holds the wheels; ``python -m venv`` + pip is the fallback where uv cannot run.
Both report what they are doing line by line; :func:`phase_of_line` turns those lines into the
phases the progress display shows (resolving, downloading, installing).

An installer is anything with ``name``, ``create(env_dir, python)`` and
``install(env_dir, requirements, on_line)`` — tests pass their own.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections import deque
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

from hloviz.errors import DependencyError
from hloviz.processes import die_with_parent, own_group, stop_child

__all__ = ["Installer", "PipInstaller", "UvInstaller", "default_installer", "env_python", "phase_of_line"]


class Installer(Protocol):
    name: str

    def create(self, env_dir: Path, python: str) -> None:
        """Create an empty virtual environment at ``env_dir`` for the interpreter ``python``."""

    def install(self, env_dir: Path, requirements: Sequence[str], on_line: Callable[[str], None]) -> None:
        """Install ``requirements``; every output line goes to ``on_line``."""


def env_python(env_dir: Path) -> Path:
    """The interpreter of a virtual environment."""
    if os.name == "nt":
        return env_dir / "Scripts" / "python.exe"
    return env_dir / "bin" / "python"


# Installer output → phase. uv: "Resolved 25 packages in 2.1s", "Downloading tensorflow-cpu
# (220.0MiB)", "Prepared 25 packages in 40s", "Installed 25 packages in 1.5s". pip: "Collecting
# x", "Downloading x-1.whl (220 MB)", "Installing collected packages: …".
_PHASES = (
    (re.compile(r"^\s*(Resolved \d+ package|Downloading |Downloaded |Building |Built )"), "downloading"),
    (re.compile(r"^\s*(Prepared \d+ package|Installing collected packages|Uninstalled |Installed \d+ package)"),
     "installing"),
    (re.compile(r"^\s*(Collecting |Looking in )"), "resolving"),
)
_SIZE = re.compile(r"Downloading (\S+?)(?:-\d[^ ]*\.whl)? \(([\d.]+\s*[KMG]i?B)\)")


def phase_of_line(line: str) -> tuple[str | None, str | None]:
    """``(phase, detail)`` that an installer's output line announces (``(None, None)`` if none)."""
    for pattern, phase in _PHASES:
        if pattern.search(line):
            m = _SIZE.search(line)
            return phase, (f"{m.group(1)} ({m.group(2)})" if m else None)
    return None, None


def _python_for_venv(python: str) -> str:
    """A base interpreter: a venv made from a venv's python would chain to it."""
    if python == sys.executable:
        return getattr(sys, "_base_executable", None) or sys.executable
    return python


def _run(cmd: Sequence[str], on_line: Callable[[str], None], what: str) -> None:
    """Run an installer command, streaming its output; on failure raise its last lines.

    The installer runs in a process group of its own. When hloviz is stopped while it runs
    (Ctrl-C, SIGTERM, SIGHUP), the installer is told with the same signal, given
    :data:`~hloviz.processes.STOP_GRACE` seconds, then killed with whatever it started — never
    left running — so that the caller can remove the half-made environment and exit promptly.
    """
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    env.pop("PYTHONHOME", None)
    env.setdefault("UV_NO_PROGRESS", "1")
    env["PYTHONSAFEPATH"] = "1"  # `python -m pip` run where the user stands: their `grp.py` is not the standard library's
    tail: deque[str] = deque(maxlen=25)
    proc = subprocess.Popen(list(cmd), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            text=True, encoding="utf-8", errors="replace", env=env, preexec_fn=die_with_parent(),
                            **own_group())
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            line = line.rstrip("\n")
            tail.append(line)
            on_line(line)
        rc = proc.wait()
    except BaseException as err:
        stop_child(proc, err)
        raise
    if rc != 0:
        raise InstallFailed(what, rc, list(tail))


class InstallFailed(DependencyError):
    """An installer command failed; ``lines`` is the end of its output."""

    def __init__(self, what: str, rc: int, lines: list[str]) -> None:
        self.what, self.rc, self.lines = what, rc, lines
        shown = "\n".join(f"  {ln}" for ln in lines[-12:])
        super().__init__(f"{what} failed (exit code {rc}):\n{shown}")


class UvInstaller:
    """``uv venv`` + ``uv pip install``; ``extra_args`` go to both (e.g. ``--offline``)."""

    name = "uv"

    def __init__(self, uv: str, extra_args: Sequence[str] = ()) -> None:
        self.uv = uv
        self.extra_args = list(extra_args)

    def create(self, env_dir: Path, python: str) -> None:
        _run([self.uv, "venv", "--quiet", "--python", _python_for_venv(python), "--no-project",
              *self.extra_args, str(env_dir)], lambda _line: None, "uv venv")

    def install(self, env_dir: Path, requirements: Sequence[str], on_line: Callable[[str], None]) -> None:
        if not requirements:
            return
        _run([self.uv, "pip", "install", "--python", str(env_python(env_dir)), *self.extra_args, *requirements],
             on_line, "uv pip install " + " ".join(requirements))


class PipInstaller:
    """``python -m venv`` + ``pip install`` (slower: pip comes into each environment)."""

    name = "pip"

    def __init__(self, extra_args: Sequence[str] = ()) -> None:
        self.extra_args = list(extra_args)

    def create(self, env_dir: Path, python: str) -> None:
        _run([_python_for_venv(python), "-m", "venv", str(env_dir)], lambda _line: None, "python -m venv")
        if not env_python(env_dir).exists():
            raise DependencyError(f"python -m venv made no interpreter in {env_dir}",
                                  hint="on Debian/Ubuntu: apt-get install python3-venv")

    def install(self, env_dir: Path, requirements: Sequence[str], on_line: Callable[[str], None]) -> None:
        if not requirements:
            return
        _run([str(env_python(env_dir)), "-m", "pip", "install", "--progress-bar", "off",
              "--disable-pip-version-check", *self.extra_args, *requirements],
             on_line, "pip install " + " ".join(requirements))


def find_uv() -> str | None:
    """The uv binary: the one of the ``uv`` package hloviz depends on, else one on PATH."""
    try:
        import uv  # type: ignore[import-not-found]

        return str(uv.find_uv_bin())
    except (ImportError, FileNotFoundError, AttributeError):
        return shutil.which("uv")


def default_installer() -> Installer:
    """uv when it can be found (``HLOVIZ_INSTALLER=pip`` forces pip), else venv + pip."""
    choice = os.environ.get("HLOVIZ_INSTALLER", "").strip().lower()
    if choice not in ("", "uv", "pip"):
        raise DependencyError(f"HLOVIZ_INSTALLER must be 'uv' or 'pip', not {choice!r}")
    if choice != "pip":
        uv = find_uv()
        if uv is not None:
            return UvInstaller(uv)
        if choice == "uv":
            raise DependencyError("HLOVIZ_INSTALLER=uv, but uv is not installed", hint="pip install uv")
    return PipInstaller()
