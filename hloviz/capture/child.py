"""Live captures in a child process: the user's code cannot take hloviz down with it.

A ``model.py:fn`` target is code. In-process, a model that writes to file descriptor 1
(``os.write(1, …)``, ``os.system``) corrupts ``--json`` on stdout, ``os._exit(0)`` ends hloviz
with exit 0 and no output, and a non-daemon thread keeps it alive forever. The CLI therefore
captures in a child Python (:func:`capture_in_child`), which:

* has its stdout (fd 1) on hloviz's stderr, so nothing the model prints reaches stdout;
* sends hloviz's notes and the result (pre/post HLO text and the capture info) back as JSON
  lines on a pipe of its own, and errors as the same :class:`~hloviz.errors.HlovizError`
  class, message and hint;
* ends with ``os._exit`` once the result is sent, so a stray thread cannot keep it alive;
* if the model ends it early (``os._exit``, a crash), the parent says so (exit 2); a process
  the model forks is ignored once the child has ended.

The cost is one Python start-up and an ``import hloviz`` (the framework is imported in the
child instead of the parent): ``benchmarks/capture_isolation_bench.py`` measures it on the
seed. :func:`capture_in_child` takes the ``python`` to run, so a capture can run under another
interpreter (another virtual environment, another TensorFlow) where hloviz is importable.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
from pathlib import Path
from typing import Callable, Sequence

from hloviz import errors
from hloviz.errors import CaptureError, HlovizError
from hloviz.processes import die_with_parent

__all__ = ["capture_in_child"]

#: The errors a child may report, by class name (anything else arrives as a CaptureError).
_ERRORS = {name: getattr(errors, name) for name in ("HlovizError", "InputError", "DependencyError",
                                                      "CaptureError", "RenderError")}


def _env(python: str) -> dict[str, str]:
    """The child's environment: this hloviz first on its path (the child imports the same code)."""
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.setdefault("PYTHONUNBUFFERED", "1")
    return env


def capture_in_child(target: str, args: Sequence[str] = (), device: str | None = None, verbose: bool = False,
                     notify: Callable[[str], None] | None = None, *, python: str | None = None):  # -> Capture
    """Capture ``target`` (``model.py:fn`` / ``pkg.mod:fn``) in a child Python; a :class:`Capture`.

    Same arguments and errors as :func:`hloviz.capture.load_target` for a live target.
    ``python`` is the interpreter to run (default: this one).
    """
    from hloviz.capture import Capture

    say = notify or (lambda _m: None)
    exe = python or sys.executable
    request = {"target": target, "args": list(args), "device": device, "verbose": verbose,
               "sys_path": [p for p in sys.path if isinstance(p, str)]}
    read_fd, write_fd = os.pipe()
    try:
        proc = subprocess.Popen([exe, "-m", "hloviz.capture.child", str(write_fd)], stdin=subprocess.PIPE,
                                stdout=sys.stderr.fileno() if _has_fd(sys.stderr) else 2,
                                pass_fds=(write_fd,), env=_env(exe), preexec_fn=die_with_parent())
    except OSError as err:
        os.close(read_fd)
        os.close(write_fd)
        raise CaptureError(f"cannot start {exe} to capture {target}: {err.strerror or err}") from None
    os.close(write_fd)
    result: dict | None = None
    try:
        assert proc.stdin is not None
        proc.stdin.write(json.dumps(request).encode("utf-8"))
        proc.stdin.close()
        for message in _messages(read_fd, proc):
            if "note" in message:
                say(str(message["note"]))
            else:
                result = message
                break
        code = proc.wait()
    except BaseException:  # Ctrl-C, SIGTERM, anything: the child does not outlive us
        _stop(proc)
        raise
    finally:
        os.close(read_fd)
    if result is None:
        how = f"exit status {code}" if code >= 0 else f"signal {signal.Signals(-code).name}"
        raise CaptureError(f"capturing {target} ended before hloviz got the HLO: the process ended with {how} "
                           f"(the model called os._exit or exit, or crashed)",
                           hint="keep process exits under `if __name__ == \"__main__\":` in the model file")
    if "error" in result:
        cls = _ERRORS.get(result["error"], CaptureError)
        raise cls(result.get("message", ""), hint=result.get("hint"))
    cap = result["capture"]
    return Capture(cap["pre_text"], cap["post_text"], cap["info"], cap["label"], cap["pre_filename"],
                   cap["post_filename"])


def _has_fd(stream: object) -> bool:
    """Whether ``stream`` is a real file (under a test's capture or in an embedding program it
    may not be: the child's stdout then goes to file descriptor 2, never to 1)."""
    try:
        stream.fileno()  # type: ignore[attr-defined]
        return True
    except (AttributeError, OSError, ValueError):
        return False


def _messages(fd: int, proc: subprocess.Popen):
    """JSON lines from the child, until its result or until it has ended. A process the model
    forked may hold the pipe open: once the child itself has ended, what is there is read and
    no more is waited for."""
    parts: list[bytes] = []  # the unfinished line, in pieces (a result can be tens of MB)

    def lines(chunk: bytes):
        while b"\n" in chunk:
            head, chunk = chunk.split(b"\n", 1)
            parts.append(head)
            line = b"".join(parts)
            parts.clear()
            if line.strip():
                yield json.loads(line)
        if chunk:
            parts.append(chunk)

    while True:
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break  # EOF
            yield from lines(chunk)
        elif proc.poll() is not None:
            # the child ended; read what is already in the pipe without waiting for more
            while select.select([fd], [], [], 0)[0]:
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    break
                yield from lines(chunk)
            break
    yield from lines(b"\n")  # a last line without its newline


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=3)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


# --- the child's side -------------------------------------------------------------------------


def _child(fd: int) -> None:
    """Run one capture as the request on stdin asks; answer on ``fd``; never return."""
    out = os.fdopen(fd, "wb", buffering=0)
    owner = os.getpid()

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
        from hloviz.capture import _from_function

        cap = _from_function(request["target"], tuple(request["args"]), request["device"], request["verbose"],
                             lambda m: send({"note": m}))
        send({"capture": {"pre_text": cap.pre_text, "post_text": cap.post_text, "info": cap.info,
                          "label": cap.label, "pre_filename": cap.pre_filename,
                          "post_filename": cap.post_filename}})
    except HlovizError as err:
        send({"error": type(err).__name__ if type(err).__name__ in _ERRORS else "CaptureError",
              "message": err.args[0] if err.args else str(err), "hint": err.hint})
    except KeyboardInterrupt:
        code = 130
    except BaseException as err:  # noqa: BLE001 - a bug: report it, as the parent would have
        import traceback

        send({"error": "CaptureError", "message": f"capturing failed: {type(err).__name__}: {err}",
              "hint": "this is a bug in hloviz; the traceback was:\n" + traceback.format_exc()[-2000:]})
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except Exception:  # noqa: BLE001
            pass
    os._exit(code)  # no waiting for threads the model started


if __name__ == "__main__":
    _child(int(sys.argv[1]))
