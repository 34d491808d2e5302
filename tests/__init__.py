"""hloviz's tests.

:func:`present` unwraps an optional result a test relies on (a module's entry, a computation's
root, a regex match): the test fails there, with the reason, rather than later on an attribute
of None, and the type checker knows what the test goes on to use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from hloviz.ir import Computation, HloModule, Instruction

_T = TypeVar("_T")


def present(value: _T | None, what: str = "a value") -> _T:
    """``value``, asserting it is not None (``what`` names it in the failure)."""
    assert value is not None, f"expected {what}, got None"
    return value


def entry_of(module: HloModule) -> Computation:
    """``module``'s ENTRY computation (every module a test parses has one)."""
    return present(module.entry, f"an ENTRY computation in {module.name}")


def root_of(module: HloModule) -> Instruction:
    """The ROOT instruction of ``module``'s ENTRY computation."""
    return present(entry_of(module).root, f"a ROOT in {module.name}'s ENTRY computation")


def run_cli(args, capsys) -> tuple[int | str | None, str, str]:
    """``hloviz ARGS`` in-process: (exit code, stdout, stderr). A command that returns exits 0."""
    from hloviz.cli import main

    try:
        main(list(args))
        code: int | str | None = 0
    except SystemExit as exc:
        code = exc.code
    out = capsys.readouterr()
    return code, out.out, out.err
