"""The root of the command line: the Typer :data:`app` every command module registers on, and
the options that come before any command (``--debug``, ``--version``, ``--max-input``).

It sits apart from :mod:`hloviz.cli` (which runs the app and imports the command modules it needs) so
that a command module imports the app without importing the package that imports it.
"""

from __future__ import annotations

import typer

__all__ = ["app"]

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


def _version(value: bool) -> None:
    """``--version``: hloviz's version, and the frameworks it can capture with here (read from
    the installed packages' metadata: nothing is imported)."""
    if not value:
        return
    import platform
    from importlib import metadata

    from .. import __version__

    found = []
    for dist in ("tensorflow", "tensorflow-cpu", "jax", "jaxlib", "flax"):
        try:
            found.append(f"{dist} {metadata.version(dist)}")
        except metadata.PackageNotFoundError:
            continue
    frameworks = ", ".join(found) if found else "no TensorFlow or JAX (pip install 'hloviz[tf]' or 'hloviz[jax]')"
    print(f"hloviz {__version__} (Python {platform.python_version()}; {frameworks})")
    raise typer.Exit()


@app.callback()
def _global(
    debug: bool = typer.Option(False, "--debug", help="Show full tracebacks for errors."),
    version: bool = typer.Option(False, "--version", is_eager=True, callback=_version,
                                 help="Print hloviz's version (and the TensorFlow / JAX it finds) and exit."),
    max_input: str | None = typer.Option(
        None, "--max-input", metavar="SIZE", show_default=False,
        help="Most bytes of content hloviz reads from one input file, after decompression (default 256MiB, "
             "or HLOVIZ_MAX_INPUT): a guard against decompression bombs. E.g. --max-input 4GiB."),
) -> None:
    _state["debug"] = debug
    from ..inputs import set_max_input

    set_max_input(max_input)
