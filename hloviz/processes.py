"""Child processes that do not outlive hloviz (stdlib only; used by the Graphviz runner and
the child-process capture)."""

from __future__ import annotations

import os
import signal
import sys
from typing import Callable

__all__ = ["die_with_parent"]


def die_with_parent() -> Callable[[], None] | None:
    """A ``preexec_fn`` that has the kernel SIGKILL the child when hloviz dies (Linux's
    ``PR_SET_PDEATHSIG``; it covers SIGKILL of hloviz, where no cleanup of ours can run), or
    None elsewhere."""
    if not sys.platform.startswith("linux") or _threads() != 1:
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


def _threads() -> int:
    """How many OS threads this process has (native ones too), or 0 when it cannot tell."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("Threads:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0
