"""Getting HLO text out of the user's world: live functions, saved captures, dumps and files.

:func:`load_target` turns anything a command accepts into a :class:`Capture` (pre- and
post-optimization HLO text plus where it came from); :func:`save_capture` writes one to a folder
that later commands (and machines without TensorFlow) can read back.

Targets::

    path/model.py:fn         a function in a file (TensorFlow or JAX; specs: see hloviz.capture.live)
    package.module:fn        a function in an importable module
    path/model.py            the file's only function
    DIR (pre.hlo, post.hlo, capture.json)   a saved capture (``hloviz dump``)
    DIR (module_*.txt)       an XLA dump folder (XLA_FLAGS=--xla_dump_to=DIR); ``module`` picks one
    FILE.hlo / FILE.txt      one HLO module, one stage (pre or post, from its name or content)
    --pre A --post B         two HLO files

``tf="2.17"`` (``--tf``) or ``jax="0.4.30"`` (``--jax``) captures a function under that release
instead of the one installed here, in an environment hloviz manages
(:mod:`hloviz.capture.releases.envs`, :mod:`hloviz.capture.releases.isolated`).

Nothing here imports TensorFlow or JAX until a live function is captured.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

from hloviz.capture.in_process import capture_function as _from_function
from hloviz.capture.info import CaptureInfo, SourceLocation
from hloviz.capture.result import Capture
from hloviz.capture.result import base_info as _base_info
from hloviz.errors import InputError

__all__ = ["Capture", "CaptureInfo", "SourceLocation", "isolate_live_captures", "load_target", "save_capture",
           "source_for"]


def _ignore_nothing(_: str) -> None:
    return None


#: Whether live captures run in a child process (see :mod:`hloviz.capture.child`); the CLI
#: turns it on, the library leaves it off (a notebook captures in its own process).
_isolate = {"live": False}


def isolate_live_captures(on: bool) -> bool:
    """Run ``model.py:fn`` captures in a child process from now on (or not); the old setting."""
    old = _isolate["live"]
    _isolate["live"] = on
    return old


def load_target(target: str | None, *, pre: str | Path | None = None, post: str | Path | None = None,
                args: Sequence[str] = (), device: str | None = None, verbose: bool = False,
                module: str | None = None, notify: Callable[[str], None] | None = None,
                tf: str | None = None, jax: str | None = None,
                on_phase: Callable[[str, str | None], None] | None = None,
                isolate: bool | None = None) -> Capture:
    """Resolve ``target`` (see the module docstring) into a :class:`Capture`.

    ``args`` are ``--arg`` specs, ``device`` a device such as ``CPU:0`` or ``GPU:0``, ``module``
    picks a module of an XLA dump folder, and ``notify`` receives one-line messages for the
    user (e.g. that a function was wrapped in ``tf.function(jit_compile=True)``). ``tf`` /
    ``jax`` name a release to capture under (a managed environment); ``on_phase(phase, detail)``
    hears its progress (resolving, downloading, installing, checking, capturing, done).
    ``isolate`` runs a live capture in a child process (default: :func:`isolate_live_captures`).
    """
    say = notify or _ignore_nothing
    if tf is not None or jax is not None:
        return _from_env(target, tf, jax, pre=pre, post=post, module=module, args=args, device=device,
                         verbose=verbose, say=say, on_phase=on_phase)
    if pre is not None or post is not None:
        if target:
            raise InputError("give either a TARGET or --pre/--post files, not both")
        _no_live_options(args, device, "--pre/--post files")
        return _from_files(Path(pre) if pre is not None else None, Path(post) if post is not None else None)
    if not target:
        raise InputError("no target given: name model.py:function, a capture folder, an HLO file, or --pre/--post")
    path = Path(target)
    if os.path.isdir(path):  # os.path: a name too long to look up is no folder (no OSError)
        from hloviz.capture import saved
        from hloviz.capture.dumps import xla_dump

        if xla_dump.is_dump_folder(path) and (module is not None or not saved.is_capture_folder(path)):
            _no_live_options(args, device, "an XLA dump folder")
            return _from_dump(path, module)
        if saved.is_capture_folder(path):
            _no_live_options(args, device, "a saved capture")
            if module is not None:
                raise InputError("--module picks a module of an XLA dump folder; this target is a saved capture")
            pre_t, post_t, info, checked = saved.load_folder(path)
            pre_f, post_f = saved.stage_file(path, saved.PRE_NAME), saved.stage_file(path, saved.POST_NAME)
            return Capture(pre_t, post_t, info, path.resolve().name,
                           str(pre_f or path / saved.PRE_NAME), str(post_f or path / saved.POST_NAME),
                           memory=saved.load_memory(path, info), checked=checked)
        raise InputError(f"{target} is neither a capture folder (pre.hlo, post.hlo, capture.json) "
                         f"nor an XLA dump folder (module_*.before_optimizations.txt …)")
    if os.path.isfile(path) and path.suffix != ".py":
        _no_live_options(args, device, "an HLO file")
        return _from_single_file(path, say)
    if module is not None:
        raise InputError("--module picks a module of an XLA dump folder; this target is not one")
    _check_python_target(target)
    if isolate if isolate is not None else _isolate["live"]:
        from hloviz.capture.child import capture_in_child
        from hloviz.capture.specs import parse_arg_options

        parse_arg_options(tuple(args))  # a typo in --arg is reported before anything starts
        return capture_in_child(target, tuple(args), device, verbose, say)
    return _from_function(target, tuple(args), device, verbose, say)


def _from_env(target: str | None, tf: str | None, jax: str | None, *, pre, post, module, args, device,
              verbose: bool, say: Callable[[str], None],
              on_phase: Callable[[str, str | None], None] | None) -> Capture:
    option = "--tf" if tf is not None else "--jax"
    if tf is not None and jax is not None:
        raise InputError("give --tf or --jax, not both: a capture runs under one framework")
    if pre is not None or post is not None or module is not None:
        raise InputError(f"{option} captures a model.py:function target; --pre/--post files and --module "
                         "dump folders are already captured")
    if not target:
        raise InputError(f"{option} needs a model.py:function target to capture")
    path = Path(target)
    if path.is_dir() or (path.is_file() and path.suffix != ".py"):
        raise InputError(f"{option} captures a model.py:function target; {target} is already captured HLO",
                         hint=f"drop {option}, or name the function: path/model.py:function")
    _check_python_target(target)
    from hloviz.capture.releases.envs import Phases
    from hloviz.capture.releases.isolated import capture_in_env

    return capture_in_env(target, "tensorflow" if tf is not None else "jax", tf if tf is not None else str(jax),
                          args=tuple(args), device=device, verbose=verbose, notify=say, phases=Phases(on_phase))


def _check_python_target(target: str) -> None:
    """A ``FILE.py:FUNCTION`` target whose file is a FIFO or a device is refused here, before a
    child process is started to import it (the import would wait on the FIFO for ever)."""
    from hloviz.capture.target import check_python_file, split_function_target

    parts = split_function_target(target)
    if parts is not None:
        check_python_file(parts[0])


def _no_live_options(args: Sequence[str], device: str | None, what: str) -> None:
    if args:
        raise InputError(f"--arg applies to model.py:function targets, not to {what}")
    if device:
        raise InputError(f"--device applies to model.py:function targets, not to {what}")


def _from_files(pre: Path | None, post: Path | None) -> Capture:
    from hloviz.capture.saved import read_text

    pre_t = read_text(pre) if pre is not None else None
    post_t = read_text(post) if post is not None else None
    info = _base_info("hlo_files")
    info.update({"pre_file": str(pre) if pre else None, "post_file": str(post) if post else None})
    label = (post or pre).stem if (post or pre) else "hlo"  # type: ignore[union-attr]
    return Capture(pre_t, post_t, info, label, str(pre) if pre else None, str(post) if post else None)


def _from_single_file(path: Path, say: Callable[[str], None]) -> Capture:
    from hloviz.capture.saved import guess_stage, read_text

    text = read_text(path)
    stage, why = guess_stage(path, text)
    say(f"reading {path.name} as {stage}-optimization HLO ({why})")
    info = _base_info("hlo_file")
    info.update({"file": str(path), "stage": stage, "stage_reason": why})
    label = path.name.split(".")[0] or path.stem
    if stage == "pre":
        return Capture(text, None, info, label, pre_filename=str(path))
    return Capture(None, text, info, label, post_filename=str(path))


def _from_dump(folder: Path, choice: str | None) -> Capture:
    from hloviz.capture.saved import read_text
    from hloviz.capture.dumps.xla_dump import pick_module

    m = pick_module(folder, choice)
    info = _base_info("xla_dump")
    info.update({"dump_folder": str(folder), "module": m.label, "function": m.name,
                 "pre_file": str(m.before) if m.before else None, "post_file": str(m.after) if m.after else None})
    from hloviz.capture.dumps.xla_dump import memory_files

    return Capture(read_text(m.before) if m.before else None, read_text(m.after) if m.after else None,
                   info, m.name, str(m.before) if m.before else None, str(m.after) if m.after else None,
                   memory=memory_files(folder, m))


def save_capture(capture: Capture, out_dir: str | Path) -> Path:
    """Write ``pre.hlo``, ``post.hlo`` and ``capture.json`` to ``out_dir`` atomically (a temporary
    folder beside it is renamed into place): an interrupted save leaves no half-written folder."""
    from hloviz.capture.saved import write_folder

    info = dict(capture.info)
    info.setdefault("label", capture.label)
    record = capture.xla_memory()
    memory = record.to_dict() if record is not None else None
    return write_folder(Path(out_dir), capture.pre_text, capture.post_text, info, memory)


def source_for(op_name: str, source_map: dict) -> dict | None:
    """The source-map entry for an HLO ``op_name``, tolerating XLA's and TF's renaming (see
    :func:`hloviz.analysis.provenance.lookup_source`)."""
    from hloviz.analysis.provenance import lookup_source

    return lookup_source(op_name, source_map)
