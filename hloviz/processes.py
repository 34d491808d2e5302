"""Child processes that do not outlive hloviz (stdlib only; used by the Graphviz runner, the
child-process capture and the environment builds)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Callable
from typing import Any

__all__ = ["STOP_GRACE", "die_with_parent", "own_group", "stop_child", "threads"]

#: Seconds a child has to end once told that hloviz is stopping, before it and its own children
#: are killed: short enough that hloviz, cleanup included, ends well inside the 10 s that
#: ``docker stop`` and Kubernetes give between SIGTERM and SIGKILL.
STOP_GRACE = 3.0


def own_group() -> dict[str, Any]:
    """``Popen`` keywords that start a child in a process group of its own (POSIX), so that
    :func:`stop_child` reaches the children it starts too (an installer's build backends)."""
    return {"start_new_session": True} if os.name == "posix" else {}


def stop_child(proc: subprocess.Popen, reason: BaseException, grace: float = STOP_GRACE) -> None:
    """Stop ``proc`` (started with :func:`own_group`) because hloviz is stopping for ``reason``.

    It is told with the signal that stopped hloviz — SIGINT for Ctrl-C, the signal of a
    :class:`~hloviz.errors.Terminated` (SIGTERM, SIGHUP), SIGTERM for anything else — so that it
    can clean up as hloviz does; after ``grace`` seconds (or at once when it has ended) whatever
    is left of its process group is killed. Returns once ``proc`` is reaped.
    """
    if proc.poll() is None:
        signum = getattr(reason, "signum", None)
        if not isinstance(signum, int):
            signum = signal.SIGINT if isinstance(reason, KeyboardInterrupt) else signal.SIGTERM
        _signal_group(proc, signum)
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            pass
    _signal_group(proc, getattr(signal, "SIGKILL", signal.SIGTERM))  # the leader, and what it left running
    proc.wait()


def _signal_group(proc: subprocess.Popen, signum: int) -> None:
    killpg = getattr(os, "killpg", None)
    try:
        if killpg is not None and os.name == "posix":
            killpg(proc.pid, signum)
        elif proc.poll() is None:
            proc.send_signal(signum)
    except (ProcessLookupError, PermissionError):  # the group is gone (or, reaped, no longer ours)
        pass
    except (ValueError, OSError):  # a signal this platform cannot send to a child (SIGINT on Windows)
        if proc.poll() is None:
            proc.kill()


def die_with_parent() -> Callable[[], None] | None:
    """A ``preexec_fn`` that has the kernel SIGKILL the child when hloviz dies (Linux's
    ``PR_SET_PDEATHSIG``; it covers SIGKILL of hloviz, where no cleanup of ours can run), or
    None elsewhere."""
    if not sys.platform.startswith("linux") or threads() != 1:
        # A preexec_fn makes subprocess fork with Python's fork hooks, which is unsafe (and JAX
        # warns) in a process with other threads, say a notebook that imported JAX: there the
        # child relies on hloviz's own cleanup (Ctrl-C, SIGTERM, SIGHUP) alone.
        return None
    try:
        import ctypes

        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    parent = os.getpid()

    def preexec() -> None:
        prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG
        if os.getppid() != parent:  # hloviz died before the line above: do not outlive it
            os._exit(1)

    return preexec


def threads() -> int:
    """How many OS threads this process has (native ones too), or 0 when it cannot tell."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("Threads:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0
