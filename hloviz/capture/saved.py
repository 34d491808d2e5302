"""Saved captures and plain HLO files: everything that works without TensorFlow.

A saved capture is a folder holding ``pre.hlo`` (before XLA's optimizations), ``post.hlo``
(after) and ``capture.json`` (where they came from); ``pre.hlo.gz`` / ``post.hlo.gz`` are read
too (big captures kept in a repository). :func:`write_folder` writes it
atomically: everything goes to a temporary folder beside the destination, which is renamed into
place only when complete, so an interrupted ``hloviz dump`` never leaves a half-written capture.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from pathlib import Path

from hloviz.errors import InputError

PRE_NAME = "pre.hlo"
POST_NAME = "post.hlo"
INFO_NAME = "capture.json"

# Signs that a module went through XLA's pipeline (scheduling, fusion, layout assignment).
_POST_SIGNS = (
    (re.compile(r"^HloModule [^\n]*\bis_scheduled=true", re.M), "it is scheduled (is_scheduled=true)"),
    (re.compile(r"\bfusion\(|\bkind=k(?:Loop|Input|Output|Custom)\b"), "it contains fusions"),
    (re.compile(r"^\s*%?fused_computation", re.M), "it contains fused computations"),
)


def is_capture_folder(folder: Path) -> bool:
    return folder.is_dir() and any((folder / n).is_file() for n in (INFO_NAME, PRE_NAME, POST_NAME,
                                                                       PRE_NAME + ".gz", POST_NAME + ".gz"))


def stage_file(folder: Path, name: str) -> Path | None:
    """``folder/name``, or its gzipped form ``name.gz`` (how big captures are kept in a
    repository); None when neither is there."""
    for candidate in (folder / name, folder / f"{name}.gz"):
        if candidate.is_file():
            return candidate
    return None


def read_text(path: Path) -> str:
    """Read an HLO text file (``.gz``/``.xz`` too); a missing file is an InputError."""
    if not path.exists():
        raise InputError(f"file not found: {path}")
    if path.is_dir():
        raise InputError(f"{path} is a folder, not an HLO file")
    try:
        if path.suffix == ".gz":
            import gzip

            return gzip.open(path, "rt", encoding="utf-8").read()
        if path.suffix == ".xz":
            import lzma

            return lzma.open(path, "rt", encoding="utf-8").read()
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{path} is not a text file (HLO text expected)") from None
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from None


def guess_stage(path: Path, text: str) -> tuple[str, str]:
    """``("pre" | "post", why)`` for a lone HLO file: by its name, else by its content."""
    name = path.name.lower()
    if "before_optimizations" in name or name.startswith("pre.") or name.startswith("pre_"):
        return "pre", f"its name says so ({path.name})"
    if "after_optimizations" in name or name.startswith("post.") or name.startswith("post_"):
        return "post", f"its name says so ({path.name})"
    for pattern, why in _POST_SIGNS:
        if pattern.search(text):
            return "post", why
    return "pre", "it has no schedule and no fusions"


def load_folder(folder: Path) -> tuple[str | None, str | None, dict]:
    """``(pre text, post text, info)`` of a saved capture folder."""
    pre_p, post_p, info_p = stage_file(folder, PRE_NAME), stage_file(folder, POST_NAME), folder / INFO_NAME
    if pre_p is None and post_p is None:
        raise InputError(f"{folder} has neither {PRE_NAME} nor {POST_NAME}; not a capture folder")
    info: dict = {}
    if info_p.is_file():
        try:
            info = json.loads(info_p.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise InputError(f"{info_p} is not valid JSON: {exc}") from None
        if not isinstance(info, dict):
            raise InputError(f"{info_p} must hold a JSON object")
    pre = read_text(pre_p) if pre_p is not None else None
    post = read_text(post_p) if post_p is not None else None
    return pre, post, info


def info_json(info: dict) -> str:
    """``capture.json`` text: one key per line, and one line per entry of the big maps
    (source_map, tf_ops), so the file stays readable and diffs well."""
    lines = []
    for key, value in info.items():
        if isinstance(value, dict) and value and all(not isinstance(v, (list, tuple)) for v in value.values()):
            body = ",\n".join(f"  {json.dumps(k)}: {json.dumps(v, default=str)}" for k, v in value.items())
            lines.append(f" {json.dumps(key)}: {{\n{body}\n }}")
        else:
            lines.append(f" {json.dumps(key)}: {json.dumps(value, default=str)}")
    return "{\n" + ",\n".join(lines) + "\n}\n"


def write_folder(out_dir: Path, pre: str | None, post: str | None, info: dict) -> Path:
    """Write a capture folder atomically; replace ``out_dir`` only if it is a capture (or empty)."""
    out_dir = Path(out_dir)
    if out_dir.exists():
        if not out_dir.is_dir():
            raise InputError(f"{out_dir} exists and is not a folder")
        if any(out_dir.iterdir()) and not is_capture_folder(out_dir):
            raise InputError(f"{out_dir} exists and is not a capture folder; refusing to overwrite it",
                             hint="choose another -o folder, or remove it first")
    parent = out_dir.parent if str(out_dir.parent) else Path(".")
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"cannot create {parent}: {exc.strerror or exc}") from None
    try:
        return _write_atomically(out_dir, parent, pre, post, info)
    except OSError as exc:
        raise InputError(f"cannot write the capture to {out_dir}: {exc.strerror or exc}") from None


def _write_atomically(out_dir: Path, parent: Path, pre: str | None, post: str | None, info: dict) -> Path:
    tmp = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.tmp-", dir=parent))
    old: Path | None = None
    try:
        if pre is not None:
            (tmp / PRE_NAME).write_text(pre, encoding="utf-8")
        if post is not None:
            (tmp / POST_NAME).write_text(post, encoding="utf-8")
        (tmp / INFO_NAME).write_text(info_json(info), encoding="utf-8")
        os.chmod(tmp, 0o755)
        if out_dir.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.old-", dir=parent))
            os.rmdir(old)
            os.rename(out_dir, old)
        os.rename(tmp, out_dir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        if old is not None and old.exists() and not out_dir.exists():
            os.rename(old, out_dir)  # put the previous capture back
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
    return out_dir
