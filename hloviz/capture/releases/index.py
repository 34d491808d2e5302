"""Ask the package index which releases of a framework exist, and which Pythons have wheels.

Before an environment is built, hloviz resolves ``--tf 2.17`` to an exact release (the newest
2.17.x) and checks that a wheel exists for this Python and platform. That is a few kilobytes
from the index, so a version that cannot be had fails at once — with the Pythons that do have a
wheel — instead of after minutes of a resolver's backtracking.

Two kinds of index are read: a PEP 691 JSON "simple" index (``https://pypi.org/simple/``, the
default; ``UV_DEFAULT_INDEX``, ``UV_INDEX_URL`` or ``PIP_INDEX_URL`` override it) and a local
folder of wheels (what ``--find-links DIR`` means to pip and uv).
"""

from __future__ import annotations

import json
import os
import platform
import re
import sys
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from hloviz.errors import DependencyError, InputError

__all__ = ["DEFAULT_INDEX", "Index", "Release", "WheelFile", "default_index", "resolve_release"]

DEFAULT_INDEX = "https://pypi.org/simple/"

# name-version(-build)?-python-abi-platform.whl
_WHEEL = re.compile(r"^(?P<name>[^-]+)-(?P<version>[^-]+)(?:-\d[^-]*)?-(?P<py>[^-]+)-(?P<abi>[^-]+)-(?P<plat>[^-]+)\.whl$")
_SDIST = re.compile(r"^(?P<name>.+?)-(?P<version>\d[^-]*)\.(?:tar\.gz|zip)$")
_RELEASE = re.compile(r"^\d+(\.\d+)*$")


@dataclass(frozen=True)
class WheelFile:
    """One wheel on the index, split into the parts of its file name."""

    filename: str
    version: str
    python_tags: tuple[str, ...]  # cp311, py3, ...
    abi_tags: tuple[str, ...]
    platform_tags: tuple[str, ...]
    size: int | None = None

    @property
    def is_source(self) -> bool:
        return self.python_tags == ("source",)

    @classmethod
    def parse(cls, filename: str, size: int | None = None) -> WheelFile | None:
        """A wheel's name split into its tags; a source archive as a file that fits nowhere."""
        m = _WHEEL.match(filename)
        if m is None:
            s = _SDIST.match(filename)
            return cls(filename, s["version"], ("source",), (), (), size) if s else None
        return cls(filename, m["version"], tuple(m["py"].split(".")), tuple(m["abi"].split(".")),
                   tuple(m["plat"].split(".")), size)

    def pythons(self) -> set[str]:
        """The CPython versions (``3.11``) this wheel is for; ``{"any"}`` for a pure wheel."""
        out = set()
        for tag in self.python_tags:
            if tag.startswith("cp") and tag[2:].isdigit():
                out.add(f"{tag[2]}.{tag[3:]}")
            elif tag in ("py3", "py2.py3") or tag.startswith("py3"):
                out.add("any")
        return out

    def fits_platform(self, system: str, machine: str) -> bool:
        if self.is_source:
            return False
        return any(_platform_fits(tag, system, machine) for tag in self.platform_tags)

    def fits(self, python: tuple[int, int], system: str, machine: str) -> bool:
        """Whether pip/uv would install this wheel on ``python`` (major, minor) here."""
        if not self.fits_platform(system, machine):
            return False
        want = f"{python[0]}.{python[1]}"
        pys = self.pythons()
        if "any" in pys or want in pys:
            return True
        if "abi3" in self.abi_tags:  # stable ABI: built for cp3X, runs on every later 3.Y
            return any(p != "any" and tuple(map(int, p.split("."))) <= python for p in pys)
        return False


def _platform_fits(tag: str, system: str, machine: str) -> bool:
    if tag == "any":
        return True
    arch = {"amd64": "x86_64", "arm64": "aarch64"}.get(machine.lower(), machine.lower())
    if system == "Linux":  # glibc builds; musllinux wheels are for Alpine
        return tag.startswith(("manylinux", "linux_")) and tag.endswith("_" + arch)
    if system == "Darwin":
        mac_arch = "arm64" if arch == "aarch64" else arch
        return tag.startswith("macosx") and tag.endswith(("_" + mac_arch, "_universal2"))
    if system == "Windows":
        return tag == {"x86_64": "win_amd64", "aarch64": "win_arm64"}.get(arch, "win32")
    return False


def platform_words(system: str | None = None, machine: str | None = None) -> str:
    """``Linux x86_64``: how errors name this platform."""
    return f"{system or platform.system()} {machine or platform.machine()}"


def version_key(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split("."))


def matches(version: str, wanted: str) -> bool:
    """``2.17`` matches every final 2.17.x release; ``2.17.1`` only itself."""
    if not _RELEASE.match(version):
        return version == wanted  # a pre-release only when asked for by its exact name
    return version == wanted or version.startswith(wanted + ".")


@dataclass(frozen=True)
class Release:
    """The release a requested version resolved to, and the wheel that will be installed."""

    package: str
    version: str
    wheel: WheelFile
    #: Wheels of the framework's own binary parts that come with it (jaxlib for jax).
    companions: tuple[WheelFile, ...] = ()

    @property
    def download_bytes(self) -> int | None:
        """What the framework's own wheels weigh (their dependencies aside), when the index says."""
        sizes = [w.size for w in (self.wheel, *self.companions)]
        return sum(sizes) if all(s is not None for s in sizes) else None  # type: ignore[misc]


class Index:
    """Wheel file names of a project, from a PEP 691 JSON index or a local folder of wheels."""

    def __init__(self, location: str | Path, *, timeout: float = 20.0) -> None:
        self.location = str(location)
        self.timeout = timeout

    @property
    def is_local(self) -> bool:
        return not re.match(r"^https?://", self.location)

    def files(self, project: str) -> list[WheelFile]:
        norm = re.sub(r"[-_.]+", "-", project).lower()
        if self.is_local:
            folder = Path(self.location.removeprefix("file://"))
            if not folder.is_dir():
                raise InputError(f"the wheel folder {folder} does not exist")
            names = [(p.name, p.stat().st_size) for p in folder.iterdir()
                     if p.name.endswith((".whl", ".tar.gz", ".zip"))]
        else:
            names = self._remote(norm)
        out = []
        for name, size in names:
            w = WheelFile.parse(name, size)
            if w is not None and re.sub(r"[-_.]+", "-", name.split("-")[0]).lower() == norm:
                out.append(w)
        return out

    def _remote(self, project: str) -> list[tuple[str, int | None]]:
        url = self.location.rstrip("/") + f"/{project}/"
        req = urllib.request.Request(url, headers={"Accept": "application/vnd.pypi.simple.v1+json"})
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                data = json.loads(resp.read().decode("utf-8"))
        except urllib.error.HTTPError as exc:
            if exc.code == 404:
                return []
            raise self._unreachable(url, f"HTTP {exc.code}") from None
        except (urllib.error.URLError, OSError, TimeoutError) as exc:
            reason = getattr(exc, "reason", None) or exc
            raise self._unreachable(url, str(reason)) from None
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise DependencyError(f"the package index at {self.location} did not answer in the JSON simple API "
                                  f"(PEP 691) at {url}",
                                  hint="point UV_DEFAULT_INDEX at an index that does, e.g. https://pypi.org/simple/") from None
        return [(f["filename"], f.get("size")) for f in data.get("files", []) if not f.get("yanked")]

    def _unreachable(self, url: str, reason: str) -> DependencyError:
        return DependencyError(
            f"cannot reach the package index ({url}): {reason}",
            hint="environments already built still work offline (hloviz envs list shows them); "
                 "to build a new one, connect to the index or set UV_DEFAULT_INDEX to a mirror")


def default_index() -> Index:
    for var in ("UV_DEFAULT_INDEX", "UV_INDEX_URL", "PIP_INDEX_URL"):
        if os.environ.get(var):
            return Index(os.environ[var])
    return Index(DEFAULT_INDEX)


def resolve_release(index: Index, package: str, wanted: str, *, framework: str,
                    python: tuple[int, int] | None = None, system: str | None = None,
                    machine: str | None = None) -> Release:
    """The newest release of ``package`` matching ``wanted`` with a wheel for this Python and
    platform; a :class:`DependencyError` that says why (and which Pythons have one) otherwise."""
    python = python or sys.version_info[:2]
    system, machine = system or platform.system(), machine or platform.machine()
    files = index.files(package)
    if not files:
        raise DependencyError(f"{package} is not on the package index {index.location}")
    releases = sorted({w.version for w in files if _RELEASE.match(w.version)}, key=version_key)
    candidates = sorted({w.version for w in files if matches(w.version, wanted)},
                        key=lambda v: version_key(v) if _RELEASE.match(v) else (0,), reverse=True)
    if not candidates:
        near = [v for v in releases if v.split(".")[0] == wanted.split(".")[0]][-6:] or releases[-6:]
        raise InputError(f"{framework} {wanted} does not exist on {index.location} ({package})",
                         hint=f"recent releases: {', '.join(near)}")
    here = f"Python {python[0]}.{python[1]} on {platform_words(system, machine)}"
    for version in candidates:
        fitting = [w for w in files if w.version == version and w.fits(python, system, machine)]
        if fitting:
            return Release(package, version, fitting[0])
    newest = candidates[0]
    on_platform = [w for w in files if w.version == newest and w.fits_platform(system, machine)]
    pys = sorted({p for w in on_platform for p in w.pythons() if p != "any"}, key=version_key)
    if pys:
        hint = (f"{framework} {newest} has wheels for Python {', '.join(pys)} on this platform; set "
                f"HLOVIZ_PYTHON=python{pys[-1]} (an installed interpreter) and hloviz builds its environment "
                f"with it, or run hloviz itself under one of those")
    elif all(w.is_source for w in files if w.version == newest):
        hint = (f"{framework} {newest} is published only as a source archive, which hloviz does not build; "
                f"choose a release with wheels")
    else:
        other = sorted({t for w in files if w.version == newest for t in w.platform_tags})
        hint = f"{framework} {newest} has wheels only for: {', '.join(other[:6])}"
    raise DependencyError(f"{framework} {wanted} has no wheel for {here} ({package} {newest})", hint=hint)
