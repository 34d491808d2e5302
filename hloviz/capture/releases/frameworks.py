"""The frameworks hloviz installs into environments, and the release numbers ``--tf`` / ``--jax`` take.

In: a framework name (``tensorflow``, ``jax``) and a requested release (``2.17``). Out: the
:class:`Framework` (its option, package, import check) and the release checked as a number that
may become part of a folder name. Its own module because the CLI checks ``--tf``'s value
(:func:`check_release`) long before any environment is looked at.
"""

from __future__ import annotations

import platform
import re
from dataclasses import dataclass

from hloviz.capture.releases.index import Release
from hloviz.errors import InputError, visible

__all__ = ["FRAMEWORKS", "Framework", "check_release", "checked_release", "framework_named"]


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


def framework_named(name: str) -> Framework:
    if name not in FRAMEWORKS:
        raise InputError(f"unknown framework {name!r}; hloviz installs: {', '.join(FRAMEWORKS)}")
    return FRAMEWORKS[name]


#: A release number as ``--tf`` / ``--jax`` take it: one to three parts of ASCII digits, each
#: short (real ones have at most four: 2.17.1, 0.4.30, 2024.1); it becomes part of a folder name.
_RELEASE = re.compile(r"[0-9]{1,6}(?:\.[0-9]{1,6}){0,2}", re.ASCII)


def check_release(framework: str, requested: str) -> str:
    """``requested`` (``--tf`` / ``--jax``'s value) stripped, or an :class:`InputError` saying
    what a release number is."""
    return checked_release(framework_named(framework), requested)


def checked_release(fw: Framework, requested: str) -> str:
    """``requested`` stripped, when it is a release number; checked before anything is named,
    locked or created after it."""
    v = requested.strip()
    if not _RELEASE.fullmatch(v):
        shown = requested if len(requested) <= 40 else f"{requested[:40]}… ({len(requested)} characters)"
        raise InputError(f"{fw.option} takes a release number such as 2.17 or 2.17.1 (ASCII digits), "
                         f"not {visible(repr(shown))}")
    return v
