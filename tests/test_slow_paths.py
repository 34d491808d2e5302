"""The two paths that once made users wait: judging frame files, and writing JSON to stdout.

Neither test measures time (machines are noisy); each counts the work that made the path slow.
"""

from __future__ import annotations

import io
import json
import os
import sys
from pathlib import Path

from hloviz.capture import frames
from hloviz.cli import main

from .test_diff_match import FUSED_AFTER, FUSED_BEFORE


def test_each_frame_file_is_resolved_once(tmp_path, monkeypatch):
    user = tmp_path / "model.py"
    user.write_text("x = 1\n")
    other = tmp_path / "helper.py"
    other.write_text("y = 2\n")
    calls: list[str] = []
    real = os.path.realpath

    def counting(path, *a, **k):
        calls.append(str(path))
        return real(path, *a, **k)

    frames._judge.cache_clear()
    frames._realpath.cache_clear()
    monkeypatch.setattr(frames.os.path, "realpath", counting)
    stack = [frames.Frame(str(other), 1), frames.Frame(str(user), 1), frames.Frame(os.__file__, 10)] * 1000
    found = None
    for _ in range(50):  # one traceback per op, many ops: the source map's pattern
        found = frames.innermost_user_frame(stack, always=[str(user)])
    assert found == frames.Frame(str(user), 1)  # os.py is the standard library, never the user's
    assert calls.count(str(user)) == 1 and calls.count(str(other)) == 1 and calls.count(os.__file__) == 1
    assert frames.is_user_file(str(other)) and not frames.is_user_file(os.__file__)
    assert not frames.is_user_file("<string>") and not frames.is_user_file("")


class _CountingOut(io.StringIO):
    def __init__(self) -> None:
        super().__init__()
        self.writes = 0

    def write(self, s: str) -> int:
        self.writes += 1
        return super().write(s)


def test_diff_json_is_written_in_one_piece(tmp_path: Path, monkeypatch):
    a, b = tmp_path / "before.hlo", tmp_path / "after.hlo"
    a.write_text(FUSED_BEFORE)
    b.write_text(FUSED_AFTER)
    out = _CountingOut()
    monkeypatch.setattr(sys, "stdout", out)
    try:
        main(["diff", str(a), str(b), "--format", "json"])
    except SystemExit as exc:
        assert exc.code in (0, None)
    data = json.loads(out.getvalue())
    assert len(data["instructions"]) == 3  # a real report, not an empty one
    assert out.writes == 1


def test_stats_json_is_written_in_one_piece(tmp_path: Path, monkeypatch):
    post = tmp_path / "after.hlo"
    post.write_text(FUSED_AFTER)
    out = _CountingOut()
    monkeypatch.setattr(sys, "stdout", out)
    try:
        main(["stats", "--post", str(post), "--json"])
    except SystemExit as exc:
        assert exc.code in (0, None)
    data = json.loads(out.getvalue())
    assert data and out.writes == 1


class _CountingFrame:
    """A TF StackFrame stand-in that counts how often its fields are read."""

    reads = 0

    def __init__(self, filename: str, lineno: int) -> None:
        self._f, self._l = filename, lineno

    @property
    def filename(self) -> str:
        _CountingFrame.reads += 1
        return self._f

    @property
    def lineno(self) -> int:
        return self._l


class _StackTrace(list):
    def __init__(self, frames, user_frames=None):
        super().__init__(frames)
        self._user = user_frames

    def get_user_frames(self):
        return self._user


class _Op:
    def __init__(self, traceback):
        self.traceback = traceback


def test_an_ops_traceback_is_read_from_the_innermost_end_and_only_to_the_user_frame(tmp_path):
    from hloviz.capture.tf_graph import _candidate_frames, _user_frame

    user = str(tmp_path / "model.py")
    library = os.__file__
    outer = [_CountingFrame(library, n) for n in range(500)]  # interpreter, runner, …
    stack = [*outer, _CountingFrame(user, 7), _CountingFrame(user, 9), _CountingFrame(library, 1)]
    _CountingFrame.reads = 0
    tb = _StackTrace(stack)  # no user-frame filter (older TensorFlow): the whole trace
    tb.get_user_frames = None  # type: ignore[method-assign]
    found = _user_frame(_candidate_frames(_Op(tb)), frozenset(), (user,))
    assert found is not None and (found.file, found.line) == (user, 9)
    assert _CountingFrame.reads == 2  # the library frame, then the user's: the outer 500 never read
    # With TensorFlow's own filter, the caller's frames ((file, line) pairs) are still skipped.
    tb2 = _StackTrace(stack, user_frames=[stack[-3], stack[-2]])
    found = _user_frame(_candidate_frames(_Op(tb2)), frozenset({(user, 9)}), (user,))
    assert found is not None and found.line == 7
    assert _user_frame(_candidate_frames(_Op(tb2)), frozenset({(user, 9), (user, 7)}), (user,)) is None
    assert list(_candidate_frames(_Op(_StackTrace([])))) == []
