"""TARGET and the capture options, declared once for every command that reads a function or HLO.

A command takes one parameter ``source: TargetOptions`` and is decorated with
:func:`target_options`, which puts TARGET, ``--arg``, ``--device``, ``--pre``/``--post``,
``--module``, ``--verbose``, ``--tf`` and ``--jax`` in its place for Typer: the options are
declared here only (``render``, ``show``, ``dump`` and ``stats`` use them), so they mean and
say the same everywhere. ``diff`` and ``versions`` take two sides or several releases and
declare their own ``--tf``/``--jax``; they share :data:`ArgOpt` and friends.

Notes for the user (a function wrapped with jit_compile, a file read as post-optimization HLO)
go to stderr, so stdout stays clean for ``--json``.
"""

from __future__ import annotations

import functools
import inspect
import json
import sys
import typing
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer

if TYPE_CHECKING:
    from ..api.options import CaptureOptions
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


@dataclass(frozen=True)
class TargetOptions:
    """TARGET and the capture options as the user gave them (one field per option)."""

    target: str | None = None
    arg: tuple[str, ...] = ()
    device: str | None = None
    pre: Path | None = None
    post: Path | None = None
    module: str | None = None
    verbose: bool = False
    tf: str | None = None
    jax: str | None = None

    def load(self) -> Capture:
        """The capture these options name (see :func:`load`)."""
        return load(self.target, arg=list(self.arg), device=self.device, pre=self.pre, post=self.post,
                    module=self.module, verbose=self.verbose, tf=self.tf, jax=self.jax)

    def live(self) -> tuple[str | Capture | None, CaptureOptions]:
        """What to hand an api function: the target, or — with ``--tf``/``--jax`` — the capture
        made under that release, and the capture settings that still apply to it (a capture made
        in a managed environment used its own arguments and device)."""
        from ..api.options import CaptureOptions

        settings = CaptureOptions(pre=self.pre, post=self.post, args=self.arg, device=self.device,
                                  module=self.module, verbose=self.verbose)
        if self.tf is None and self.jax is None:
            return self.target, settings
        cap = self.load()
        return cap, CaptureOptions(pre=self.pre, post=self.post, module=self.module, verbose=self.verbose)


#: The declaration of each field of :class:`TargetOptions`, as Typer reads it, with its default.
_DECLARED: dict[str, tuple[Any, Any]] = {
    "target": (TargetArg, None), "arg": (ArgOpt, None), "device": (DeviceOpt, None), "pre": (PreOpt, None),
    "post": (PostOpt, None), "module": (ModuleOpt, None), "verbose": (VerboseOpt, False), "tf": (TfOpt, None),
    "jax": (JaxOpt, None),
}
assert set(_DECLARED) == {f.name for f in fields(TargetOptions)}

F = TypeVar("F", bound=Callable[..., Any])


def target_options(command: F) -> F:
    """Give ``command``'s ``source: TargetOptions`` parameter to Typer as TARGET and the capture
    options, and call ``command`` with them gathered into one :class:`TargetOptions`.

    TARGET takes the parameter's place (it is the command's argument); the options go last,
    after the command's own, in the order of :data:`_DECLARED` — as ``--help`` lists them.
    """
    signature = inspect.signature(command)
    hints = typing.get_type_hints(command, include_extras=True)
    if "source" not in signature.parameters:
        raise TypeError(f"{command.__name__} has no `source: TargetOptions` parameter")
    own: list[inspect.Parameter] = []
    for p in signature.parameters.values():
        if p.name == "source":
            own.append(inspect.Parameter("target", p.KEYWORD_ONLY, default=None, annotation=TargetArg))
        else:
            own.append(p.replace(kind=p.KEYWORD_ONLY, annotation=hints.get(p.name, p.annotation)))
    shared = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=declared)
              for name, (declared, default) in _DECLARED.items() if name != "target"]
    clash = {p.name for p in own} & {p.name for p in shared}
    if clash:
        raise TypeError(f"{command.__name__} declares {', '.join(sorted(clash))} itself; they come with source")

    @functools.wraps(command)
    def run(**given: Any) -> Any:
        values = {name: given.pop(name) for name in _DECLARED}
        values["arg"] = tuple(values["arg"] or ())
        return command(source=TargetOptions(**values), **given)

    params = own + shared
    run.__signature__ = signature.replace(parameters=params, return_annotation=None)  # type: ignore[attr-defined]
    run.__annotations__ = {p.name: p.annotation for p in params}
    del run.__wrapped__  # type: ignore[attr-defined]  # Typer must read the signature above, not command's
    return typing.cast(F, run)


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
