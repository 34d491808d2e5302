"""Progress of ``--tf`` / ``--jax`` captures on stderr: a bar per version, and what each phase took.

Installing a TensorFlow release takes minutes the first time, so every phase is shown as it
starts — resolving, downloading (with the wheel's size), installing, checking (the import),
capturing — and when a version is done, one line says how long each phase took. On a terminal
this is a live rich display; otherwise (CI logs, pipes) plain ``hloviz:`` lines, one per phase.
stdout is never written to, so ``--format json`` stays clean.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

#: How far along a version is when a phase starts (out of 4 steps).
_STEP = {"waiting": 0, "resolving": 0, "downloading": 1, "installing": 2, "checking": 2.5, "reused": 3,
         "capturing": 3, "done": 4}


class VersionProgress:
    """Use as a context manager; :meth:`callback` gives the ``on_phase`` for one version."""

    def __init__(self) -> None:
        from rich.console import Console

        self.console = Console(stderr=True, highlight=False)
        self.live = self.console.is_terminal
        self._progress: Any = None
        self._tasks: dict[str, Any] = {}
        self._clock: dict[str, tuple[str, float]] = {}
        self._seconds: dict[str, dict[str, float]] = {}
        self._started: dict[str, float] = {}

    def __enter__(self) -> VersionProgress:
        if self.live:
            from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

            self._progress = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(bar_width=20),
                                      TimeElapsedColumn(), console=self.console, transient=False)
            self._progress.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.__exit__(*exc)

    def callback(self, label: str) -> Callable[[str, str | None], None]:
        return lambda phase, detail: self.phase(label, phase, detail)

    def phase(self, label: str, phase: str, detail: str | None) -> None:
        now = time.monotonic()
        self._started.setdefault(label, now)
        last = self._clock.get(label)
        if last is not None and last[0] not in ("reused", "done"):
            times = self._seconds.setdefault(label, {})
            times[last[0]] = times.get(last[0], 0.0) + now - last[1]
        self._clock[label] = (phase, now)
        if phase == "done":
            text = f"{label}: done in {now - self._started[label]:.1f}s ({self.summary(label)})"
        elif phase == "reused":
            text = f"{label}: using the cached environment {detail}"
        else:
            text = f"{label}: {phase}" + (f" {detail}" if detail else "") + "…"
        if self._progress is None:
            self.console.print(f"hloviz: {text}", markup=False, soft_wrap=True)
            return
        task = self._tasks.get(label)
        if task is None:
            task = self._tasks[label] = self._progress.add_task(text, total=4)
        self._progress.update(task, description=text, completed=_STEP.get(phase, 0))

    def summary(self, label: str) -> str:
        times = self._seconds.get(label, {})
        return ", ".join(f"{phase} {s:.1f}s" for phase, s in times.items()) or "nothing to do"

    def note(self, message: str) -> None:
        self.console.print(f"hloviz: {message}", markup=False, soft_wrap=True)
