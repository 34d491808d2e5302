"""Capture a function under a TensorFlow (or JAX) release of a managed environment.

``load_target("model.py:fn", tf="2.17")`` lands here: :class:`hloviz.capture.envs.EnvManager`
provides the environment (building it the first time), then the environment's own interpreter
runs :mod:`hloviz.capture.env_child` on the target in the current directory, and the capture it
saved to a temporary folder is read back like any saved capture. The result is an ordinary
:class:`~hloviz.capture.Capture` whose ``info`` names the exact versions it ran under, plus
``env`` (the environment's name and the version asked for).

The child runs in isolated mode (``python -I``: no ``PYTHONPATH``, no user site-packages), so
nothing of the calling environment leaks into the capture.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections import deque
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from hloviz import errors
from hloviz.capture.quiet import UNFILTERED_ENV
from hloviz.errors import CaptureError, HlovizError, InputError

if TYPE_CHECKING:
    from hloviz.capture import Capture
    from hloviz.capture.envs import EnvManager, Phases

__all__ = ["capture_in_env"]


def capture_in_env(target: str, framework: str, version: str, *, args: Sequence[str] = (),
                   device: str | None = None, verbose: bool = False,
                   notify: Callable[[str], None] | None = None, phases: Phases | None = None,
                   manager: EnvManager | None = None) -> Capture:
    """Capture ``target`` under ``framework`` (``"tensorflow"`` / ``"jax"``) release ``version``."""
    from hloviz.capture import Capture
    from hloviz.capture.envs import FRAMEWORKS, Phases, default_manager
    from hloviz.capture.saved import load_folder, load_memory
    from hloviz.capture.specs import parse_arg_options

    parse_arg_options(args)  # a typo in --arg, or a missing file, is reported before minutes of installing
    _check_target(target)
    phases = phases or Phases()
    manager = manager or default_manager()
    env = manager.ensure(framework, version, phases)
    fw = FRAMEWORKS[framework]
    exact = env.versions.get(framework) or version
    under = f"{fw.words} {exact}"
    phases.start("capturing", target)
    with manager.using(env), tempfile.TemporaryDirectory(prefix="hloviz-capture-") as tmp:
        out = Path(tmp)
        request = out / "request.json"
        request.write_text(json.dumps({"target": target, "args": list(args), "device": device,
                                       "verbose": verbose, "out": str(out)}), encoding="utf-8")
        child_env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
        child_env[UNFILTERED_ENV] = "1"  # we keep its output ourselves (shown on --verbose or a crash)
        cmd = [str(env.python), "-I", "-m", "hloviz.capture.env_child", str(request)]
        tail = _run_child(cmd, child_env, verbose)
        result_p = out / "result.json"
        if not result_p.is_file():
            shown = "\n".join(f"  {ln}" for ln in tail[-15:])
            raise CaptureError(f"the capture under {under} (environment {env.name}) stopped without a result:\n{shown}",
                               hint="run again with --verbose to see everything it printed")
        result = json.loads(result_p.read_text(encoding="utf-8"))
        for note in result.get("notes") or ():
            if notify is not None:
                notify(note)
        if not result.get("ok"):
            raise _same_error(result, under)
        pre, post, info = load_folder(out / "capture")
        memory = load_memory(out / "capture", info)  # the env's hloviz saved XLA's record beside the HLO
    info["env"] = {"name": env.name, "requested": version, "installer": env.manifest.get("installer"),
                   "path": str(env.path)}
    label = str(info.get("label") or info.get("function") or target)
    phases.finish()
    return Capture(pre, post, info, label, f"<{label} pre, {under}>", f"<{label} post, {under}>", memory=memory)


def _check_target(target: str) -> None:
    """What can be checked of a ``model.py:function`` target without importing it."""
    from hloviz.capture.target import split_function_target

    parts = split_function_target(target)
    if parts is None:
        raise InputError(f"{target!r} is not a model.py:function or package.module:function target")
    left = parts[0]
    if (left.endswith(".py") or os.sep in left) and not Path(left).is_file():
        raise InputError(f"file not found: {left}")


def _run_child(cmd: list[str], env: dict, verbose: bool) -> list[str]:
    """Run the child; its output goes to our stderr with --verbose, else is kept for errors."""
    tail: deque[str] = deque(maxlen=40)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            text=True, encoding="utf-8", errors="replace", env=env)
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            tail.append(line.rstrip("\n"))
            if verbose:
                sys.stderr.write(line)
        rc = proc.wait()
    except BaseException:
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        raise
    if rc not in (0, None):
        tail.append(f"(exit code {rc})")
    return list(tail)


def _same_error(result: dict, under: str) -> HlovizError:
    """The child's error as the same type, saying which release it happened under."""
    cls = getattr(errors, str(result.get("type")), None)
    if not (isinstance(cls, type) and issubclass(cls, HlovizError)) or cls is errors.HloParseError:
        cls = CaptureError
    message = f"under {under}: {result.get('message', '')}"
    return cls(message, hint=result.get("hint"))
