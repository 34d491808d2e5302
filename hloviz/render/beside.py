"""One column of a side-by-side picture drawn in a forked copy of hloviz while this process
draws the other (issue 33: the overview of a large training step within 2 s).

The two columns share nothing but what was made before them (the parsed modules, the
analysis), and drawing each is pure Python: one CPU each. On a machine with two or more, the
post-optimization column is drawn in a copy of this process made by ``fork``, which inherits
the modules and the analysis as they are (nothing large crosses a pipe), while this process
draws the pre-optimization one. What comes back is small and plain: the drawn scene, pickled
(20 kB for a training step's overview). ``render --stage both`` of a DenseNet121 training step
took 3.6 s instead of 4.4 s, of an EfficientNetB0 one 2.2 s instead of 2.5 s
(``benchmarks/beside_bench.py``): the pre-optimization column, drawn here, is the longer.

What does not come back is what holds the module's instructions — the cut through the
column's tree of units and which box each instruction went into. A caller that reads those
(the explorer, ``export``) gets them from the column drawn again here on first read
(:class:`hloviz.render.views.View`), so every caller sees one and the same view.

A copy is made only for a caller that asked (:func:`columns_beside`: ``render`` writing a
picture, which reads each column's scene and nothing else; the explorer, ``show`` and a JSON
export read every column's cut, which would then be drawn twice), and only where forking is
safe and pays: POSIX ``fork`` with this process running one thread (``fork`` copies only the
calling thread; a library's thread — TensorFlow's, a notebook's, an explorer's worker — may
hold a lock the copy would wait on forever), and two CPUs this process may use.
``HLOVIZ_PROCESSES=1`` turns it off. Whatever goes wrong in the copy
(an error, a crash, an answer that does not pickle) and the column is drawn here instead, so
the picture, and any error, are those of one process.

Inside :func:`hloviz.render.reuse.drawings_reused` the copy stays for the block and draws
each redraw (``render`` fitting its overview with fewer boxes) from the trees it kept itself.
"""

from __future__ import annotations

import os
import pickle
import signal
import struct
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Generic, TypeVar

from ..processes import die_with_parent, threads

__all__ = ["Beside", "can_fork", "columns_beside", "wanted"]

T = TypeVar("T")

#: Set to ``1``: every column is drawn in this process.
ENV = "HLOVIZ_PROCESSES"
_HEAD = struct.Struct("<Q")


#: Inside :func:`columns_beside` (in this thread: the explorer's workers start without it).
_wanted: ContextVar[bool] = ContextVar("columns_beside", default=False)


@contextmanager
def columns_beside(asked: bool = True) -> Iterator[None]:
    """Inside the ``with`` block (where ``asked``), a side-by-side picture may draw its
    post-optimization column in a forked copy: for a caller that reads the pictures' scenes,
    not the columns' cuts (the explorer and a JSON export read every one)."""
    token = _wanted.set(asked)
    try:
        yield
    finally:
        _wanted.reset(token)


def wanted() -> bool:
    """Whether the caller asked for :func:`columns_beside`."""
    return _wanted.get()


def can_fork() -> bool:
    """Whether a forked copy may draw a column now (see the module docstring)."""
    if os.environ.get(ENV, "").strip() == "1" or not hasattr(os, "fork") or not hasattr(os, "sched_getaffinity"):
        return False  # (macOS has neither the CPU count nor a fork safe for any process)
    return threads() == 1 and len(os.sched_getaffinity(0)) >= 2  # every OS thread, not Python's alone


class Beside(Generic[T]):
    """``work(*args)`` answered by a forked copy of this process, started now, while this one
    goes on: :meth:`ask` sends the arguments (pickled), :meth:`answer` waits for the result.
    Where no copy could be made or it failed, :meth:`answer` runs ``work`` here. ``work``
    itself is not sent: the copy has it from the moment of the fork (and with it whatever it
    refers to), so only the arguments and the result need to pickle."""

    def __init__(self, work: Callable[..., T]) -> None:
        self._work = work
        self._pid = 0
        self._asked: tuple[Any, ...] | None = None
        self._to = self._from = None
        self._busy = threading.Lock()
        if can_fork():
            self._start()

    def claim(self) -> bool:
        """Take this copy for one :meth:`ask` and :meth:`answer` (False: another thread has it);
        :meth:`release` gives it back."""
        return self._busy.acquire(blocking=False)

    def release(self) -> None:
        self._busy.release()

    def _start(self) -> None:
        down_r, down_w = os.pipe()
        up_r, up_w = os.pipe()
        dies_with_us = die_with_parent()
        try:
            pid = os.fork()
        except OSError:  # no memory or no process slot left: draw here
            for fd in (down_r, down_w, up_r, up_w):
                os.close(fd)
            return
        if pid == 0:  # the copy: answer until this process closes its end, then leave at once
            code = 0
            try:
                if dies_with_us is not None:
                    dies_with_us()  # killed with this process, however it ends
                os.close(down_w)
                os.close(up_r)
                signal.signal(signal.SIGINT, signal.SIG_DFL)  # Ctrl-C ends the copy, not a traceback
                _serve(self._work, os.fdopen(down_r, "rb"), os.fdopen(up_w, "wb"))
            except BaseException:  # noqa: BLE001 - the copy never returns into the caller's code
                code = 1
            finally:
                os._exit(code)  # no atexit, no flushing of buffers this process inherited
        os.close(down_r)
        os.close(up_w)
        self._pid = pid
        self._to, self._from = os.fdopen(down_w, "wb"), os.fdopen(up_r, "rb")

    @property
    def forked(self) -> bool:
        """Whether a copy is (still) answering."""
        return self._pid != 0

    def ask(self, *args: Any) -> None:
        """Send ``args`` to the copy (remembered, for :meth:`answer` to work here if it must)."""
        self._asked = args
        if self._to is None:
            return
        try:
            data = pickle.dumps(args, pickle.HIGHEST_PROTOCOL)
            self._to.write(_HEAD.pack(len(data)) + data)
            self._to.flush()
        except (OSError, pickle.PicklingError, TypeError, AttributeError):
            self.close()

    def answer(self) -> T:
        """The copy's result for the last :meth:`ask`, or ``work(*args)`` computed here."""
        args, self._asked = self._asked, None
        assert args is not None, "answer() without ask()"
        if self._from is not None:
            reply = _read(self._from)
            if reply is not None and reply[0]:
                return reply[1]
            self.close()  # an error in the copy: raised here, as one process raises it
        return self._work(*args)

    def close(self) -> None:
        """End the copy (it stops reading and leaves) and reap it."""
        for f in (self._to, self._from):
            if f is not None:
                try:
                    f.close()
                except OSError:
                    pass
        self._to = self._from = None
        if self._pid:
            pid, self._pid = self._pid, 0
            try:
                os.kill(pid, signal.SIGKILL)  # mid-drawing when this process stopped early
                os.waitpid(pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass


def _serve(work: Callable[..., Any], down: Any, up: Any) -> None:
    """The copy's loop: read arguments, answer ``(True, result)`` or ``(False, None)``."""
    while True:
        args = _read(down)
        if args is None:
            return
        try:
            reply: tuple[bool, Any] = (True, work(*args))
            data = pickle.dumps(reply, pickle.HIGHEST_PROTOCOL)
        except Exception:  # noqa: BLE001 - answered here again, where the error is raised as the user sees it
            data = pickle.dumps((False, None))
        up.write(_HEAD.pack(len(data)) + data)
        up.flush()


def _read(f: Any) -> Any | None:
    """One length-prefixed pickle from ``f`` (None at its end or on a short read)."""
    try:
        head = f.read(_HEAD.size)
        if len(head) < _HEAD.size:
            return None
        (n,) = _HEAD.unpack(head)
        data = f.read(n)
        return pickle.loads(data) if len(data) == n else None
    except (OSError, EOFError, pickle.UnpicklingError, ValueError):
        return None
