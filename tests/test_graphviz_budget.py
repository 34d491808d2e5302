"""Graphviz is bounded: one --timeout for every layout of a command (a coarser view always gets
its turn), and no ``dot`` outlives hloviz, whatever signal ends it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import hloviz
from hloviz import api
from hloviz.render import pictures
from hloviz.render.layout.runs import graphviz_run
from hloviz.render.layout.runs.graphviz_run import GraphvizTimeout, LayoutBudget

from .conftest import restore_default_sigint
from .render_samples import layered_module
from .test_render_graphviz import _alive, fake_dot

ROOT = Path(__file__).resolve().parent.parent
SEED = ROOT / "samples" / "captures" / "fused_additions"


class Clock:
    """A monotonic clock that only moves when a fake ``dot`` 'runs'."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def slow_dot(monkeypatch):
    """A picture's layout replaced: every full view takes forever, every coarser view ``coarse_cost``
    seconds; the fake clock advances by what each run used. Records (kind, timeout) per run."""
    clock = Clock()
    monkeypatch.setattr(graphviz_run.time, "monotonic", clock)
    monkeypatch.setattr(pictures.time, "monotonic", clock)
    runs: list[tuple[str, float]] = []
    state = {"coarse_cost": 0.1}

    def fake_layout(what, fmt: str = "svg", timeout: float = 30.0, wrap=None, layout="auto") -> tuple[bytes, list[str]]:
        """One picture's layout, however many ``dot`` it runs (columns in parallel, wrapped parts)."""
        dot_text = what if isinstance(what, str) else what.text
        coarse = "coarser one" in dot_text
        runs.append(("coarse" if coarse else "full", timeout))
        cost = state["coarse_cost"] if coarse else float("inf")
        if cost > timeout:
            clock.now += timeout
            raise GraphvizTimeout(f"Graphviz did not finish the layout within {timeout:g} s", seconds=timeout)
        clock.now += cost
        return b"<svg xmlns='http://www.w3.org/2000/svg'/>\n", []

    monkeypatch.setattr(pictures, "_layout", fake_layout)
    return clock, runs, state


def test_show_spends_one_budget_on_all_its_pictures_and_each_gets_a_coarser_view(tmp_path, slow_dot):
    clock, runs, _ = slow_dot
    started = clock.now
    result = api.show(str(SEED), tmp_path / "out", timeout=5)
    assert [kind for kind, _ in runs[:6]] == ["full", "coarse"] * 3, "three pictures, each retried coarser"
    # the runs after those six are the explorer's extra pictures (a fusion opened), given only
    # what the three left of the budget: the clock counts them too
    assert clock.now - started <= 5 + 1e-9, "all layouts together stay within --timeout"
    assert all(t > 0 for _, t in runs)
    assert set(result.files) == {"side-by-side", "pre", "post", "report"}
    assert "coarser one" in result.notes[0]


def test_render_retries_coarser_within_the_same_budget(slow_dot):
    clock, runs, _ = slow_dot
    started = clock.now
    pic = pictures.module_picture(hloviz.parse(layered_module(3)), timeout=3)
    assert [kind for kind, _ in runs] == ["full", "coarse"]
    assert runs[0][1] == pytest.approx(2.0)  # the full view gets two thirds
    assert runs[1][1] == pytest.approx(1.0)  # the coarser view the rest
    assert clock.now - started <= 3 + 1e-9
    assert pic.notes[0].startswith("Graphviz did not finish the full view within 2 s (of the 3 s --timeout)")


def test_when_nothing_finishes_the_command_still_ends_within_its_budget(slow_dot):
    clock, _runs, state = slow_dot
    state["coarse_cost"] = float("inf")
    started = clock.now
    with pytest.raises(GraphvizTimeout, match="within the 4 s --timeout, not even a coarser view"):
        pictures.module_picture(hloviz.parse(layered_module(3)), timeout=4)
    assert clock.now - started <= 4 + 1e-9


def test_a_picture_that_finishes_early_leaves_its_time_to_the_next():
    budget = LayoutBudget(9, pictures=3)
    assert budget.share() == pytest.approx(3, abs=0.01)
    budget.done()
    assert budget.share() == pytest.approx(4.5, abs=0.01)  # nothing was spent yet: 9 s for two


# --- no dot outlives hloviz ---------------------------------------------------------------


def _start_render(tmp_path: Path, monkeypatch) -> tuple[subprocess.Popen, int]:
    pid_file = tmp_path / "dot.pid"
    fake_dot(tmp_path / "bin", f"import os, time\nopen({str(pid_file)!r}, 'w').write(str(os.getpid()))\n"
                               "time.sleep(120)\n", monkeypatch)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "hloviz", "render", str(SEED), "-o", str(tmp_path / "p.svg"),
                             "--timeout", "100"], env=env, cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, preexec_fn=restore_default_sigint)
    deadline = time.monotonic() + 60
    while not (pid_file.exists() and pid_file.read_text()) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert pid_file.exists(), proc.communicate()[1] if proc.poll() is not None else "dot never started"
    return proc, int(pid_file.read_text())


def _gone(pid: int, wait: float = 10) -> bool:
    deadline = time.monotonic() + wait
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not _alive(pid)


@pytest.mark.parametrize("sig, code", [(signal.SIGTERM, 143), (signal.SIGHUP, 129), (signal.SIGINT, 130)])
def test_dot_dies_with_hloviz_on_a_signal(tmp_path, monkeypatch, sig, code):
    proc, dot_pid = _start_render(tmp_path, monkeypatch)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == code, err
    assert "Traceback" not in err
    assert _gone(dot_pid), f"dot {dot_pid} outlived hloviz"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bin", "dot.pid"], "no partial output"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_dot_dies_even_when_hloviz_is_killed(tmp_path, monkeypatch):
    proc, dot_pid = _start_render(tmp_path, monkeypatch)
    proc.kill()
    proc.communicate(timeout=60)
    assert _gone(dot_pid), f"dot {dot_pid} outlived a SIGKILLed hloviz"
