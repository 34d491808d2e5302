"""``file:line`` strings name a file relative to the current folder when under it, whatever
folder an earlier call ran in (the relative paths are kept per folder, issue 32)."""

from __future__ import annotations

import os

from hloviz.analysis.export import source_lines


def test_a_path_is_relative_to_the_folder_of_each_call(tmp_path, monkeypatch):
    model = tmp_path / "proj" / "model.py"
    model.parent.mkdir()
    lookup = {"op": {"file": str(model), "line": 7}}.get
    monkeypatch.chdir(tmp_path / "proj")
    assert source_lines(["op"], [], lookup) == ["model.py:7"]
    monkeypatch.chdir(tmp_path)
    assert source_lines(["op"], [], lookup) == [f"proj{os.sep}model.py:7"]
    elsewhere = tmp_path / "other"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert source_lines(["op"], [], lookup) == [f"{model}:7"]  # not under it: the path as it is
    assert source_lines([], [("/x/site-packages/tf/ops.py", 3), (str(model), 9)]) == [f"{model}:9"]
