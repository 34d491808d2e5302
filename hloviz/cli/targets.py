"""The target options every command that reads a function or HLO shares, in one place.

A command declares ``target: TargetArg = None`` plus the options below and calls
:func:`load`, so ``--arg``, ``--device``, ``--pre``/``--post``, ``--module`` and ``--verbose``
mean the same everywhere. Notes for the user (a function wrapped with jit_compile, a file read
as post-optimization HLO) go to stderr, so stdout stays clean for ``--json``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from ..capture import Capture

TargetArg = Annotated[str | None, typer.Argument(
    help="model.py:function, package.module:function, a capture folder (hloviz dump), an XLA dump "
         "folder (--xla_dump_to), or one HLO file. A model.py target is imported, which runs its code "
         "as Python runs any module (as pytest runs test files): only point hloviz at code you trust.",
    show_default=False)]
ArgOpt = Annotated[list[str] | None, typer.Option(
    "--arg", "-a", help="An argument spec, once per argument: HLO shape syntax (f32[100000000], "
    "s32[8,128], pred[]) or a Python literal (3, True, 'relu'); NAME=SPEC for a keyword. Default: the "
    "function's input_signature, else HLOVIZ_ARGS in its file.", show_default=False)]
DeviceOpt = Annotated[str | None, typer.Option(
    "--device", help="Compile for this device, e.g. CPU:0 or GPU:0 (default: the framework's choice).",
    show_default=False)]
PreOpt = Annotated[Path | None, typer.Option(
    "--pre", help="Pre-optimization HLO text file (instead of a TARGET).", show_default=False)]
PostOpt = Annotated[Path | None, typer.Option(
    "--post", help="Post-optimization HLO text file (instead of a TARGET).", show_default=False)]
ModuleOpt = Annotated[str | None, typer.Option(
    "--module", help="For an XLA dump folder: the module to use, by name, number or pattern.",
    show_default=False)]
VerboseOpt = Annotated[bool, typer.Option(
    "--verbose", "-v", help="Let TensorFlow/JAX print their own logs.")]
TfOpt = Annotated[str | None, typer.Option(
    "--tf", help="Capture under this TensorFlow release (2.17, or exactly 2.17.1) instead of the one installed "
                 "here, in an environment hloviz builds once and keeps (hloviz envs list).", show_default=False)]
JaxOpt = Annotated[str | None, typer.Option(
    "--jax", help="Capture under this JAX release (e.g. 0.4.30) in an environment hloviz manages.",
    show_default=False)]


def note(message: str) -> None:
    """A one-line message for the user, on stderr."""
    from ..errors import visible

    print(f"hloviz: {visible(message)}", file=sys.stderr, flush=True)


def load(target: str | None, *, arg: list[str] | None = None, device: str | None = None,
         pre: Path | None = None, post: Path | None = None, module: str | None = None,
         verbose: bool = False, tf: str | None = None, jax: str | None = None) -> Capture:
    """Resolve the shared options into a :class:`hloviz.capture.Capture`; with ``--tf`` / ``--jax``
    the capture runs in a managed environment, with its progress shown on stderr."""
    from ..capture import load_target

    if tf is None and jax is None:
        return load_target(target, pre=pre, post=post, args=tuple(arg or ()), device=device,
                           verbose=verbose, module=module, notify=note)
    from .progress import VersionProgress

    label = f"tf {tf}" if tf is not None else f"jax {jax}"
    with VersionProgress() as progress:
        return load_target(target, pre=pre, post=post, args=tuple(arg or ()), device=device, verbose=verbose,
                           module=module, notify=progress.note, tf=tf, jax=jax,
                           on_phase=progress.callback(label))


def live_target(target: str | None, tf: str | None, jax: str | None, **options) -> str | Capture | None:
    """``target`` as it is, or — with ``--tf`` / ``--jax`` — the capture made under that release
    (which the api functions accept in place of a target)."""
    if tf is None and jax is None:
        return target
    return load(target, tf=tf, jax=jax, **options)


#: Bytes per write of :func:`print_json`: few writes (``json.dump`` makes one per token, 190k
#: on a large diff), yet more than one for a big document, so that a reader closing the pipe
#: early (``| head``) is seen as a broken pipe — one huge write would end half-done, silently.
_JSON_CHUNK = 1 << 16


def print_json(data: object) -> None:
    """``data`` as indented JSON on stdout, in a few large writes; NaN and Infinity refused
    (they are not JSON)."""
    text = json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    for start in range(0, len(text), _JSON_CHUNK):
        sys.stdout.write(text[start:start + _JSON_CHUNK])
    sys.stdout.flush()
