"""What in the cache of environments is hloviz's, and deleting it (see :mod:`hloviz.capture.releases.envs`).

The cache may be shared with other tools and people: hloviz recognises its own entries by the
names it gives them (:data:`ENV_NAME`, :data:`TEMP_NAME`), reads a manifest as a file anyone
could have written (:func:`manifest_problem`), never follows a link out of the cache, and says
what it could not delete (:func:`delete`).
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from collections.abc import Collection
from pathlib import Path

from hloviz.errors import InputError, visible

__all__ = ["ENV_NAME", "MANIFEST_LIMIT", "TEMP_NAME", "delete", "is_package", "link_target", "manifest_problem"]

#: The names hloviz gives environments (:meth:`EnvManager.name_for`): ``tf2.17-py3.11-1a2b3c4d``.
ENV_NAME = re.compile(r"(?:tf|jax)[0-9]{1,6}(?:\.[0-9]{1,6}){0,2}-py[0-9]{1,3}\.[0-9]{1,3}-[0-9a-f]{8}", re.ASCII)
#: The temporary folders of a build (``.tmp-NAME-PID``) and of a removal (``.tmp-NAME-removing-PID``).
TEMP_NAME = re.compile(rf"\.tmp-(?P<name>{ENV_NAME.pattern})-(?:removing-)?[0-9]{{1,10}}", re.ASCII)

#: Bytes of a manifest read (a real one is under 1 KB).
MANIFEST_LIMIT = 1 << 20

#: What each key of a manifest must be; keys not here are left alone.
_MANIFEST_TYPES: dict[str, type | tuple[type, ...]] = {
    "framework": str, "requested": str, "package": str, "installed": dict, "python": str,
    "python_executable": str, "hloviz": str, "hloviz_source": str, "hloviz_path": str,
    "hloviz_identity": str, "installer": str, "created": str, "build_seconds": (int, float),
}


def manifest_problem(manifest: object, frameworks: Collection[str]) -> str | None:
    """What is wrong with a parsed ``hloviz-env.json``, or None."""
    if not isinstance(manifest, dict):
        return "it is not a JSON object"
    for key, kind in _MANIFEST_TYPES.items():
        value = manifest.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, kind)):
            return f"{key} is not a {'number' if key == 'build_seconds' else 'map' if kind is dict else 'string'}"
    if manifest.get("framework") not in frameworks:
        return "framework is none of " + ", ".join(frameworks)
    for k, v in (manifest.get("installed") or {}).items():
        if not isinstance(v, str):
            return f"installed[{visible(repr(k))}] is not a string"
    texts = [v for v in manifest.values() if isinstance(v, str)]
    texts += [t for pair in (manifest.get("installed") or {}).items() for t in pair]
    for text in texts:
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            return "it holds a lone surrogate, which is not text"
    return None


def is_package(path: str) -> bool:
    """``path`` is a Python package folder (False for one that cannot be looked at: too long a
    name, a NUL in it — a manifest is a file in a cache others may write)."""
    try:
        return (Path(path) / "__init__.py").is_file()
    except (OSError, ValueError):
        return False


def link_target(path: Path) -> str:
    try:
        return visible(os.readlink(path))
    except OSError:
        return "?"


def delete(path: Path) -> None:
    """Delete ``path``: a link or a file alone, a folder with everything in it (links inside are
    deleted, never followed). :class:`InputError` naming ``path`` and the first failure when
    something is left."""
    failures: list[str] = []

    def note(_func: object, failed: str, info: object) -> None:
        err = info[1] if isinstance(info, tuple) else info
        failures.append(f"{failed}: {getattr(err, 'strerror', None) or err}")

    try:
        if path.is_symlink() or not path.is_dir():
            path.unlink()
        else:
            if sys.version_info >= (3, 12):  # onerror is deprecated there; the same callback serves both
                shutil.rmtree(path, onexc=note)
            else:
                shutil.rmtree(path, onerror=note)
    except FileNotFoundError:
        return
    except OSError as err:
        failures.append(f"{path}: {err.strerror or err}")
    if failures and (path.is_symlink() or path.exists()):
        raise InputError(f"could not delete all of {path}: {visible(failures[0])}"
                         + (f" (and {len(failures) - 1} more)" if len(failures) > 1 else ""),
                         hint="check its permissions, then run the command again or delete it yourself")
