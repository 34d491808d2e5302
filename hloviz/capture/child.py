"""Live captures in a child process: the user's code cannot take hloviz down with it.

A ``model.py:fn`` target is code. In-process, a model that writes to file descriptor 1
(``os.write(1, …)``, ``os.system``) corrupts ``--json`` on stdout, ``os._exit(0)`` ends hloviz
with exit 0 and no output, and a non-daemon thread keeps it alive forever. The CLI therefore
captures in a child Python (:func:`capture_in_child`), which:

* has its stdout and stderr (fd 1 and 2) on a pipe that hloviz reads and forwards to its own
  stderr, line by line, dropping TensorFlow's log noise unless ``--verbose``
  (:class:`~hloviz.capture.quiet.LineFilter`); nothing the model prints reaches stdout;
* sends hloviz's notes and the result (pre/post HLO text and the capture info) back as JSON
  lines on a pipe of its own, and errors as the same :class:`~hloviz.errors.HlovizError`
  class, message and hint; both pipes are read in one loop, so notes and output keep their
  order and a child writing megabytes of output while hloviz waits for the HLO never blocks;
* ends with ``os._exit`` once the result is sent, so a stray thread cannot keep it alive; its
  output is flushed before the result goes out, so hloviz, once it has the result, forwards what
  is in the pipe and goes on without waiting for the child's exit (tearing down a process that
  has TensorFlow loaded took ~50 ms, now spent while hloviz parses);
* if the model ends it early (``os._exit``, a crash), the parent says so (exit 2); a process
  the model forks is ignored once the child has ended.

The filter runs in the parent, not in a thread of the child (the child gets
:data:`~hloviz.capture.quiet.UNFILTERED_ENV`): a thread dies with its process, so what a
crashing model wrote last — a C++ fatal message, the Python traceback that ``faulthandler``
(on in the child) dumps on a segfault or an abort — would die in its pipe. The parent survives
the child and forwards every byte of it.

The cost is one Python start-up and an ``import hloviz`` (the framework is imported in the
child instead of the parent): ``benchmarks/capture_isolation_bench.py`` measures it on the
seed.

This is the one protocol for a capture in another process. A capture under another release
(``--tf 2.17``, :mod:`hloviz.capture.releases.isolated`) runs the same child under the managed
environment's interpreter with ``isolated=True``: ``python -I`` (no ``PYTHONPATH``, no user
site-packages, nothing of this process's ``sys.path``), so nothing of the calling environment
leaks into the capture; the environment holds this hloviz itself.
"""

from __future__ import annotations

import faulthandler
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from hloviz import errors
from hloviz.capture.quiet import UNFILTERED_ENV, LineFilter
from hloviz.errors import CaptureError, HlovizError
from hloviz.processes import die_with_parent, own_group, stop_child

__all__ = ["capture_in_child"]

#: The errors a child may report, by class name (anything else arrives as a CaptureError).
_ERRORS = {name: getattr(errors, name) for name in ("HlovizError", "InputError", "DependencyError",
                                                      "CaptureError", "RenderError")}


#: The variables that name the temporary folder (Python's tempfile, TensorFlow, XLA, the C library).
_TEMP_VARS = ("TMPDIR", "TMP", "TEMP")


#: How the child starts: ``python -m`` (and ``-c``) put the current folder first on ``sys.path``,
#: where a ``grp.py`` or ``types.py`` of the user's would stand in for the standard library's
#: (``shutil`` imports ``grp``); it is taken off before anything else is imported. The model's
#: own folder goes on the path when it is imported, as ``python model.py`` puts it
#: (:func:`hloviz.capture.target.import_file`).
_START = ("import sys\nif sys.path and sys.path[0] == '': del sys.path[0]\n"
          "import runpy\nrunpy.run_module('hloviz.capture.child', run_name='__main__', alter_sys=True)")


def _env(isolated: bool, temp: str | None = None) -> dict[str, str]:
    """The child's environment: its output unbuffered and unfiltered (the parent filters it, see
    the module docstring), and this hloviz first on its path (the child imports the same code) —
    unless ``isolated``, where the interpreter's own environment provides hloviz and nothing of
    ours may leak in (``PYTHONPATH`` and ``PYTHONHOME`` are dropped as well as ignored); ``temp``
    is its own temporary folder."""
    env = dict(os.environ)
    if temp is not None:
        env.update(dict.fromkeys(_TEMP_VARS, temp))
    if isolated:
        env.pop("PYTHONPATH", None)
        env.pop("PYTHONHOME", None)
    else:
        root = str(Path(__file__).resolve().parents[2])
        env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.setdefault("PYTHONUNBUFFERED", "1")
    env[UNFILTERED_ENV] = "1"
    return env


def capture_in_child(target: str, args: Sequence[str] = (), device: str | None = None, verbose: bool = False,
                     notify: Callable[[str], None] | None = None, *, python: str | None = None,
                     isolated: bool = False, under: str | None = None):  # -> Capture
    """Capture ``target`` (``model.py:fn`` / ``pkg.mod:fn``) in a child Python; a :class:`Capture`.

    Same arguments and errors as :func:`hloviz.capture.load_target` for a live target.
    ``python`` is the interpreter to run (default: this one); ``isolated`` runs it as
    ``python -I`` with none of this process's paths (a managed environment's interpreter);
    ``under`` names where it runs (``TensorFlow 2.17.1``) in the errors. What the child prints
    goes to this process's stderr as it comes (less log noise unless ``verbose``).
    """
    # The child's own temporary folder, removed when it has ended: what the model and the
    # framework leave there (TensorFlow's autograph writes an __autograph_generated_file*.py per
    # converted function and never removes it) goes with it, not into the user's /tmp.
    temp = tempfile.mkdtemp(prefix="hloviz-capture-")
    try:
        return _capture_in_child(target, args, device, verbose, notify, python=python, isolated=isolated,
                                 under=under, temp=temp)
    finally:
        shutil.rmtree(temp, ignore_errors=True)


def _capture_in_child(target: str, args: Sequence[str], device: str | None, verbose: bool,
                      notify: Callable[[str], None] | None, *, python: str | None, isolated: bool,
                      under: str | None, temp: str):
    from hloviz.capture.dumps.compile_dump import read_sent
    from hloviz.capture.result import Capture

    say = notify or (lambda _m: None)
    exe = python or sys.executable
    request = {"target": target, "args": list(args), "device": device, "verbose": verbose,
               "sys_path": [] if isolated else [p for p in sys.path if isinstance(p, str)]}
    msg_read, msg_write = os.pipe()
    out_read, out_write = os.pipe()
    cmd = [exe, *(["-I"] if isolated else []), "-c", _START, str(msg_write)]
    try:
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=out_write, stderr=out_write,
                                pass_fds=(msg_write,), env=_env(isolated, temp), preexec_fn=die_with_parent(),
                                **own_group())
    except OSError as err:
        os.close(msg_read)
        os.close(out_read)
        raise CaptureError(f"cannot start {exe} to capture {target}: {err.strerror or err}") from None
    finally:
        os.close(msg_write)  # the child's copies are the only write ends left: EOF when it ends
        os.close(out_write)
    output = _Output(verbose)
    try:
        assert proc.stdin is not None
        try:
            proc.stdin.write(json.dumps(request).encode("utf-8"))
            proc.stdin.close()
        except BrokenPipeError:  # it died before reading: its output and exit status say why
            pass
        import hloviz.analysis.memory.readers  # noqa: F401 - read_sent's reader: imported while the child starts
        result = _relay(proc, msg_read, out_read, say, output)
        code = proc.wait() if result is None else 0  # with a result, the child is only exiting
    except BaseException as reason:  # Ctrl-C, SIGTERM, anything: neither the child nor what it started
        stop_child(proc, reason)     # outlives us; it is told with the signal that stopped us first
        raise
    finally:
        output.end()
        os.close(msg_read)
        os.close(out_read)
    if result is None:
        raise _ended_early(target + (f" under {under}" if under else ""), code, output)
    if "error" in result:
        cls = _ERRORS.get(result["error"], CaptureError)
        message = str(result.get("message", ""))
        raise cls(f"under {under}: {message}" if under else message, hint=result.get("hint"))
    cap = result["capture"]
    return Capture(cap["pre_text"], cap["post_text"], cap["info"], cap["label"], cap["pre_filename"],
                   cap["post_filename"], memory=read_sent(cap.get("memory")))


#: Signals of a crash, on which faulthandler (on in the child) prints the Python stack first.
_CRASHES = frozenset({signal.SIGSEGV, signal.SIGABRT, signal.SIGBUS, signal.SIGFPE, signal.SIGILL})


def _ended_early(target: str, code: int, output: _Output) -> CaptureError:
    """The error for a child that ended without a result.

    The child's last lines are not repeated here: they were forwarded as they came and stand
    right above this message, complete (a faulthandler traceback runs to 30 lines; a tail of it
    printed twice, once cut short, reads worse than pointing at the whole). The message names
    how it ended and says where its words are.
    """
    hint: str | None
    if code >= 0 and output.unknown_xla_flag:
        how = f"the process ended with exit status {code}: XLA stopped it, XLA_FLAGS names a flag it does not know"
        hint = "take that flag out of XLA_FLAGS (the line above names it): TensorFlow's XLA and JAX's know different flags"
    elif code >= 0:  # (the model, or a library it calls: the output above says which, if anything does)
        how = f"the process ended with exit status {code}"
        hint = ("a model file that ends its process (os._exit, sys.exit) should do it under "
                "`if __name__ == \"__main__\":`; a library's fatal error is printed above")
    else:
        try:
            sig = signal.Signals(-code)
            name = sig.name
        except ValueError:
            sig, name = None, f"signal {-code}"
        if sig in _CRASHES:
            how = f"the process crashed ({name}, in the model or in a library it calls)"
            hint = "Python's traceback above (faulthandler's) shows where the model was"
        elif sig == signal.SIGKILL:
            how = f"the process was killed ({name}: out of memory, or killed from outside)"
            hint = "if memory ran out, try smaller --arg shapes"
        else:
            how, hint = f"the process was killed by {name}", None
    if output.shown:
        said = "; its last output is above"
    elif output.dropped:
        said = "; it printed only log lines (--verbose shows them)"
    else:
        said = "; it printed nothing"
    return CaptureError(f"capturing {target} ended before hloviz got the HLO: {how}{said}", hint=hint)


def _has_fd(stream: object) -> bool:
    """Whether ``stream`` is a real file (under a test's capture or in an embedding program it
    may not be: the child's output then goes through ``stream.write``)."""
    try:
        stream.fileno()  # type: ignore[attr-defined]
        return True
    except (AttributeError, OSError, ValueError):
        return False


class _Output:
    """The child's stdout and stderr, forwarded to ours a line at a time, less the log noise."""

    def __init__(self, verbose: bool) -> None:
        self._lines = LineFilter(keep_noise=verbose)
        self.shown = False  # whether anything was passed on to the user
        #: whether XLA said it stopped on a flag of XLA_FLAGS it does not know (its fatal log line)
        self.unknown_xla_flag = False
        self._tail = b""  # the last bytes fed, where that line may start

    @property
    def dropped(self) -> bool:
        """Whether lines were left out as noise."""
        return self._lines.dropped > 0

    def feed(self, chunk: bytes) -> None:
        if not self.unknown_xla_flag:
            self.unknown_xla_flag = _UNKNOWN_XLA_FLAG in self._tail + chunk
            self._tail = chunk[-len(_UNKNOWN_XLA_FLAG):]
        self._write(self._lines.feed(chunk))

    def end(self) -> None:
        """Pass on the last line, even without its newline."""
        self._write(self._lines.end())

    def _write(self, data: bytes) -> None:
        if not data:
            return
        self.shown = True
        stream = sys.stderr
        if stream is None:  # pythonw, a daemon: no stderr at all
            return
        try:
            stream.flush()  # what this process printed first (a note) comes first
            if _has_fd(stream):
                fd = stream.fileno()
                while data:
                    data = data[os.write(fd, data):]
            else:
                stream.write(data.decode("utf-8", "replace"))
                stream.flush()
        except (OSError, ValueError):  # stderr closed: the capture goes on without it
            pass


#: What XLA logs when XLA_FLAGS holds a flag it does not know, before it ends the process
#: (``F… parse_flags_from_env.cc:…] Unknown flag in XLA_FLAGS: --xla_…``): JAX's XLA knows flags
#: TensorFlow's does not (``--xla_dump_buffer_assignment_analysis``).
_UNKNOWN_XLA_FLAG = b"Unknown flag in XLA_FLAGS"

#: Most bytes read from the pipes once the child has ended (a process it forked may go on writing).
_DRAIN_LIMIT = 1 << 24


def _relay(proc: subprocess.Popen, msg_fd: int, out_fd: int, say: Callable[[str], None],
           output: _Output) -> dict | None:
    """Read the child's messages and output until it has ended; its result (or None).

    Notes go to ``say`` and output to ``output`` as they come. Once the result has come (the
    child flushed its output first) or the child has ended, what is already in the pipes is read
    and no more is waited for: a process the model forked may hold them open.
    """
    messages = _Messages(say)
    open_fds = [msg_fd, out_fd]
    ended = False
    drained = 0
    while open_fds and drained < _DRAIN_LIMIT:
        if not ended and (proc.poll() is not None or messages.result is not None):
            ended = True  # everything the child wrote is in the pipes now (it flushed before the result)
        ready, _, _ = select.select(open_fds, [], [], 0 if ended else 0.1)
        if not ready and ended:
            break
        for fd in ready:
            chunk = os.read(fd, 1 << 20)
            if ended:
                drained += len(chunk)
            if not chunk:
                open_fds.remove(fd)
            elif fd == out_fd:
                output.feed(chunk)
            else:
                messages.feed(chunk)
    messages.feed(b"\n")  # a last line without its newline
    return messages.result


class _Messages:
    """JSON lines from the child's message pipe, assembled from chunks (a result can be tens
    of MB: the unfinished line is kept in pieces, not copied on every read). Notes go to
    ``say`` as they come; the first other message is the result."""

    def __init__(self, say: Callable[[str], None]) -> None:
        self._say = say
        self._parts: list[bytes] = []
        self.result: dict | None = None

    def feed(self, chunk: bytes) -> None:
        *lines, rest = chunk.split(b"\n")
        if lines and self._parts:
            lines[0] = b"".join(self._parts) + lines[0]
            self._parts.clear()
        for line in lines:
            if line.strip():
                self._take(json.loads(line))
        if rest:
            self._parts.append(rest)

    def _take(self, message: dict) -> None:
        if "note" in message:
            self._say(str(message["note"]))
        elif self.result is None:
            self.result = message


# --- the child's side -------------------------------------------------------------------------


def _child(fd: int) -> None:
    """Run one capture as the request on stdin asks; answer on ``fd``; never return."""
    out = os.fdopen(fd, "wb", buffering=0)
    owner = os.getpid()
    if not faulthandler.is_enabled():  # a crash prints where the model was, for the parent to show
        faulthandler.enable()

    def send(message: dict) -> None:
        if os.getpid() != owner:  # a process the model forked: it has nothing to say
            os._exit(0)
        out.write(json.dumps(message).encode("utf-8") + b"\n")

    code = 0
    try:
        request = json.loads(sys.stdin.buffer.read().decode("utf-8"))
        for p in request.get("sys_path", []):
            if p not in sys.path:
                sys.path.append(p)
        from hloviz.capture import tf as tf_capture
        from hloviz.capture.in_process import capture_fields

        tf_capture.DUMP_THE_COMPILE = True  # this process ends after the capture: one compile, dumped

        fields = capture_fields(request["target"], tuple(request["args"]), request["device"], request["verbose"],
                                lambda m: send({"note": m}))
        _flush()  # all the model printed is in the output pipe before the result is in its own
        send({"capture": fields})  # checked where it is received, as a Capture
    except HlovizError as err:
        _flush()
        send({"error": type(err).__name__ if type(err).__name__ in _ERRORS else "CaptureError",
              "message": err.args[0] if err.args else str(err), "hint": err.hint})
    except KeyboardInterrupt:
        code = 130
    except BaseException as err:  # noqa: BLE001 - a bug: report it, as the parent would have
        import traceback

        _flush()
        send({"error": "CaptureError", "message": f"capturing failed: {type(err).__name__}: {err}",
              "hint": "this is a bug in hloviz; the traceback was:\n" + traceback.format_exc()[-2000:]})
    finally:
        _flush()
    os._exit(code)  # no waiting for threads the model started


def _flush() -> None:
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except Exception:  # noqa: BLE001 - a model may have closed or replaced them
        pass


if __name__ == "__main__":
    _child(int(sys.argv[1]))
