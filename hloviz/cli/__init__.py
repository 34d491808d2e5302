"""The ``hloviz`` command line: a thin Typer layer over :mod:`hloviz.api`.

Each command lives in its own module below and registers itself on :data:`app`. Errors that a
user can cause (:class:`hloviz.HlovizError`) are printed as one clear message on stderr with
exit code 2; ``--debug`` shows the traceback instead. Ctrl-C exits with 130.

Exit codes: 0 success; 1 a check failed (``diff --fail-on``); 2 bad input or a missing tool;
130 interrupted.
"""

from __future__ import annotations

import sys

import typer

from ..errors import EXIT_ERROR, EXIT_INTERRUPTED, HlovizError

app = typer.Typer(
    name="hloviz",
    help="See what XLA did to your TensorFlow or JAX function: kernels, fusions, constant folding, "
    "diffs between versions, and pictures for your docs.\n\n"
    "Exit codes: 0 ok, 1 a --fail-on check matched, 2 bad input or missing tool, 130 interrupted.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

_state = {"debug": False}


@app.callback()
def _global(
    debug: bool = typer.Option(False, "--debug", help="Show full tracebacks for errors."),
) -> None:
    _state["debug"] = debug


def fail(err: BaseException) -> None:
    """Print an error the way every command does, then exit with its code."""
    if isinstance(err, KeyboardInterrupt):
        print("hloviz: interrupted", file=sys.stderr)
        raise SystemExit(EXIT_INTERRUPTED)
    print(f"hloviz: error: {err}", file=sys.stderr)
    raise SystemExit(EXIT_ERROR)


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``hloviz`` console script and ``python -m hloviz``."""
    args = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args
    try:
        rc = app(args=args, prog_name="hloviz", standalone_mode=False)
        if rc == EXIT_INTERRUPTED:  # Typer turns Ctrl-C into an exit code before we see it
            fail(KeyboardInterrupt())
        if isinstance(rc, int) and rc:
            raise SystemExit(rc)
    except HlovizError as err:
        if debug:
            raise
        fail(err)
    except KeyboardInterrupt as err:
        if debug:
            raise
        fail(err)
    except SystemExit:
        raise
    except Exception as err:  # the click layer's usage errors and aborts (typer may vendor click)
        if type(err).__name__ == "Abort":
            fail(KeyboardInterrupt())
        if hasattr(err, "show") and hasattr(err, "exit_code"):
            err.show()
            raise SystemExit(EXIT_ERROR) from None
        raise


# Command modules register themselves on `app` when imported.
from . import stats  # noqa: E402,F401
from . import dump  # noqa: E402,F401
from . import show  # noqa: E402,F401
from . import render  # noqa: E402,F401
from . import diff  # noqa: E402,F401
from . import versions  # noqa: E402,F401
from . import envs  # noqa: E402,F401
