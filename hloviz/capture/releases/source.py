"""Where the running hloviz comes from, and how to put the same hloviz into an environment.

A capture under another TensorFlow runs hloviz inside that TensorFlow's environment, and it must
be *this* hloviz — the same code that will read the capture. Two cases:

- a checkout (``pip install -e .``, or the source folder on ``PYTHONPATH``): the environment
  gets a link to the checkout's ``hloviz`` package, so it always runs the checkout's current
  code, like an editable install;
- an installed wheel: the files the wheel installed (its ``RECORD``) are copied in.

Either way the environment also gets a ``dist-info`` (so ``importlib.metadata`` sees hloviz at
the running version), and the installer installs hloviz's own dependencies next to TensorFlow.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

__all__ = ["HlovizSource", "running_source"]

_PACKAGE = Path(__file__).resolve().parents[2]  # .../hloviz (this is hloviz/capture/releases/source.py)


@dataclass(frozen=True)
class HlovizSource:
    """The hloviz an environment must hold: ``kind`` is ``checkout`` or ``installed``."""

    kind: str
    package: Path  # the hloviz package folder
    version: str
    requirements: tuple[str, ...]  # hloviz's own runtime dependencies

    @property
    def identity(self) -> str:
        """Eight hex digits naming this source (a checkout by its path, a wheel by its files)."""
        if self.kind == "checkout":
            what = f"checkout:{self.package}"
        else:
            what = f"installed:{self.version}:{self._record_digest()}"
        what += "|" + "|".join(self.requirements)
        return hashlib.sha256(what.encode()).hexdigest()[:8]

    def describe(self) -> str:
        return f"hloviz {self.version} ({'checkout ' + str(self.package.parent) if self.kind == 'checkout' else 'installed'})"

    def exists(self) -> bool:
        return (self.package / "__init__.py").is_file()

    def _record_digest(self) -> str:
        dist = _distribution()
        text = dist.read_text("RECORD") if dist is not None else None
        return hashlib.sha256((text or "").encode()).hexdigest()[:12]

    def place(self, env_dir: Path, site_packages: Path) -> None:
        """Make this hloviz importable from ``site_packages`` of the environment at ``env_dir``
        (see the module docstring). Paths inside the environment are relative, so that the
        environment can be built in a temporary folder and renamed into place."""
        site_packages.mkdir(parents=True, exist_ok=True)
        if self.kind == "checkout":
            link_dir = env_dir / "hloviz-source"
            link_dir.mkdir(parents=True, exist_ok=True)
            try:
                os.symlink(self.package, link_dir / "hloviz", target_is_directory=True)
                rel = os.path.relpath(link_dir, site_packages)  # .pth lines are relative to their folder
                (site_packages / "hloviz-source.pth").write_text(f"{rel}\n", encoding="utf-8")
            except OSError:  # no symlinks (Windows without developer mode): the checkout itself
                (site_packages / "hloviz-source.pth").write_text(f"{self.package.parent}\n", encoding="utf-8")
            url = self.package.parent.as_uri()
            self._dist_info(site_packages, {"url": url, "dir_info": {"editable": True}})
            return
        dist = _distribution()
        if dist is None:
            raise RuntimeError("hloviz is not installed as a distribution")
        for f in dist.files or ():
            src = Path(str(dist.locate_file(f)))
            parts = Path(str(f)).parts
            if not parts or parts[0].startswith("..") or "__pycache__" in parts or not src.is_file():
                continue
            if parts[0] == "hloviz" or parts[0].endswith(".dist-info"):
                dest = site_packages / Path(*parts)
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, dest)

    def _dist_info(self, site_packages: Path, direct_url: dict) -> None:
        info = site_packages / f"hloviz-{self.version}.dist-info"
        info.mkdir(exist_ok=True)
        meta = ["Metadata-Version: 2.1", "Name: hloviz", f"Version: {self.version}"]
        meta += [f"Requires-Dist: {r}" for r in self.requirements]
        (info / "METADATA").write_text("\n".join(meta) + "\n", encoding="utf-8")
        (info / "INSTALLER").write_text("hloviz\n", encoding="utf-8")
        (info / "direct_url.json").write_text(json.dumps(direct_url) + "\n", encoding="utf-8")
        (info / "RECORD").write_text("", encoding="utf-8")


def _distribution():
    from importlib import metadata

    try:
        dist = metadata.distribution("hloviz")
    except metadata.PackageNotFoundError:
        return None
    try:  # the distribution must be the one this code was imported from
        where = Path(str(dist.locate_file("hloviz"))).resolve()
    except (TypeError, OSError):
        return None
    return dist if where == _PACKAGE else None


def _checkout_requirements(root: Path) -> tuple[str, ...] | None:
    """``[project] dependencies`` of the checkout's pyproject.toml, or None if it is not hloviz's."""
    pyproject = root / "pyproject.toml"
    if not pyproject.is_file():
        return None
    text = pyproject.read_text(encoding="utf-8")
    try:
        import tomllib

        project = tomllib.loads(text).get("project", {})
        if project.get("name") != "hloviz":
            return None
        return tuple(project.get("dependencies", []))
    except ImportError:  # Python 3.10: read the one list we need
        if not re.search(r'^name\s*=\s*"hloviz"', text, re.MULTILINE):
            return None
        m = re.search(r"^dependencies\s*=\s*\[(.*?)\]", text, re.MULTILINE | re.DOTALL)
        return tuple(re.findall(r'"([^"]+)"', m.group(1))) if m else ()


def _version() -> str:
    from hloviz.capture.result import hloviz_version

    return hloviz_version()


def running_source() -> HlovizSource:
    """The hloviz this process runs."""
    reqs = _checkout_requirements(_PACKAGE.parent)
    if reqs is not None:
        return HlovizSource("checkout", _PACKAGE, _version(), reqs)
    dist = _distribution()
    if dist is not None:
        reqs = tuple(r for r in (dist.requires or ()) if "extra ==" not in r.replace('"', "").replace("'", ""))
        return HlovizSource("installed", _PACKAGE, dist.version, reqs)
    # Neither: a copy of the package folder somewhere on sys.path. Link it like a checkout.
    return HlovizSource("checkout", _PACKAGE, _version(), ("networkx>=3.0", "graphviz>=0.20", "typer>=0.12", "rich>=13"))
