"""A side-by-side picture's post-optimization column drawn in a forked copy of hloviz
(:mod:`hloviz.render.beside`) is the column drawn in one process.

The oracle is the same picture made with ``HLOVIZ_PROCESSES=1`` (no copy): the SVG byte for
byte, and every part of the post column's view a caller may read (its cut, which box draws
each cut node and each instruction). A copy only starts in a process with one thread, and the
test workers run threads, so each check runs in a fresh Python; ``os.fork`` is counted there to
see that a copy was in fact made (and, across ``render``'s redraw of an overview that came out
too long, made once). What must not change the answer — the copy failing, crashing, or sending
what does not pickle — is made to happen, and the answer is still the one computed here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CAPTURES = ROOT / "samples" / "captures"

pytestmark = pytest.mark.skipif(
    not hasattr(os, "sched_getaffinity") or len(os.sched_getaffinity(0)) < 2 or not Path("/proc/self/status").is_file(),
    reason="a copy is drawn beside only with two CPUs and /proc (Linux)")

#: counts this process's forks, then runs the body given after it
_PRELUDE = """
import json, os, sys
forks = []
_fork = os.fork
def _counted():
    forks.append(1)
    return _fork()
os.fork = _counted
"""


def _python(body: str, *args: str, processes: str | None = None) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "HLOVIZ_PROCESSES"}
    env["PYTHONPATH"] = str(ROOT)
    if processes is not None:
        env["HLOVIZ_PROCESSES"] = processes
    done = subprocess.run([sys.executable, "-c", _PRELUDE + body, *args], env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


_RENDER = """
from hloviz import api
import hloviz.render.views as views, hloviz.render.layout.sidebyside as sbs
here, draws = os.getpid(), []
_draw = views.draw_module
def _counted_draw(*a, **k):
    if os.getpid() == here:
        draws.append(k["options"].budget)
    return _draw(*a, **k)
sbs.draw_module = _counted_draw
if len(sys.argv) > 3:  # a goal the first picture misses, so that it is drawn again
    import hloviz.api.fit as fit
    fit.OVERVIEW_LONGEST = int(sys.argv[3])
api.render(sys.argv[1], sys.argv[2], stage="both")
print(json.dumps({"forks": len(forks), "draws": draws}))
"""


def test_a_forked_column_makes_the_one_process_picture(tmp_path):
    # the GAN step's first overview misses a goal of 1,200 pt, so render draws it again with
    # fewer boxes
    capture = str(CAPTURES / "keras_gan_train")
    forked = _python(_RENDER, capture, str(tmp_path / "forked.svg"), "1200")
    alone = _python(_RENDER, capture, str(tmp_path / "alone.svg"), "1200", processes="1")
    assert alone["forks"] == 0
    assert forked["forks"] == 1, "one copy, kept for the redraws"
    assert len(alone["draws"]) >= 4, "both columns, twice or more: a picture that is drawn again"
    assert forked["draws"] == alone["draws"][::2], "here, only the pre-optimization column"
    assert (tmp_path / "forked.svg").read_bytes() == (tmp_path / "alone.svg").read_bytes()


_VIEWS = """
from hloviz.analysis import analyze
from hloviz.capture import load_target
from contextlib import nullcontext
from hloviz.render.beside import columns_beside
from hloviz.render.layout.sidebyside import side_by_side
from hloviz.render.views import ViewOptions
cap = load_target(sys.argv[1])
pre, post = cap.pre_module(), cap.post_module()
analysis = analyze(pre, post, info=cap.info)
out = {}
for way in ("forked", "alone", "not asked"):
    os.environ["HLOVIZ_PROCESSES"] = "1" if way == "alone" else "0"
    before = len(forks)
    with columns_beside() if way != "not asked" else nullcontext():
        sbs = side_by_side(pre, post, analysis, options=ViewOptions(budget=24), info=dict(cap.info))
    view = sbs.post
    out[way] = {"forks": len(forks) - before, "dot": sbs.dot, "notes": view.notes, "levels": list(view.levels),
                "instructions": view.instructions,
                "cut": sorted(n.key for n in view.cut.nodes), "drawn_as": view.drawn_as,
                "node_of": view.node_of}
print(json.dumps(out))
"""


@pytest.mark.parametrize("capture", ["cnn_adam", "jax_scopes"])
def test_a_forked_column_answers_what_the_explorer_reads_as_drawn_here(capture):
    out = _python(_VIEWS, str(CAPTURES / capture))
    forked, alone, not_asked = out["forked"], out["alone"], out["not asked"]
    # a caller that did not ask (the explorer, show: they read every column's cut) gets no copy
    assert (forked.pop("forks"), alone.pop("forks"), not_asked.pop("forks")) == (1, 0, 0)
    assert alone["cut"] and alone["node_of"] and alone["drawn_as"]
    for part in alone:
        assert forked[part] == alone[part] == not_asked[part], part


_FAULTS = """
from hloviz.render.beside import Beside, can_fork
parent = os.getpid()
def in_copy():
    return os.getpid() != parent
out = {"can_fork": can_fork()}

def square(x):
    return x * x
b = Beside(square)
b.ask(7)
out["square"] = (b.forked, b.answer())
b.ask(8)
out["again"] = b.answer()  # the same copy answers the next question
b.close()

def fails_there(x):
    if in_copy():
        raise RuntimeError("only in the copy")
    return ("here", x)
b = Beside(fails_there); b.ask(1); out["fails_there"] = b.answer(); out["closed_after"] = b.forked; b.close()

def crashes_there(x):
    if in_copy():
        os._exit(3)
    return ("here", x)
b = Beside(crashes_there); b.ask(2); out["crashes_there"] = b.answer(); b.close()

def unpicklable(x):
    return lambda: x  # a result that cannot come back through the pipe
b = Beside(unpicklable); b.ask(3); out["unpicklable"] = b.answer()(); b.close()

def fails_everywhere(x):
    raise KeyError(x)
b = Beside(fails_everywhere); b.ask("k")
try:
    b.answer()
except KeyError as e:
    out["raised"] = repr(e)
b.close()

import time
def sleeps(x):
    time.sleep(x)
b = Beside(sleeps); b.ask(60); pid = b._pid; b.close()
try:
    os.kill(pid, 0)
    out["copy_left_running"] = True
except ProcessLookupError:
    out["copy_left_running"] = False

import threading
stop = threading.Event()
t = threading.Thread(target=stop.wait); t.start()
out["can_fork_with_a_thread"] = can_fork()
b = Beside(square); out["forked_with_a_thread"] = b.forked; b.ask(5); out["thread_square"] = b.answer(); b.close()
stop.set(); t.join()
out["forks"] = len(forks)
print(json.dumps(out))
"""


def test_whatever_goes_wrong_in_the_copy_the_answer_is_computed_here():
    out = _python(_FAULTS)
    assert out["can_fork"] is True
    assert out["square"] == [True, 49] and out["again"] == 64
    assert out["fails_there"] == ["here", 1] and out["closed_after"] is False
    assert out["crashes_there"] == ["here", 2]
    assert out["unpicklable"] == 3
    assert out["raised"] == "KeyError('k')"  # the error of the work itself, raised here
    assert out["copy_left_running"] is False
    # a thread may hold a lock a copy would wait on forever: no copy, the work done here
    assert out["can_fork_with_a_thread"] is False and out["forked_with_a_thread"] is False
    assert out["thread_square"] == 25
    assert out["forks"] == 6


def test_hloviz_processes_1_makes_no_copy():
    out = _python("from hloviz.render.beside import can_fork\nprint(json.dumps({'can': can_fork()}))",
                  processes="1")
    assert out == {"can": False}
