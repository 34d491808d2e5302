"""Capture a function under a TensorFlow (or JAX) release of a managed environment.

``load_target("model.py:fn", tf="2.17")`` lands here: :class:`hloviz.capture.releases.envs.EnvManager`
provides the environment (building it the first time), then the environment's own interpreter
captures the target in the current directory through the same child protocol as every live
capture (:func:`hloviz.capture.child.capture_in_child`: its output forwarded less the log
noise, notes and errors as they would be in-process, a crash named with its signal). The result
is an ordinary :class:`~hloviz.capture.Capture` whose ``info`` names the exact versions it ran
under, plus ``env`` (the environment's name and the version asked for).

The child runs in isolated mode (``python -I``: no ``PYTHONPATH``, no user site-packages), so
nothing of the calling environment leaks into the capture.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from hloviz.errors import InputError

if TYPE_CHECKING:
    from hloviz.capture.releases.envs import EnvManager, Phases
    from hloviz.capture.result import Capture

__all__ = ["capture_in_env"]


def capture_in_env(target: str, framework: str, version: str, *, args: Sequence[str] = (),
                   device: str | None = None, verbose: bool = False,
                   notify: Callable[[str], None] | None = None, phases: Phases | None = None,
                   manager: EnvManager | None = None) -> Capture:
    """Capture ``target`` under ``framework`` (``"tensorflow"`` / ``"jax"``) release ``version``."""
    from hloviz.capture.child import capture_in_child
    from hloviz.capture.releases.envs import FRAMEWORKS, Phases, default_manager
    from hloviz.capture.result import Capture
    from hloviz.capture.saved import check_info
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
    with manager.using(env):
        cap = capture_in_child(target, tuple(args), device, verbose, notify, python=str(env.python), isolated=True,
                               under=under)
    info = check_info(dict(cap.info), f"the capture under {under}")
    info["env"] = {"name": env.name, "requested": version, "installer": env.manifest.get("installer"),
                   "path": str(env.path)}
    label = str(info.get("label") or cap.label or target)
    phases.finish()
    return Capture(cap.pre_text, cap.post_text, info, label, f"<{label} pre, {under}>", f"<{label} post, {under}>",
                   memory=cap.memory)


def _check_target(target: str) -> None:
    """What can be checked of a ``model.py:function`` target without importing it."""
    from hloviz.capture.target import split_function_target

    parts = split_function_target(target)
    if parts is None:
        raise InputError(f"{target!r} is not a model.py:function or package.module:function target")
    left = parts[0]
    if (left.endswith(".py") or os.sep in left) and not Path(left).is_file():
        raise InputError(f"file not found: {left}")
