"""Conditions a CI job can fail on (``hloviz diff --fail-on NAME``).

Each check is a yes/no question about a :class:`ModuleDiff`; the CLI exits with 1 when any
check it was asked for answers yes. Names are stable: scripts depend on them.
"""

from __future__ import annotations

from collections.abc import Callable

from ...errors import InputError
from .model import ModuleDiff, Status


def _kernels_changed(d: ModuleDiff) -> bool:
    s = d.summary
    return s.kernels.delta != 0 or any(k.status is not Status.UNCHANGED for k in s.kernel_diffs)


def _fusions_changed(d: ModuleDiff) -> bool:
    s = d.summary
    return bool(s.fusions_added or s.fusions_removed or s.fusions_changed)


def _constants_changed(d: ModuleDiff) -> bool:
    s = d.summary
    return bool(s.constants_appeared or s.constants_vanished or s.constants_changed)


#: Check name → (question, what it means).
CHECKS: dict[str, tuple[Callable[[ModuleDiff], bool], str]] = {
    "any-change": (lambda d: not d.summary.identical, "any instruction changed, was added or removed"),
    "kernels-increased": (lambda d: d.summary.kernels.delta > 0, "the second module runs more kernels"),
    "kernels-decreased": (lambda d: d.summary.kernels.delta < 0, "the second module runs fewer kernels"),
    "kernels-changed": (_kernels_changed, "a kernel was added, removed or changed, or the count differs"),
    "fusions-changed": (_fusions_changed, "a fusion was added, removed or changed"),
    "constants-changed": (_constants_changed, "a constant appeared, vanished or changed value"),
    "not-comparable": (lambda d: not d.comparable, "the entry signatures differ"),
}


def failed_checks(diff: ModuleDiff, names: list[str]) -> list[str]:
    """The checks among ``names`` that ``diff`` fails, in the order given.

    Raises :class:`InputError` for an unknown name, listing the known ones.
    """
    unknown = [n for n in names if n not in CHECKS]
    if unknown:
        raise InputError(f"unknown --fail-on check '{unknown[0]}'",
                         hint="known checks: " + ", ".join(CHECKS))
    return [n for n in dict.fromkeys(names) if CHECKS[n][0](diff)]
