"""Which module of a dump folder ``--module`` names: one rule for XLA's dump folders
(:mod:`.xla_dump`) and for their per-pass snapshots (:mod:`.pass_dump`).

In: the modules found in a folder (anything with a ``number`` written as XLA wrote it, a
``name`` and a ``label``, ``module_NNNN.NAME``) and the text of ``--module``. Out: the one module
it names, or an :class:`~hloviz.errors.InputError` that lists the candidates. A choice names a
module by, in this order (the first rule that finds any decides):

1. its name or label exactly (``jit_mlp``, ``module_0003.jit_mlp``), or its number (``3``,
   ``0003``, ``module_0003``);
2. a glob pattern over the name or label (``jit_*``);
3. a substring of the label.

Numbers are compared as ASCII digit strings, never through ``int()``: ``--module`` may hold
thousands of digits, more than Python converts (and a file name up to 255), and a digit of
another script (``٣``) is no module number.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol, TypeVar

from hloviz.errors import InputError

__all__ = ["PLATFORM_PREFIX", "NumberedModule", "matching", "number_key", "pick", "shown"]

#: The platform part of an optimized module's file name, as XLA writes it before
#: ``after_optimizations``: ``cpu_``, ``sm_8.0_gpu_`` (an A100), ``sm_9.0a_gpu_`` (an H100/H200:
#: the architecture-specific target), ``gfx90a_gpu_`` (ROCm). A regular-expression fragment.
PLATFORM_PREFIX = r"(?:(?:sm_[0-9.]+[a-z]*|gfx[0-9a-z]+)_)?[A-Za-z]+_"


class NumberedModule(Protocol):
    """A module of a dump folder as the pickers see it."""

    @property
    def number(self) -> str: ...

    @property
    def name(self) -> str: ...

    @property
    def label(self) -> str: ...


M = TypeVar("M", bound=NumberedModule)


def number_key(digits: str) -> tuple[int, str]:
    """ASCII digits in numeric order without int(): a file name (or ``--module``) may hold
    thousands of digits, more than Python converts."""
    significant = digits.lstrip("0") or "0"
    return len(significant), significant


def shown(choice: str) -> str:
    """``--module``'s value for a message: quoted, and cut when it is long."""
    return repr(choice) if len(choice) <= 60 else f"{choice[:60]!r}… ({len(choice)} characters)"


def matching(modules: Sequence[M], choice: str) -> list[M]:
    """The modules ``choice`` names, by the first of the module docstring's rules that names any."""
    c = choice.strip()
    num = c.removeprefix("module_")
    number = number_key(num) if num.isascii() and num.isdecimal() else None
    exact = [m for m in modules if c in (m.name, m.label) or (number is not None and m.number.isascii()
                                                              and number == number_key(m.number))]
    if exact:
        return exact
    found = [m for m in modules if fnmatch.fnmatchcase(m.name, c) or fnmatch.fnmatchcase(m.label, c)]
    return found or [m for m in modules if c in m.label]


def pick(modules: Sequence[M], choice: str, *, folder: Path, listing: str, what: str = "module") -> M:
    """The one module of ``modules`` that ``choice`` names; else an error naming the folder and
    listing the candidates (``listing``: every module, one a line, for when none matches)."""
    found = matching(modules, choice)
    if len(found) == 1:
        return found[0]
    if not found:
        raise InputError(f"no {what} in {folder} matches {shown(choice)}; the modules are:\n{listing}")
    sub = "\n".join(f"  {m.label}" for m in found)
    raise InputError(f"{shown(choice)} matches {len(found)} modules in {folder}; be more specific:\n{sub}")
