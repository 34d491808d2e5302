"""The environment cache is shared ground: ``hloviz envs`` touches only what hloviz names itself.

Each test builds the cache a careless or hostile neighbour leaves (a user's ``.tmp-thesis/``,
a link to an environment elsewhere, a damaged or hostile ``hloviz-env.json``) — by hand, with
no installs: an environment here is a folder with hloviz's name, a manifest and an interpreter.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from hloviz.capture.releases.cache import LAST_USED, MANIFEST
from hloviz.capture.releases.envs import EnvManager
from hloviz.capture.releases.source import running_source
from hloviz.errors import InputError

from . import present
from . import run_cli as _run

PY = f"{sys.version_info[0]}.{sys.version_info[1]}"
SOURCE = running_source()  # the fabricated environments are this hloviz's: prune keeps sound ones


def _tree(folder: Path) -> dict[str, bytes | None]:
    out: dict[str, bytes | None] = {}
    for p in sorted(folder.rglob("*")):
        rel = str(p.relative_to(folder))
        out[rel] = os.readlink(p).encode() if p.is_symlink() else (p.read_bytes() if p.is_file() else None)
    return out


def _env(root: Path, name: str, manifest: bytes | dict | None = None) -> Path:
    """An environment as hloviz leaves one: ``bin/python``, the manifest, ``last-used``."""
    path = root / name
    (path / "bin").mkdir(parents=True)
    (path / "bin" / "python").write_text("#!/bin/sh\n")
    (path / "lib").mkdir()
    (path / "lib" / "site.py").write_text("x = 1\n" * 100)
    if manifest is None:
        manifest = {"framework": "tensorflow", "requested": "2.17", "package": "tensorflow-cpu",
                    "installed": {"tensorflow": "2.17.1"}, "python": PY, "hloviz": SOURCE.version,
                    "hloviz_source": SOURCE.kind, "hloviz_path": str(SOURCE.package),
                    "hloviz_identity": SOURCE.identity,
                    "installer": "uv", "created": "2026-01-01T00:00:00+00:00", "build_seconds": 12.5}
    (path / MANIFEST).write_bytes(manifest if isinstance(manifest, bytes) else json.dumps(manifest).encode())
    (path / LAST_USED).touch()
    return path


A = f"tf2.17-py{PY}-{SOURCE.identity}"
B = f"tf2.21-py{PY}-{SOURCE.identity}"


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    root = tmp_path / "envs"
    root.mkdir()
    monkeypatch.setenv("HLOVIZ_ENVS", str(root))
    return root


# --- envs remove "" ---------------------------------------------------------------------------

@pytest.mark.parametrize("args", [[""], [" "], ["", A], ["--tf", ""], ["--jax", " "]])
def test_an_empty_name_removes_nothing(cache, capsys, args):
    """``hloviz envs remove "$ENV"`` with ENV unset: an empty prefix used to match everything."""
    _env(cache, A)
    _env(cache, B)
    before = _tree(cache)
    code, out, err = _run(["envs", "remove", *args], capsys)
    assert code == 2, err
    assert "an empty name or version matches nothing (an unset shell variable?)" in err and "Traceback" not in err
    assert _tree(cache) == before and out == ""


# --- envs prune and what is not hloviz's --------------------------------------------------------

def test_prune_removes_only_hlovizs_own_temporary_folders(cache, capsys):
    (cache / ".tmp-thesis").mkdir()
    (cache / ".tmp-thesis" / "chapter1.tex").write_text("three years of work\n")
    (cache / ".tmp-notes.txt").write_text("mine\n")
    (cache / f".tmp-{A}-x").mkdir()  # no process number: not a name hloviz gives
    (cache / "tf2.17-py3.11-NOTHEX00").mkdir()
    (cache / "my-env").mkdir()
    theirs = _tree(cache)
    _env(cache, f".tmp-{A}-4242")  # an interrupted build of hloviz's
    (cache / f".tmp-{B}-removing-77").mkdir()  # an interrupted removal
    code, out, err = _run(["envs", "prune"], capsys)
    assert code == 0, err
    assert out.splitlines() == [f"removed .tmp-{A}-4242: left by an interrupted install or removal",
                                f"removed .tmp-{B}-removing-77: left by an interrupted install or removal"]
    assert _tree(cache) == theirs, "the user's folders and files are untouched"
    assert not (cache / ".locks").exists(), "no lock file made for a name hloviz did not give"
    code, out, _ = _run(["envs", "prune"], capsys)
    assert code == 0 and out.startswith("nothing to prune")


def test_a_linked_environment_is_listed_never_followed_and_removed_as_a_link(cache, tmp_path, capsys):
    elsewhere = _env(tmp_path / "shared", A)
    kept = _tree(elsewhere)
    (cache / A).symlink_to(elsewhere)
    code, out, err = _run(["envs", "list"], capsys)
    assert code == 0, err
    assert A in out and "symbolic link" in out
    code, out, err = _run(["envs", "prune", "--older-than", "0"], capsys)
    assert code == 0 and A not in out, "prune leaves a link alone"
    code, out, err = _run(["envs", "remove", A], capsys)
    assert code == 0, err
    assert out == f"removed the link {A} (what it points to is left alone)\n"
    assert not (cache / A).is_symlink() and _tree(elsewhere) == kept
    code, out, _ = _run(["envs", "prune"], capsys)
    assert code == 0 and out.startswith("nothing to prune"), "reported once, then gone"


def test_ensure_refuses_a_link_under_the_environments_name(cache, tmp_path):
    manager = EnvManager(cache, installer=_NoInstall(), index=None)
    name = manager.name_for("tensorflow", "2.17")
    elsewhere = _env(tmp_path / "shared", name)
    (cache / name).symlink_to(elsewhere)
    with pytest.raises(InputError, match="is a symbolic link; hloviz does not follow links") as err:
        manager.ensure("tensorflow", "2.17")
    assert f"hloviz envs remove {name}" in str(err.value)
    assert (cache / name).is_symlink() and (elsewhere / MANIFEST).is_file()


def test_an_earlier_removal_that_left_a_renamed_link_is_cleaned_once(cache, tmp_path, capsys):
    elsewhere = _env(tmp_path / "shared", A)
    kept = _tree(elsewhere)
    (cache / f".tmp-{A}-removing-123").symlink_to(elsewhere)  # what hloviz's old remove left
    code, out, err = _run(["envs", "prune"], capsys)
    assert code == 0, err
    assert out == f"removed the link .tmp-{A}-removing-123: left by an interrupted install or removal\n"
    assert _tree(elsewhere) == kept and list(cache.iterdir()) == []
    code, out, _ = _run(["envs", "prune"], capsys)
    assert out.startswith("nothing to prune")


class _NoInstall:
    name = "none"

    def create(self, env_dir, python):
        raise AssertionError("nothing is installed here")

    def install(self, env_dir, requirements, on_line):
        raise AssertionError("nothing is installed here")


# --- a damaged hloviz-env.json ---------------------------------------------------------------------

DAMAGED = [
    (b'{"framework": "tensorflow", "installed": ["tensorflow", "2.17"]}', "installed is not a map"),
    (b'{"framework": 3}', "framework is not a string"),
    (b'{"framework": "tensorflow", "hloviz_path": 5}', "hloviz_path is not a string"),
    (b'{"framework": "tensorflow", "installed": {"tensorflow": 2.17}}', "is not a string"),
    (b'{"framework": "tensorflow", "build_seconds": "long"}', "build_seconds is not a number"),
    (b'{"framework": "caffe"}', "framework is none of"),
    (b'{"framework": "tensorflow", "hloviz": "0.1\xff"}', "is not UTF-8 text"),
    (b'{"framework": "tensorflow", "hloviz": "0.1\\ud800"}', "lone surrogate"),
    (b'{"framework": "tensorflow", "installed": {"\\udc00": "1"}}', "lone surrogate"),
    (b'["tensorflow"]', "is not a JSON object"),
    (b'{"framework": ', "is not JSON"),
    (b"[" * 100_000, "is not JSON"),
]


@pytest.mark.parametrize("manifest, says", DAMAGED, ids=range(len(DAMAGED)))
def test_a_damaged_manifest_is_listed_pruned_and_removed_not_an_internal_error(cache, capsys, manifest, says):
    _env(cache, A, manifest)
    _env(cache, B)
    code, out, err = _run(["envs", "list"], capsys)
    assert code == 0, err
    assert A in out and B in out and says in out and "not used" in out
    code, out, err = _run(["envs", "list", "--json"], capsys)
    assert code == 0, err
    rows = {e["name"]: e for e in json.loads(out)["environments"]}
    assert says in rows[A]["problem"] and rows[B]["problem"] is None
    code, out, err = _run(["envs", "prune", "--dry-run"], capsys)
    assert code == 0 and f"would remove {A}: its {MANIFEST}" in out and B not in out
    code, out, err = _run(["envs", "prune"], capsys)
    assert code == 0, err
    assert out.startswith(f"removed {A}: its {MANIFEST}") and not (cache / A).exists() and (cache / B).exists()
    _env(cache, A, manifest)
    code, out, err = _run(["envs", "remove", "--all"], capsys)
    assert code == 0, err
    assert sorted(out.split()) == sorted(["removed", A, "removed", B])
    assert [p.name for p in cache.iterdir() if p.name != ".locks"] == []


def test_a_damaged_environment_is_rebuilt_not_used(cache):
    manager = EnvManager(cache, installer=_NoInstall(), index=None)
    name = manager.name_for("tensorflow", "2.17")
    _env(cache, name, b'{"framework": 3}')
    assert manager.find("tensorflow", "2.17") is None

    class Resolving(Exception):
        pass

    def resolve(*_a):
        assert not (cache / name).exists(), "cleared under the lock, before the rebuild"
        raise Resolving

    manager._resolve = resolve  # type: ignore[method-assign]  # stop where the rebuild would begin
    with pytest.raises(Resolving):
        manager.ensure("tensorflow", "2.17")


def test_list_shows_a_manifests_control_characters_escaped(cache, capsys):
    hostile = {"framework": "tensorflow", "requested": "2.17", "installed": {"tensorflow": "2.17\x1b[2J\u202e1"},
               "python": "3.11\x07", "hloviz": "0.1.0\x1b]0;owned\x07", "hloviz_source": "installed"}
    _env(cache, A, hostile)
    code, out, err = _run(["envs", "list"], capsys)
    assert code == 0, err
    assert "\x1b" not in out and "\u202e" not in out and "\x07" not in out
    assert A in out and "2.17" in out


def test_what_cannot_be_deleted_is_named_not_reported_removed(cache, capsys, monkeypatch):
    """A file the user cannot delete (another owner, a read-only mount): no "removed" line."""
    import shutil

    from hloviz.capture.releases import env_files

    _env(cache, A)
    real_rmtree = shutil.rmtree

    def stuck(path, *a, onerror=None, onexc=None, **k):
        callback = present(onexc or onerror, "rmtree's error callback")
        callback(os.unlink, str(Path(path) / "lib" / "site.py"), PermissionError(13, "Permission denied"))

    monkeypatch.setattr(env_files.shutil, "rmtree", stuck)
    code, out, err = _run(["envs", "remove", A], capsys)
    assert code == 2 and "removed" not in out
    assert "could not delete all of" in err and "site.py: Permission denied" in err
    monkeypatch.setattr(env_files.shutil, "rmtree", real_rmtree)
    code, out, err = _run(["envs", "prune"], capsys)  # the renamed folder is hloviz's leftover: prune finishes it
    assert code == 0 and "removed .tmp-" in out and list(cache.iterdir()) == [cache / ".locks"]
