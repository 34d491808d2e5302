"""The ``hloviz`` command line: a thin Typer layer over :mod:`hloviz.api`.

Each command lives in its own module below and registers itself on :data:`app`
(:mod:`.root`, with the options that come before any command) when imported: a command line
imports only the module of the command it runs (:func:`load_commands`; ``--help`` and an
unknown name, every one), which spares each command some 40 ms of importing the others'
dependencies. ``hloviz.cli.app``, read from outside, is the app with every command. Errors that a
user can cause (:class:`hloviz.HlovizError`) are printed as one clear message on stderr with
exit code 2; ``--debug`` shows the traceback instead. Ctrl-C exits with 130.

Exit codes: 0 success; 1 a check failed (``diff --fail-on``); 2 any error (bad input, a
missing tool, a bug: one message, the traceback only with ``--debug``); 130 interrupted
(Ctrl-C); 128 + N when terminated by signal N (143 SIGTERM, 129 SIGHUP, 141 when stdout's
reader closed the pipe).
"""

from __future__ import annotations

import gc
import importlib
import os
import signal
import sys
import threading
from collections.abc import Sequence
from typing import NoReturn

import typer

from ..errors import EXIT_ERROR, EXIT_INTERRUPTED, HlovizError, Terminated, visible
from . import root

#: Each command's name → the module that registers it.
COMMANDS = {"stats": "stats", "dump": "dump", "show": "show", "render": "render", "diff": "diff",
            "versions": "versions", "envs": "envs", "memory": "memory", "passes": "passes"}
#: The root options that take a value as the next argument (``--max-input 4GiB``).
_ROOT_VALUES = ("--max-input",)


def load_commands(args: Sequence[str] | None = None) -> typer.Typer:
    """The app with the command ``args`` names registered (every command when they name none
    known: ``--help``, a typo, which the app then answers with the full list)."""
    name = _command_name(args) if args is not None else None
    for module in [COMMANDS[name]] if name in COMMANDS else COMMANDS.values():
        importlib.import_module(f"{__name__}.{module}")
    return root.app


def _command_name(args: Sequence[str]) -> str | None:
    """The first argument that is not a root option (or its value)."""
    value_next = False
    for arg in args:
        if value_next:
            value_next = False
        elif arg in _ROOT_VALUES:
            value_next = True
        elif not arg.startswith("-"):
            return arg
    return None


def __getattr__(name: str) -> typer.Typer:
    if name == "app":
        return load_commands()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def fail(err: BaseException) -> None:
    """Print an error the way every command does, then exit with its code."""
    if isinstance(err, KeyboardInterrupt):
        print("hloviz: interrupted", file=sys.stderr)
        raise SystemExit(EXIT_INTERRUPTED)
    print(f"hloviz: error: {visible(str(err))}", file=sys.stderr)
    raise SystemExit(EXIT_ERROR)


#: Longest message of an unexpected exception shown (its text may hold a whole input line).
_MESSAGE_LIMIT = 400


def unexpected(err: BaseException) -> str:
    """One message for an exception that is not a :class:`HlovizError`: what happened and what
    to do. Exit code 1 stays reserved for ``diff --fail-on``, so these exit with 2 too."""
    if isinstance(err, RecursionError):
        return ("the input nests too deeply for hloviz (Python's recursion limit was reached)\n"
                "if the input is a real module, please report it; --debug shows where")
    if isinstance(err, MemoryError):
        return ("out of memory\ndraw or read less: --focus NAME, --computation NAME, a smaller --budget; "
                "see docs/safety.md for the input limits")
    text = str(err)
    if len(text) > _MESSAGE_LIMIT:
        text = text[:_MESSAGE_LIMIT] + f"… ({len(text)} characters)"
    text = visible(text)
    return (f"internal error: {type(err).__name__}{': ' + text if text else ''}\n"
            "this is a bug in hloviz: please report it with the output of `hloviz --debug …`")


#: The garbage collector's thresholds while a command runs: young collections as Python's default,
#: a full one only after 100 collections of the middle generation instead of 10. A command builds
#: one big, long-lived structure (the parsed modules and their analyses: MobileNetV3 + Adam, some
#: 150 MB) and Python's default scans all of it again and again as it grows (0.3 of the 3 s of
#: ``stats --by scope --json`` there, three full collections). Cycles among young objects are
#: still collected as they were.
COMMAND_GC_THRESHOLD = (700, 10, 100)


def main(argv: list[str] | None = None) -> None:
    """Run one command line in this process (what :func:`run`, the ``hloviz`` console script and
    ``python -m hloviz``, calls; tests call it directly).

    Every outcome has one exit code: 0 success, 1 only for ``diff --fail-on``, 2 any error
    (bad input, a missing tool, a bug in hloviz: one message, a traceback only with
    ``--debug``), 130 Ctrl-C.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args
    _refuse_closed_stdout()
    previous = _terminate_on_signals()
    from ..capture import isolate_live_captures

    was_isolated = isolate_live_captures(True)  # the user's model runs in a child process
    collecting = gc.get_threshold()
    gc.set_threshold(*COMMAND_GC_THRESHOLD)
    stdout = sys.stdout = _Stdout(sys.stdout)
    try:
        try:
            rc = load_commands(args)(args=args, prog_name="hloviz", standalone_mode=False)
            sys.stdout.flush()  # here, not at exit: a full disk is an error of this command
        except SystemExit as exc:
            if exc.code == 1:  # Typer's only sys.exit(1): stdout's reader went away (EPIPE)
                _stdout_gone()
            raise
        if rc == EXIT_INTERRUPTED:  # Typer turns Ctrl-C into an exit code before we see it
            fail(KeyboardInterrupt())
        if isinstance(rc, int) and rc:
            raise SystemExit(rc)
    except SystemExit:
        raise
    except Terminated as err:
        _traceback_if(debug)
        name = signal.Signals(err.signum).name
        print(f"hloviz: terminated by {name}; no half-written output is left behind", file=sys.stderr)
        raise SystemExit(128 + err.signum) from None
    except HlovizError as err:
        _traceback_if(debug)
        fail(err)
    except KeyboardInterrupt as err:
        _traceback_if(debug)
        fail(err)
    except BaseException as err:  # noqa: BLE001 - usage errors, a user's BaseException, a bug: exit 2
        _fail_otherwise(err, debug, stdout)
    finally:
        if sys.stdout is stdout:
            sys.stdout = stdout.inner
        isolate_live_captures(was_isolated)
        gc.set_threshold(*collecting)
        for sig, old in previous.items():
            signal.signal(sig, old)


def run() -> NoReturn:
    """The process's entry point (the ``hloviz`` console script, ``python -m hloviz``):
    :func:`main`, then the process ends at once with its exit code.

    Python's own teardown frees every object a command built, one by one: after ``render`` of
    MobileNetV3's training step that took 0.3 of the command's 1.9 s (the parsed modules, their
    analyses and pictures: some 150 MB of small objects). Nothing is left to do by then: every
    file is written and closed, temporary folders are removed and Graphviz processes stopped
    by the command itself (context managers), and both streams are flushed here. Under a
    profiler or a tracer (``python -m cProfile``, coverage) the process ends normally, so they
    can write what they measured."""
    try:
        main()
        code = 0
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            code = exc.code or 0
        else:  # a message: what Python prints for it, and its exit status
            print(exc.code, file=sys.stderr)
            code = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a reader that went away was told of by main()
            pass
    if sys.getprofile() is not None or sys.gettrace() is not None:
        raise SystemExit(code)
    os._exit(code)


def _fail_otherwise(err: BaseException, debug: bool, stdout: _Stdout) -> None:
    """Exit 2 (or 130) for what is not a :class:`HlovizError`: the click layer's usage errors and
    aborts, a write to stdout that failed, and anything else (a bug, a user's BaseException)."""
    if type(err).__name__ == "Abort":  # the click layer's: Ctrl-C, or an EOFError it wrapped
        _traceback_if(debug)
        if isinstance(err.__cause__ or err.__context__, EOFError):
            fail(HlovizError("unexpected end of input (EOFError)"))
        fail(KeyboardInterrupt())
    show_usage = getattr(err, "show", None)  # the click layer's usage errors print themselves
    if isinstance(err, Exception) and callable(show_usage) and hasattr(err, "exit_code"):
        show_usage()
        raise SystemExit(EXIT_ERROR) from None
    _traceback_if(debug)
    if isinstance(err, OSError) and err is stdout.failed:
        print(f"hloviz: error: cannot write to standard output: {visible(err.strerror or str(err))}\n"
              "what it was given to write to is full or failed (>/dev/full, a full disk, a closed terminal)",
              file=sys.stderr)
        raise SystemExit(EXIT_ERROR) from None
    print(f"hloviz: error: {unexpected(err)}", file=sys.stderr)
    raise SystemExit(EXIT_ERROR) from None


def _refuse_closed_stdout() -> None:
    """Exit 2 when stdout is closed (``hloviz … >&-``), before anything is opened: a file hloviz
    opened would get descriptor 1, and children that write to it would write there."""
    if _closed(1):
        print("hloviz: error: standard output is closed (>&-): hloviz writes its results there\n"
              "give it somewhere to write, e.g. >/dev/null to discard them", file=sys.stderr)
        raise SystemExit(EXIT_ERROR)


def _closed(fd: int) -> bool:
    """File descriptor ``fd`` is not open."""
    try:
        os.fstat(fd)
    except OSError:
        return True
    return False


class _Stdout:
    """``sys.stdout`` while a command runs, noting the error when writing to it fails (ENOSPC on
    ``>/dev/full``, EIO of a closed terminal), so that the CLI can say what failed: an
    ``OSError`` from a write to stdout is the user's output going nowhere, not a bug. Everything
    else is the stream's own."""

    def __init__(self, inner: object) -> None:
        self.inner = inner
        self.failed: OSError | None = None

    def write(self, text: str) -> int:
        try:
            return self.inner.write(text)  # type: ignore[attr-defined]  # a text stream's write
        except OSError as err:
            self.failed = err
            raise

    def flush(self) -> None:
        try:
            self.inner.flush()  # type: ignore[attr-defined]  # a text stream's flush
        except OSError as err:
            self.failed = err
            raise

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)


def _terminate_on_signals() -> dict:
    """SIGTERM and SIGHUP raise :class:`Terminated` in the main thread, so the cleanups on the
    way out run (a ``dot`` child is killed, temporary files removed) as for Ctrl-C. Returns
    the handlers it replaced (``main`` puts them back: hloviz may run inside another program)."""
    if threading.current_thread() is not threading.main_thread():
        return {}

    def handler(signum: int, _frame: object) -> None:
        raise Terminated(signum)

    previous = {}
    for name in ("SIGTERM", "SIGHUP"):
        if hasattr(signal, name):
            sig = getattr(signal, name)
            previous[sig] = signal.signal(sig, handler)
    return previous


#: Exit code when stdout's reader closed the pipe (``hloviz stats --json | head``): 128 + SIGPIPE,
#: as a shell reports it, so that exit 1 keeps meaning "a --fail-on check matched".
EXIT_BROKEN_PIPE = 141


def _stdout_gone() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # nothing more to flush into the closed pipe at exit
    except (OSError, ValueError, AttributeError):
        pass
    raise SystemExit(EXIT_BROKEN_PIPE)


def _traceback_if(debug: bool) -> None:
    """With --debug, the traceback goes to stderr before the message (the exit code stays the
    same: 2, or 130 for Ctrl-C — never Python's 1 for an uncaught exception)."""
    if debug:
        import traceback

        traceback.print_exc()
