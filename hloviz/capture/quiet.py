"""Silence TensorFlow's and JAX's log noise unless the user asked for ``--verbose``.

TensorFlow's C++ logging reads ``TF_CPP_MIN_LOG_LEVEL`` once, when it is first imported, and
the model file usually imports it — so :func:`before_import` must run before the user's module
is imported. A value the user set in the environment is respected.

That is not enough on current TensorFlow: lines logged before absl's ``InitializeLog()`` (the
``oneDNN custom operations are on…`` notice, printed once per shared library that loads, and
the ``All log messages before absl::InitializeLog()…`` warning) ignore the variable and go
straight to file descriptor 2. :func:`filtered_stderr` therefore passes fd 2 through a filter
while the model is imported and captured: C++ log lines below ERROR and those two notices are
dropped, everything else (the user's prints, hloviz's notes, errors) passes through, in order.
``TF_ENABLE_ONEDNN_OPTS`` is deliberately left alone: it changes what TensorFlow runs, and a
capture must show what the user's program does.
"""

from __future__ import annotations

import logging
import os
import re
import sys
import threading
import warnings
from collections.abc import Iterator
from contextlib import contextmanager

#: Lines dropped from fd 2 unless --verbose: absl/glog INFO and WARNING lines
#: (``I0000 00:00:1796029165.994076    8267 port.cc:153] …``), absl's pre-init warning, and the
#: second line of TF's CPU-feature notice.
NOISE = re.compile(
    r"^(?:[IW]\d{4} \d\d:\d\d:[\d.]+ +\d+ [^ \]]+:\d+\] "
    r"|WARNING: All log messages before absl::InitializeLog\(\) is called are written to STDERR"
    r"|To enable the following instructions: .* rebuild TensorFlow with the appropriate compiler flags)"
)


#: Set by a parent that reads this process's stderr itself (a capture in a managed environment,
#: :mod:`hloviz.capture.isolated`): no filter thread, so a crash's last words (written just
#: before the process dies) are never lost in the filter's pipe.
UNFILTERED_ENV = "HLOVIZ_STDERR_UNFILTERED"


def before_import(verbose: bool) -> None:
    """Set the environment the frameworks read at import time."""
    if verbose:
        return
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")  # C++: errors only... and not even those
    os.environ.setdefault("TF_CPP_MIN_VLOG_LEVEL", "0")
    os.environ.setdefault("GRPC_VERBOSITY", "ERROR")
    os.environ.setdefault("GLOG_minloglevel", "3")


def after_import(verbose: bool) -> None:
    """Quiet the Python-side loggers (absl, tensorflow, jax) and framework warnings."""
    if verbose:
        return
    for name in ("tensorflow", "tf_keras", "keras", "jax", "jax._src", "absl", "h5py"):
        logging.getLogger(name).setLevel(logging.ERROR)
    try:  # absl logging is what TF's Python side writes through
        from absl import logging as absl_logging  # type: ignore[import-not-found]

        absl_logging.set_verbosity(absl_logging.ERROR)
    except ImportError:
        pass
    for module in ("tensorflow", "keras", "tf_keras", "jax", "absl", "numpy"):
        warnings.filterwarnings("ignore", module=module)


@contextmanager
def filtered_stderr(verbose: bool) -> Iterator[None]:
    """Within the block, drop :data:`NOISE` lines written to file descriptor 2 (by C++ or
    Python alike); with ``verbose``, or where fd 2 cannot be redirected, change nothing."""
    if verbose or os.environ.get(UNFILTERED_ENV):
        yield
        return
    try:
        sys.stderr.flush()
        saved = os.dup(2)
        read_end, write_end = os.pipe()
    except (OSError, ValueError):
        yield
        return
    os.dup2(write_end, 2)
    os.close(write_end)
    pump = threading.Thread(target=_pump, args=(read_end, saved), name="hloviz-stderr-filter", daemon=True)
    pump.start()
    try:
        yield
    finally:
        try:
            sys.stderr.flush()
        except (OSError, ValueError):
            pass
        os.dup2(saved, 2)  # closes the pipe's last write end: the pump sees end of file
        pump.join(timeout=5)
        os.close(saved)


def _pump(read_end: int, out: int) -> None:
    """Copy lines from ``read_end`` to ``out``, leaving out the noise."""
    pending = b""
    with os.fdopen(read_end, "rb", buffering=0) as src:
        while True:
            chunk = src.read(65536)
            if not chunk:
                break
            pending += chunk
            *lines, pending = pending.split(b"\n")
            kept = [line for line in lines if not NOISE.match(line.decode("utf-8", "replace"))]
            if kept:
                _write_all(out, b"\n".join(kept) + b"\n")
    if pending and not NOISE.match(pending.decode("utf-8", "replace")):
        _write_all(out, pending)


def _write_all(fd: int, data: bytes) -> None:
    while data:
        try:
            data = data[os.write(fd, data):]
        except OSError:
            return
