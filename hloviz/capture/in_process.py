"""Capturing a Python function in this process: a ``model.py:fn`` target in, a :class:`Capture` out.

The target's file is imported, its framework detected (:mod:`.live`), and TensorFlow's or JAX's
capture run (:mod:`.tf`, :mod:`.jax`). :func:`hloviz.capture.load_target` calls it directly, or
through a child process (:mod:`.child`) that calls it in turn.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from hloviz.capture.result import Capture, base_info

__all__ = ["capture_fields", "capture_function"]


def capture_function(target: str, args: tuple[str, ...], device: str | None, verbose: bool,
                     say: Callable[[str], None]) -> Capture:
    """Capture ``target`` in this process: a :class:`Capture` (its info checked)."""
    return Capture(**capture_fields(target, args, device, verbose, say))


def capture_fields(target: str, args: tuple[str, ...], device: str | None, verbose: bool,
                   say: Callable[[str], None]) -> dict:
    """What :class:`Capture` is made of, unchecked: the capture child sends these, and the process
    that receives them makes the Capture and checks its info there (once: on a MobileNetV3
    training step the check takes ~0.1 s)."""
    from hloviz.capture import quiet
    from hloviz.capture.live import detect_framework
    from hloviz.capture.specs import parse_arg_options
    from hloviz.capture.target import load_python_target

    parse_arg_options(args)  # a typo in --arg is reported before the model file is imported
    started = time.monotonic()
    info = base_info("live")
    quiet.before_import(verbose)
    with quiet.filtered_stderr(verbose):  # TF's pre-absl-init lines ignore TF_CPP_MIN_LOG_LEVEL
        pt = load_python_target(target)
        framework = detect_framework(pt)
        quiet.after_import(verbose)
        if framework == "jax":
            from hloviz.capture.jax import capture_jax as capture
        else:
            from hloviz.capture.tf import capture_tf as capture
        pre_t, post_t, fw_info = capture(pt, args, device=device, notify=say)
    memory = fw_info.pop("xla_memory", None)
    info.update({"target": target, "function": pt.function_name, "file": pt.file,
                 "module": pt.module.__name__})
    info.update(fw_info)
    info["capture_seconds"] = round(time.monotonic() - started, 3)
    # Keep the big maps last so capture.json reads well.
    for key in ("source_map", "tf_ops", "tf_inputs", "tf_outputs"):
        if key in info:
            info[key] = info.pop(key)
    label = pt.function_name
    return {"pre_text": pre_t, "post_text": post_t, "info": info, "label": label, "pre_filename": f"<{label} pre>",
            "post_filename": f"<{label} post>", "memory": memory}
