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

A filter thread dies with its process: what a crashing model wrote last (a fatal message,
faulthandler's traceback) would die in the thread's pipe. So a parent that reads a capture's
output itself sets :data:`UNFILTERED_ENV` in its child, where :func:`filtered_stderr` then
changes nothing, and handles the lines in a process that survives the crash: the CLI's capture
child (:mod:`hloviz.capture.child`) has them filtered and forwarded by the parent, a managed
environment's (:mod:`hloviz.capture.releases.isolated`) keeps them for ``--verbose`` or an error. One
:class:`LineFilter` decides what is noise, for the thread here and for the CLI's parent alike.
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


#: Set by a parent that reads this process's stdout and stderr itself (the CLI's capture child,
#: a capture in a managed environment): no filter thread here, so a crash's last words (written
#: just before the process dies) are never lost in the filter's pipe.
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
    lines = LineFilter()
    with os.fdopen(read_end, "rb", buffering=0) as src:
        while True:
            chunk = src.read(65536)
            if not chunk:
                break
            _write_all(out, lines.feed(chunk))
    _write_all(out, lines.end())


class LineFilter:
    """A byte stream less its :data:`NOISE` lines (all of it with ``keep_noise``), cut at line ends.

    :meth:`feed` returns the complete lines of what came so far that are not noise; :meth:`end`
    the last line if it had no newline. Whether a line is noise shows in its first bytes, so a
    line longer than :data:`DECIDE_AFTER` bytes is decided there and passed on (or dropped) as it
    comes: a model printing megabytes without a newline costs no memory here.
    """

    #: Bytes of an unfinished line after which it is judged on its start.
    DECIDE_AFTER = 8192

    def __init__(self, keep_noise: bool = False) -> None:
        self._keep_noise = keep_noise
        self._pending: list[bytes] = []  # the unfinished line, in pieces
        self._size = 0
        self._passing: bool | None = None  # an unfinished long line already decided: pass it or drop it
        self.dropped = 0  # lines left out so far

    def feed(self, chunk: bytes) -> bytes:
        """What of ``chunk`` (and the unfinished line before it) passes on now."""
        if self._keep_noise:
            return chunk
        out: list[bytes] = []
        if self._passing is not None:  # the rest of a long line, already judged
            head, newline, chunk = chunk.partition(b"\n")
            if self._passing:
                out.append(head + newline)
            if not newline:
                return b"".join(out)
            self._passing = None
        *lines, rest = chunk.split(b"\n")
        if lines:
            if self._pending:
                lines[0] = b"".join(self._pending) + lines[0]
                self._pending.clear()
                self._size = 0
            kept = [line for line in lines if not _is_noise(line)]
            self.dropped += len(lines) - len(kept)
            if kept:
                out.append(b"\n".join(kept) + b"\n")
        if rest:
            self._pending.append(rest)
            self._size += len(rest)
            if self._size > self.DECIDE_AFTER:
                line = b"".join(self._pending)
                self._pending.clear()
                self._size = 0
                self._passing = not _is_noise(line)
                if self._passing:
                    out.append(line)
                else:
                    self.dropped += 1
        return b"".join(out)

    def end(self) -> bytes:
        """The last line, if it had no newline and is not noise (a long one went out already)."""
        line = b"".join(self._pending)
        self._pending.clear()
        self._size = 0
        self._passing = None
        if not line or self._keep_noise or not _is_noise(line):
            return line
        self.dropped += 1
        return b""


#: :data:`NOISE` for bytes, as the lines come from the pipe (one pattern, no decoding).
_NOISE_BYTES = re.compile(NOISE.pattern.encode("ascii"))


def _is_noise(line: bytes) -> bool:
    return _NOISE_BYTES.match(line, 0, LineFilter.DECIDE_AFTER) is not None


def _write_all(fd: int, data: bytes) -> None:
    """Write all of ``data`` to ``fd``; a closed or failing stderr loses it quietly."""
    while data:
        try:
            data = data[os.write(fd, data):]
        except OSError:
            return
