"""The error types hloviz raises, and the exit codes the CLI maps them to.

Every failure a user can cause (bad HLO text, a missing file, a wrong target, a missing
optional dependency) is a subclass of :class:`HlovizError`. The CLI catches exactly that
class and prints its message without a traceback; anything else is a bug in hloviz.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

# visible lives next to Span.format, which escapes error excerpts with it; re-exported here
from .source import Span
from .source import visible as visible

if TYPE_CHECKING:
    from typing_extensions import Self

#: Exit codes shared by every command (documented in docs/cli.md).
EXIT_CHECK_FAILED = 1  # e.g. `diff --fail-on` matched
EXIT_ERROR = 2  # bad input, missing file or tool, anything the user can fix
EXIT_INTERRUPTED = 130  # Ctrl-C


class HlovizError(Exception):
    """Base of all errors a user can cause. ``str(err)`` is the message to show."""

    #: A one-line hint saying what to do about it, appended to the message when set.
    hint: str | None = None

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        if hint is not None:
            self.hint = hint

    def __str__(self) -> str:
        base = super().__str__()
        return f"{base}\n{self.hint}" if self.hint else base


class HloParseError(HlovizError):
    """HLO text that hloviz cannot read, and where: :attr:`span` (file, 1-based line and column,
    the source line). The message shows ``file:line:col``, the offending line and a caret under
    the problem, like a compiler does (formatted by :meth:`hloviz.source.Span.format`).

    Give either ``span`` or ``filename``, ``line``, ``column`` and ``source_line``.
    """

    def __init__(self, message: str, *, span: Span | None = None, filename: str = "<string>", line: int = 1,
                 column: int = 1, source_line: str = "") -> None:
        self.reason = message
        self.span = span if span is not None else Span(filename, line, column, source_line)
        super().__init__(self.span.format(message))

    @property
    def filename(self) -> str:
        return self.span.filename

    @property
    def line(self) -> int:
        return self.span.line

    @property
    def column(self) -> int:
        return self.span.column

    @property
    def source_line(self) -> str:
        return self.span.source_line


class InputError(HlovizError):
    """A file, folder or target that does not exist or is not what the command needs."""


class CarriesDotText:
    """Part of the errors drawing a picture can raise (:class:`DependencyError` for a missing
    ``dot``, :class:`RenderError` for a failed one): ``dot_text`` is the DOT text of the picture
    Graphviz could not draw — None when the error came before there was any — so that callers
    can still write it for the user (``dot -Tsvg`` can be run on it later)."""

    dot_text: str | None = None

    def with_dot_text(self, dot_text: str) -> Self:
        """This error, carrying ``dot_text`` (for ``raise err.with_dot_text(text)``)."""
        self.dot_text = dot_text
        return self


class DependencyError(CarriesDotText, HlovizError):
    """An optional dependency (TensorFlow, JAX, the Graphviz `dot` binary) is missing."""


class CaptureError(HlovizError):
    """Tracing or compiling the user's function failed."""


class RenderError(CarriesDotText, HlovizError):
    """Graphviz failed, timed out, or the output could not be written."""


class Terminated(BaseException):
    """hloviz got SIGTERM or SIGHUP (the CLI raises this from its signal handler).

    A BaseException, like KeyboardInterrupt, so that nothing catches it by accident while
    the cleanups on its way out run: a ``dot`` child is killed, temporary files are removed.
    The CLI exits with ``128 + signum``, as a shell reports a process killed by that signal.
    """

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def file_in_the_way(path: Path, *, folder: bool = False) -> Path | None:
    """The file (or anything not a folder) standing where one of ``path``'s folders should be —
    or ``path`` itself, where it is to be a ``folder`` — else None."""
    ways = ((path,) if folder else ()) + tuple(path.parents)
    return next((a for a in ways if os.path.lexists(a) and not a.is_dir()), None)


def why_unwritable(path: Path, err: OSError, *, folder: bool = False) -> str:
    """Why ``path`` (a file, or with ``folder`` a folder, to make) could not be: ``out is a file,
    not a folder`` where :func:`file_in_the_way` finds one (``mkdir`` says only "File exists", or
    "Not a directory"), else the system's words."""
    blocker = file_in_the_way(path, folder=folder)
    return f"{blocker} is a file, not a folder" if blocker is not None else (err.strerror or str(err))
