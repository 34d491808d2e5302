"""Which stack frames belong to the user, and how to show one.

Framework tracebacks run deep through TensorFlow, JAX, autograph's generated files and the
standard library; the frame a user wants is the innermost one in *their* files. A file is the
user's when it is not inside an installed-library location, the standard library or hloviz
itself (the model file named by the target is always the user's, even if it lives in a venv).
"""

from __future__ import annotations

import linecache
import os
import site
import sysconfig
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache, lru_cache


@dataclass(frozen=True)
class Frame:
    file: str
    line: int
    function: str = ""

    def format(self) -> str:
        """``file:line in function`` and the source line beneath, like a traceback entry."""
        head = f'File "{self.file}", line {self.line}' + (f", in {self.function}" if self.function else "")
        code = linecache.getline(self.file, self.line).strip()
        return f"{head}\n    {code}" if code else head


@lru_cache(maxsize=1)
def _library_roots() -> tuple[str, ...]:
    roots: set[str] = set()
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        p = sysconfig.get_paths().get(key)
        if p:
            roots.add(os.path.realpath(p))
    try:
        roots.update(os.path.realpath(p) for p in site.getsitepackages())
    except AttributeError:  # some embedded interpreters lack it
        pass
    user_site = getattr(site, "USER_SITE", None)
    if user_site:
        roots.add(os.path.realpath(user_site))
    roots.add(os.path.realpath(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))  # hloviz/
    return tuple(sorted(roots))


def is_user_file(path: str, *, always: Iterable[str] = ()) -> bool:
    """True when ``path`` is the user's own code (see the module docstring).

    A real model's graph has hundreds of thousands of op tracebacks over a few hundred files, so
    each (file, always) pair is judged once per process: resolving symlinks is a system call.
    """
    return _judge(path, tuple(always))


@cache
def _judge(path: str, always: tuple[str, ...]) -> bool:
    if not path or path.startswith("<"):
        return False
    base = os.path.basename(path)
    if base.startswith("__autograph_generated_file"):
        return False
    real = _realpath(path)
    if any(real == _realpath(a) for a in always):
        return True
    if "/site-packages/" in real or "/dist-packages/" in real:
        return False
    return not any(real == root or real.startswith(root + os.sep) for root in _library_roots())


@cache
def _realpath(path: str) -> str:
    return os.path.realpath(path)


def innermost_user_frame(frames: Iterable[Frame], *, always: Iterable[str] = ()) -> Frame | None:
    """The innermost frame of ``frames`` (outermost first, as in a traceback) in a user file."""
    always = tuple(always)
    found = None
    for fr in frames:
        if is_user_file(fr.file, always=always):
            found = fr
    return found
