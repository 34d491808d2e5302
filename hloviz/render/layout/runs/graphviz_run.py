"""The thin layer that runs Graphviz's ``dot``: a timeout, a clear message when it is missing,
and SVG output normalised so that the same DOT text always gives the same bytes.

Everything else in :mod:`hloviz.render` is pure; this is the only module that starts a
process. ``dot`` runs in its own process group and is killed (group and all) when the timeout
passes, the user presses Ctrl-C, or hloviz gets SIGTERM/SIGHUP (the CLI turns those into an
exception, so this cleanup runs); on Linux ``dot`` also asks the kernel to kill it when hloviz
dies any other way (``PR_SET_PDEATHSIG``, for SIGKILL). So hloviz never hangs on a layout and
never leaves a ``dot`` behind.

:class:`LayoutBudget` is the one wall-clock budget (``--timeout``) that every Graphviz run of
a command shares. :func:`run_dot_many` lays several graphs out at once (the columns of a
picture, the parts of a wrapped one) within one timeout, each ``dot`` killed like the one of
:func:`run_dot`; :func:`run_pinned` draws a graph whose positions are given.
"""

from __future__ import annotations

import errno
import functools
import os
import re
import select
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ....errors import DependencyError, RenderError
from ....processes import die_with_parent

__all__ = ["DEFAULT_TIMEOUT", "FORMATS", "MAX_TIMEOUT", "PNG_MAX_PIXELS", "GraphvizTimeout", "LayoutBudget", "find_dot",
           "graphviz_version", "normalize_svg", "png_pixels", "run_dot", "run_dot_many", "run_pinned", "spawn_dot",
           "timeout_error", "usable_cores"]

#: Seconds a layout may take before hloviz gives up on it (and tries a coarser view).
DEFAULT_TIMEOUT = 30.0

#: The longest ``--timeout`` hloviz waits (one day): a larger one (``--timeout 1e7``) is taken as
#: this. The system's waits take at most 2^31-1 milliseconds (24.8 days), so a budget past that
#: was an OverflowError.
MAX_TIMEOUT = 86400.0


def capped(timeout: float) -> float:
    """``timeout`` seconds, at most :data:`MAX_TIMEOUT`."""
    return min(timeout, MAX_TIMEOUT)

#: Output formats hloviz asks Graphviz for.
FORMATS = ("svg", "png")

#: The longest side, in pixels, of a PNG hloviz has Graphviz write; a bigger picture is drawn
#: smaller to fit (Graphviz's ``size``, in inches at the 96 pixels an inch its PNGs use; it only
#: ever scales down, and leaves the layout and every other output as they are). Why: the time to
#: write a PNG grows with its pixels — the 12-layer GPT step side by side is 17,000 × 19,000 pt,
#: at full size 22,657 × 25,697 px (582 Mpx) written in 15 s by ``neato -n2``, against 0.13 s
#: for its SVG; fitted to 12,000 px (10,580 × 12,000), 3 s. The SVG keeps every detail at full size.
PNG_MAX_PIXELS = 12000
_PNG_SIZE = f"-Gsize={PNG_MAX_PIXELS / 96:g},{PNG_MAX_PIXELS / 96:g}"


def _fit(formats: Sequence[str]) -> list[str]:
    """The option that fits a PNG into :data:`PNG_MAX_PIXELS` — only where no SVG comes from the
    same run (``size`` would scale it too; positions, ``-Tjson0``, stay unscaled)."""
    return [_PNG_SIZE] if "png" in formats and "svg" not in formats else []


def png_pixels(data: bytes) -> tuple[int, int] | None:
    """A PNG's width and height in pixels, read from its header (None if it is not a PNG)."""
    if len(data) < 24 or data[:8] != b"\x89PNG\r\n\x1a\n" or data[12:16] != b"IHDR":
        return None
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")

INSTALL_HINT = (
    "install Graphviz, which provides the `dot` program: `apt-get install graphviz` (Debian/Ubuntu), "
    "`brew install graphviz` (macOS), or `conda install graphviz` (conda)"
)


class GraphvizTimeout(RenderError):
    """``dot`` did not finish within the timeout; ``seconds`` says how long it was given."""

    def __init__(self, message: str, *, seconds: float, hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.seconds = seconds


def find_dot() -> str:
    """The path of the ``dot`` executable, or :class:`DependencyError` saying what to install.

    ``HLOVIZ_DOT`` names another executable (tests use it to stand in a fake ``dot``).
    """
    explicit = os.environ.get("HLOVIZ_DOT")
    path = shutil.which(explicit) if explicit else shutil.which("dot")
    if path is None:
        what = f"HLOVIZ_DOT={explicit!r}" if explicit else "the Graphviz `dot` program"
        raise DependencyError(f"cannot draw pictures: {what} was not found on PATH", hint=INSTALL_HINT)
    return path


@dataclass(frozen=True)
class _Result:
    stdout: bytes
    stderr: bytes
    returncode: int


class LayoutBudget:
    """One wall-clock budget for all the Graphviz runs of a command (``--timeout``).

    ``pictures`` pictures share it: each gets an even share of what is left when it starts
    (a picture that finishes early leaves more to the next). Within its share, the full view
    may take :data:`FULL_SHARE` of it; the coarser view gets the rest. So a command never
    spends more than ``seconds`` in Graphviz, and a coarser view always gets its turn.
    """

    #: Part of a picture's share the full view may use before the coarser view is tried.
    FULL_SHARE = 2 / 3

    def __init__(self, seconds: float, pictures: int = 1) -> None:
        seconds = capped(seconds)
        self.seconds = seconds
        self.deadline = time.monotonic() + seconds
        self.pictures_left = max(1, pictures)

    def left(self) -> float:
        return max(0.0, self.deadline - time.monotonic())

    def share(self) -> float:
        """Seconds the next picture may take (call :meth:`done` when it is finished)."""
        return self.left() / self.pictures_left

    def done(self) -> None:
        self.pictures_left = max(1, self.pictures_left - 1)


def spawn_dot(argv: list[str], stdin: Any, stdout: Any, stderr: Any) -> subprocess.Popen[bytes]:
    """Start ``argv`` in a process group of its own, asking the kernel to kill it when hloviz
    dies (:func:`hloviz.processes.die_with_parent`).

    Where ``setpriv`` (util-linux) is at hand, it sets the parent-death signal and a shell
    checks that hloviz is still its parent (it may have died before that) before it becomes
    ``dot``: a Python ``preexec_fn`` would make ``subprocess`` fork instead of vfork, copying
    the page tables of a process that holds a 300k-instruction module (17-100 ms per ``dot``,
    against a few ms for the two small programs)."""
    preexec = die_with_parent()
    launcher = _launcher() if preexec is not None else None
    if launcher is not None:
        if not os.access(argv[0], os.X_OK):  # what Popen would have said
            code = errno.EACCES if os.path.exists(argv[0]) else errno.ENOENT
            raise OSError(code, os.strerror(code), argv[0])
        return subprocess.Popen([*launcher, str(os.getpid()), *argv], stdin=stdin, stdout=stdout, stderr=stderr,
                                start_new_session=True)
    return subprocess.Popen(argv, stdin=stdin, stdout=stdout, stderr=stderr, start_new_session=True,
                            preexec_fn=preexec)


@functools.cache
def _launcher() -> tuple[str, ...] | None:
    """``setpriv --pdeathsig KILL -- sh -c CHECK PID``, then the command; None without them."""
    setpriv, sh = shutil.which("setpriv"), shutil.which("sh")
    if setpriv is None or sh is None:
        return None
    check = 'if [ "$PPID" != "$0" ]; then exit 1; fi; exec "$@"'  # $0: hloviz's pid
    return (setpriv, "--pdeathsig", "KILL", "--", sh, "-c", check)


def _run(argv: list[str], data: bytes, timeout: float) -> _Result:
    try:
        proc = spawn_dot(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    except OSError as err:
        raise DependencyError(f"cannot run {argv[0]}: {err.strerror or err}", hint=INSTALL_HINT) from None
    try:
        out, err = proc.communicate(data, timeout=capped(timeout))
    except BaseException:  # timeout, Ctrl-C, anything: never leave dot running
        _kill(proc)
        raise
    return _Result(out, err, proc.returncode)


def _kill(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, OSError):
        proc.kill()
    try:
        proc.communicate(timeout=5)
    except (subprocess.TimeoutExpired, ValueError, OSError):
        pass


_TIMEOUT_HINT = ("draw less: --focus NAME, --computation NAME, a smaller --budget, "
                 "or give it longer with --timeout")


def timeout_error(timeout: float) -> GraphvizTimeout:
    return GraphvizTimeout(f"Graphviz did not finish the layout within {timeout:g} s", seconds=timeout,
                           hint=_TIMEOUT_HINT)


def _checked(result: _Result) -> bytes:
    if result.returncode != 0 or not result.stdout:
        detail = result.stderr.decode("utf-8", "replace").strip().splitlines()
        reason = detail[-1] if detail else f"exit status {result.returncode}"
        raise RenderError(f"Graphviz failed: {reason}")
    return result.stdout


def run_dot(dot_text: str, fmt: str = "svg", *, timeout: float = DEFAULT_TIMEOUT) -> bytes:
    """Lay out ``dot_text`` and return the picture's bytes (SVG normalised, see :func:`normalize_svg`).

    Raises :class:`GraphvizTimeout` after ``timeout`` seconds, :class:`DependencyError` when
    ``dot`` is missing, and :class:`RenderError` when it fails.
    """
    if fmt not in FORMATS:
        raise RenderError(f"unknown picture format {fmt!r}; hloviz makes {', '.join(FORMATS)}")
    try:
        result = _run([find_dot(), *_fit([fmt]), f"-T{fmt}"], dot_text.encode("utf-8"), timeout)
    except subprocess.TimeoutExpired:
        raise timeout_error(timeout) from None
    data = _checked(result)
    return normalize_svg(data) if fmt == "svg" else data


def run_pinned(dot_text: str, fmt: str = "svg", *, timeout: float = DEFAULT_TIMEOUT) -> bytes:
    """Draw ``dot_text`` whose nodes, arrows and clusters already carry their positions (``pos``,
    ``bb``, ``lp``: a picture composed from parts laid out apart, :mod:`hloviz.render.layout.compose`).

    ``dot -Kneato -n2`` draws such a graph as given, without laying it out again; it is the same
    ``dot`` executable, so nothing else needs installing. Errors as :func:`run_dot`.
    """
    if fmt not in FORMATS:
        raise RenderError(f"unknown picture format {fmt!r}; hloviz makes {', '.join(FORMATS)}")
    try:
        result = _run([find_dot(), "-Kneato", "-n2", *_fit([fmt]), f"-T{fmt}"], dot_text.encode("utf-8"), timeout)
    except subprocess.TimeoutExpired:
        raise timeout_error(timeout) from None
    data = _checked(result)
    return normalize_svg(data) if fmt == "svg" else data


#: The formats :func:`run_dot_many` may ask for: positions (``json0``) and the drawing.
LAYOUT_FORMATS = ("json0", "svg", "png")


def run_dot_many(dot_texts: Sequence[str], formats: Sequence[str] = ("json0",), *,
                 timeout: float = DEFAULT_TIMEOUT, processes: int | None = None) -> list[list[bytes]]:
    """Lay out several graphs at once (``processes`` ``dot`` at a time, by default one per core)
    and return each one's outputs in ``formats`` (one layout, several outputs: SVG normalised),
    in the order given; together they take at most ``timeout``.

    Each ``dot`` reads its graph from a file and writes into one, so no pipe can fill up while
    another process is waited for. Results do not depend on which process finishes first. On a
    timeout (:class:`GraphvizTimeout`), a failure (:class:`RenderError`, which names the part)
    or Ctrl-C, every ``dot`` still running is killed, its group and all.
    """
    unknown = [f for f in formats if f not in LAYOUT_FORMATS]
    if unknown or not formats:
        raise RenderError(f"unknown layout format {unknown!r}; hloviz asks for {', '.join(LAYOUT_FORMATS)}")
    dot = find_dot()
    slots = max(1, processes if processes is not None else usable_cores())
    deadline = time.monotonic() + capped(timeout)
    with tempfile.TemporaryDirectory(prefix="hloviz-layout-") as tmp:
        folder = Path(tmp)
        for i, text in enumerate(dot_texts):
            (folder / f"{i}.gv").write_bytes(text.encode("utf-8"))
        waiting = list(range(len(dot_texts)))[::-1]
        running: dict[int, subprocess.Popen[bytes]] = {}
        codes: dict[int, int] = {}
        try:
            while waiting or running:
                while waiting and len(running) < slots:
                    i = waiting.pop()
                    running[i] = _start(dot, formats, folder, i)
                for i, proc in list(running.items()):
                    code = proc.poll()
                    if code is not None:
                        codes[i] = code
                        del running[i]
                if running and time.monotonic() > deadline:
                    raise timeout_error(timeout)
                if running:
                    _wait_any(list(running.values()), deadline - time.monotonic())
        except BaseException:  # timeout, Ctrl-C, anything: never leave a dot running
            for proc in running.values():
                _kill(proc)
            raise
        out = []
        for i in range(len(dot_texts)):
            error = (folder / f"{i}.err").read_bytes()
            outputs = []
            for k, fmt in enumerate(formats):
                data = (folder / f"{i}.{k}.out").read_bytes() if codes[i] == 0 else b""
                try:
                    data = _checked(_Result(data, error, codes[i]))
                except RenderError as err:
                    raise RenderError(f"{err} (part {i + 1} of {len(dot_texts)})") from None
                outputs.append(normalize_svg(data) if fmt == "svg" else data)
            out.append(outputs)
        return out


def _wait_any(procs: Sequence[subprocess.Popen[bytes]], seconds: float) -> None:
    """Sleep until one of ``procs`` ends (or ``seconds`` pass), woken by the end itself where
    the system gives a process file descriptor (Linux: ``pidfd_open``), so the next ``dot``
    starts at once instead of at the next tick of a polling loop; elsewhere, or where the call
    is refused (a sandbox), one short tick. The caller reaps with ``poll()`` as before."""
    pidfd_open = getattr(os, "pidfd_open", None)
    fds: list[int] = []
    if pidfd_open is not None:
        try:
            for proc in procs:
                fds.append(pidfd_open(proc.pid))  # an ended, unreaped dot's is readable at once
        except OSError:
            for fd in fds:
                os.close(fd)
            fds = []
    try:
        if not fds:
            time.sleep(max(0.0, min(seconds, 0.002)))
            return
        waiter = select.poll()
        for fd in fds:
            waiter.register(fd, select.POLLIN)
        waiter.poll(max(1, int(min(seconds, 1.0) * 1000) + 1))  # at most a second: the caller checks its deadline
    finally:
        for fd in fds:
            os.close(fd)


def usable_cores() -> int:
    """The cores hloviz may run on (a container's CPU set, not the machine's)."""
    affinity = getattr(os, "sched_getaffinity", None)
    if affinity is not None:
        try:
            return max(1, len(affinity(0)))
        except OSError:
            pass
    return os.cpu_count() or 1


def _start(dot: str, formats: Sequence[str], folder: Path, i: int) -> subprocess.Popen[bytes]:
    argv = [dot, *_fit(formats)]
    for k, fmt in enumerate(formats):  # one layout, each format into its own file
        argv += [f"-T{fmt}", f"-o{folder / f'{i}.{k}.out'}"]
    with open(folder / f"{i}.gv", "rb") as src, open(folder / f"{i}.err", "wb") as err:
        try:
            return spawn_dot(argv, stdin=src, stdout=subprocess.DEVNULL, stderr=err)
        except OSError as error:
            raise DependencyError(f"cannot run {dot}: {error.strerror or error}", hint=INSTALL_HINT) from None


def graphviz_version() -> str | None:
    """``dot``'s version (``2.43.0``), or None when it is missing or says nothing we recognise."""
    try:
        result = _run([find_dot(), "-V"], b"", 10)
    except (DependencyError, subprocess.TimeoutExpired):
        return None
    m = re.search(rb"version\s+(\S+)", result.stderr + result.stdout)
    return m.group(1).decode("ascii", "replace") if m else None


_COMMENT = re.compile(rb"<!--.*?-->\s*", re.DOTALL)
_DOCTYPE = re.compile(rb"<!DOCTYPE[^>\[]*(\[.*?\])?\s*>\s*", re.DOTALL)


def normalize_svg(svg: bytes) -> bytes:
    """Graphviz's SVG without what varies or points elsewhere.

    Removes every comment (Graphviz writes its version and build there, and each node's DOT id)
    and the DOCTYPE (a URL of the SVG 1.1 DTD), and ends the file with one newline. What is
    left depends only on the DOT text, the Graphviz version and the installed fonts.
    """
    svg = _COMMENT.sub(b"", svg)
    svg = _DOCTYPE.sub(b"", svg)
    return svg.rstrip() + b"\n"
