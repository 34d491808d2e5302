"""The error types hloviz raises, and the exit codes the CLI maps them to.

Every failure a user can cause (bad HLO text, a missing file, a wrong target, a missing
optional dependency) is a subclass of :class:`HlovizError`. The CLI catches exactly that
class and prints its message without a traceback; anything else is a bug in hloviz.
"""

from __future__ import annotations

import re

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing_extensions import Self

#: Exit codes shared by every command (documented in the README).
EXIT_OK = 0
EXIT_CHECK_FAILED = 1  # e.g. `diff --fail-on` matched
EXIT_ERROR = 2  # bad input, missing file or tool, anything the user can fix
EXIT_INTERRUPTED = 130  # Ctrl-C


# Control characters a terminal acts on (ESC starts colour, cursor and title sequences; C1
# controls; DEL) and the Unicode format characters that reorder or hide text (bidi overrides
# and isolates such as U+202E, zero-width marks). Newlines and tabs are kept.
_TERMINAL_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u202a-\u202e"
                              "\u2060-\u2069\ufeff\ufff9-\ufffb]")


def visible(text: str) -> str:
    """``text`` safe to print on a terminal or in markdown: every control or bidi/format
    character is written out as an escape (``\\x1b``, ``\\u202e``), so input text can neither
    send escape sequences to the terminal nor reorder what the reader sees. Newlines and tabs
    stay."""
    if not _TERMINAL_UNSAFE.search(text):
        return text
    return _TERMINAL_UNSAFE.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100
                                else f"\\u{ord(m.group()):04x}", text)


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
    """HLO text that hloviz cannot read.

    ``line`` and ``column`` are 1-based; the message shows ``file:line:col``, the offending
    source line and a caret under the problem, like a compiler does.
    """

    def __init__(self, message: str, *, filename: str, line: int, column: int, source_line: str) -> None:
        self.reason = message
        self.filename = filename
        self.line = line
        self.column = column
        self.source_line = source_line
        super().__init__(self._render())

    def _render(self) -> str:
        shown = self.source_line.replace("\t", " ")
        if len(shown) > 200:  # keep the caret on screen for very long lines
            start = max(0, self.column - 100)
            shown = ("…" if start else "") + shown[start : start + 200]
            caret_col = self.column - start + (1 if start else 0)
        else:
            caret_col = self.column
        # the excerpt is the input's own text: escape what a terminal would act on, and keep
        # the caret under the same character
        caret_col = len(visible(shown[: caret_col - 1])) + 1
        shown = visible(shown.replace("\n", " "))
        caret = " " * (caret_col - 1) + "^"
        return (f"{visible(self.filename)}:{self.line}:{self.column}: error: {visible(self.reason)}\n"
                f"{shown}\n{caret}")


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
